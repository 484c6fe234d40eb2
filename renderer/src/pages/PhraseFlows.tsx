import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { accountSeedFromWalletNode } from '../../../node-core/protocol/hd-derivation.ts';
import { bytesToHex, hexToBytes } from '../../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../../node-core/protocol/keys.ts';
import {
  entropyToPhrase,
  MnemonicError,
  newPhraseEntropy,
  PHRASE_LENGTHS,
  phraseToEntropy,
  walletNodeOfEntropyAsync,
} from '../../../node-core/protocol/mnemonic.ts';
import { api, errorMessage, isNodeError } from '../api.ts';
import { PhraseInput } from '../components/PhraseInput.tsx';
import { keystore, useKeystore } from '../keystore/index.ts';
import { type ScanResult, scanAccounts, SCAN_GAP } from '../keystore/scan.ts';
import { parsePhraseHex, parseSeedInput, phraseCheckMessage } from '../keystore/seed.ts';
import { navigate } from '../router.ts';
import { updateSettings } from '../settings.ts';
import '../components/phrase.css';

/**
 * The recovery phrase's screens, loaded on demand with the BIP-39 word list: the phrase shown as 24
 * numbered words (hex behind "Show as hex") and a backup check of every word; import of a phrase or
 * of an old hex account seed; the search for a restored phrase's used accounts; "New account".
 */

/** The words of a phrase in a numbered grid, with its hex form one click away. */
export function PhraseWords({
  entropyHex,
  testId = 'phrase-words',
}: {
  entropyHex: string;
  testId?: string;
}) {
  const words = useMemo(() => entropyToPhrase(hexToBytes(entropyHex)), [entropyHex]);
  const [hex, setHex] = useState(false);
  return (
    <div data-testid={testId}>
      <ol className="phrase-shown" aria-label="Recovery phrase">
        {words.map((w, i) => (
          <li className="seed-group" key={i}>
            <span className="n" aria-hidden="true">
              {i + 1}
            </span>
            <span data-testid={`phrase-shown-${i + 1}`}>{w}</span>
          </li>
        ))}
      </ol>
      <label className="check small">
        <input
          type="checkbox"
          checked={hex}
          onChange={(e) => setHex(e.target.checked)}
          data-testid="phrase-show-hex"
        />
        Show as hex
      </label>
      {hex && (
        <p className="mono phrase-hex" data-testid="phrase-hex">
          {entropyHex}
        </p>
      )}
    </div>
  );
}

/**
 * A new wallet's phrase, backed up: shown, "I wrote it down", then every word typed back. The
 * phrase is made here (or passed in, to show it again after "Back").
 */
export function PhraseBackupFlow({
  entropyHex: given,
  onDone,
  onCancel,
  intro,
}: {
  entropyHex?: string;
  onDone(entropyHex: string): void;
  onCancel(): void;
  intro?: ReactNode;
}) {
  const entropyHex = useMemo(() => given ?? bytesToHex(newPhraseEntropy()), [given]);
  const phrase = useMemo(() => entropyToPhrase(hexToBytes(entropyHex)), [entropyHex]);
  const [step, setStep] = useState<'show' | 'check'>('show');
  const [written, setWritten] = useState(false);
  const [typed, setTyped] = useState<string[]>(() => phrase.map(() => ''));
  const [problem, setProblem] = useState<{ text: string; word: number }>();

  if (step === 'show') {
    return (
      <div data-testid="seed-backup">
        <h1>Your recovery phrase</h1>
        {intro}
        <p>
          Write these {phrase.length} words down on paper, in order. They are the key to every account of this
          wallet: anyone with them controls the accounts, and with them you can restore the wallet on any
          computer. Keep them private and safe.
        </p>
        <PhraseWords entropyHex={entropyHex} />
        <label className="check">
          <input
            type="checkbox"
            checked={written}
            onChange={(e) => setWritten(e.target.checked)}
            data-testid="seed-written"
          />
          I wrote the {phrase.length} words down and will keep them safe.
        </label>
        <div className="row">
          <button type="button" onClick={onCancel}>
            Back
          </button>
          <button
            type="button"
            className="primary"
            disabled={!written}
            onClick={() => setStep('check')}
            data-testid="seed-continue"
          >
            Continue
          </button>
        </div>
      </div>
    );
  }

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const text = phraseCheckMessage(typed, phrase);
    if (text === undefined) onDone(entropyHex);
    else setProblem({ text, word: typed.findIndex((w, i) => w.trim().toLowerCase() !== phrase[i]) + 1 });
  };
  return (
    <form onSubmit={submit} data-testid="seed-confirm" noValidate>
      <h1>Check your backup</h1>
      <p>
        Type the {phrase.length} words from what you wrote down (the phrase is no longer shown). You can paste
        the whole phrase into the first box.
      </p>
      <PhraseInput
        words={typed}
        onChange={(w) => {
          setTyped(w);
          setProblem(undefined);
        }}
        wrong={problem ? [problem.word] : []}
        testId="phrase-check"
      />
      {problem && (
        <div className="error box" role="alert" data-testid="phrase-check-error">
          {problem.text}
        </div>
      )}
      <div className="row">
        <button type="button" onClick={() => setStep('show')} data-testid="phrase-show-again">
          Show the phrase again
        </button>
        <button type="submit" className="primary" data-testid="seed-confirm-submit">
          Confirm
        </button>
      </div>
    </form>
  );
}

/** What an import gives: a phrase (the whole wallet) or a hex seed (one account, as before phrases). */
export type ImportedSecret = { kind: 'phrase'; entropyHex: string } | { kind: 'seed'; seedHex: string };

/** A phrase, word by word or pasted; or a hex seed: an old account seed or a phrase's hex form. */
export function ImportSecret({
  onDone,
  onCancel,
  title = 'Restore a wallet',
}: {
  onDone(secret: ImportedSecret): void;
  onCancel(): void;
  title?: string;
}) {
  const [mode, setMode] = useState<'phrase' | 'hex'>('phrase');
  const [count, setCount] = useState(24);
  const [words, setWords] = useState<string[]>(() => Array<string>(24).fill(''));
  const [hex, setHex] = useState('');
  const [hexKind, setHexKind] = useState<'seed' | 'phrase'>('seed');
  const [error, setError] = useState<{ text: string; word?: number }>();

  const resize = (n: number) => {
    setCount(n);
    setWords((w) => Array.from({ length: n }, (_, i) => w[i] ?? ''));
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (mode === 'phrase') {
      const missing = words.findIndex((w) => w.trim() === '');
      if (missing >= 0) {
        setError({ text: `Word ${missing + 1} is missing.`, word: missing + 1 });
        return;
      }
      try {
        onDone({
          kind: 'phrase',
          entropyHex: bytesToHex(phraseToEntropy(words.map((w) => w.trim().toLowerCase()))),
        });
      } catch (err) {
        setError({ text: errorMessage(err), word: err instanceof MnemonicError ? err.position : undefined });
      }
      return;
    }
    if (hexKind === 'seed') {
      const r = parseSeedInput(hex);
      if ('error' in r) setError({ text: r.error });
      else onDone({ kind: 'seed', seedHex: r.seedHex });
    } else {
      const r = parsePhraseHex(hex);
      if ('error' in r) setError({ text: r.error });
      else onDone({ kind: 'phrase', entropyHex: r.entropyHex });
    }
  };

  return (
    <form onSubmit={submit} data-testid="seed-import" noValidate>
      <h1>{title}</h1>
      <div className="row" role="radiogroup" aria-label="What you have">
        <label className="check">
          <input
            type="radio"
            name="import-mode"
            checked={mode === 'phrase'}
            onChange={() => {
              setMode('phrase');
              setError(undefined);
            }}
            data-testid="import-mode-phrase"
          />
          A recovery phrase (12 to 24 words)
        </label>
        <label className="check">
          <input
            type="radio"
            name="import-mode"
            checked={mode === 'hex'}
            onChange={() => {
              setMode('hex');
              setError(undefined);
            }}
            data-testid="import-mode-hex"
          />
          A hexadecimal seed
        </label>
      </div>
      {mode === 'phrase' ? (
        <>
          <label className="field" style={{ maxWidth: 220 }}>
            <span>Number of words</span>
            <select
              value={count}
              onChange={(e) => resize(Number(e.target.value))}
              data-testid="import-word-count"
            >
              {PHRASE_LENGTHS.map((n) => (
                <option key={n} value={n}>
                  {n} words
                </option>
              ))}
            </select>
          </label>
          <PhraseInput
            words={words}
            onChange={(w) => {
              setWords(w);
              setError(undefined);
            }}
            onPasteLength={(n) => setCount(n)}
            wrong={error?.word ? [error.word] : []}
            testId="import-phrase"
          />
          <p className="hint">Paste the whole phrase into the first box, or type it word by word.</p>
        </>
      ) : (
        <>
          <label className="field">
            <span>Seed (hexadecimal; spaces and dashes are ignored)</span>
            <textarea
              className="mono"
              rows={3}
              value={hex}
              autoComplete="off"
              spellCheck={false}
              aria-invalid={error !== undefined}
              data-testid="import-seed-input"
              onChange={(e) => {
                setHex(e.target.value);
                setError(undefined);
              }}
            />
          </label>
          <div role="radiogroup" aria-label="What the hex is">
            <label className="check">
              <input
                type="radio"
                name="hex-kind"
                checked={hexKind === 'seed'}
                onChange={() => setHexKind('seed')}
                data-testid="hex-kind-seed"
              />
              The seed of one account (64 characters, from before recovery phrases): it is added as an
              imported account.
            </label>
            <label className="check">
              <input
                type="radio"
                name="hex-kind"
                checked={hexKind === 'phrase'}
                onChange={() => setHexKind('phrase')}
                data-testid="hex-kind-phrase"
              />
              A recovery phrase in hex (what “Show as hex” shows): the whole wallet is restored.
            </label>
          </div>
        </>
      )}
      {error && (
        <div className="error box" role="alert" data-testid="import-seed-error">
          {error.text}
        </div>
      )}
      <div className="row">
        <button type="button" onClick={onCancel}>
          Back
        </button>
        <button type="submit" className="primary" data-testid="import-seed-submit">
          Continue
        </button>
      </div>
    </form>
  );
}

/** Is an address used: it has a chain on the node, or sends wait for it? */
async function usedOnNode(address: string): Promise<boolean> {
  if ((await api().chain(address, 0, 1)) !== undefined) return true;
  try {
    return (await api().pending(address)).length > 0;
  } catch (e) {
    if (isNodeError(e) && e.status === 404) return false;
    throw e;
  }
}

export interface FoundAccounts extends ScanResult {
  addresses: string[];
}

/** The search for a restored phrase's used accounts, with its progress, then what it found. */
export function AccountScan({
  entropyHex,
  onDone,
  onCancel,
}: {
  entropyHex: string;
  onDone(found: FoundAccounts): void;
  onCancel(): void;
}) {
  const [progress, setProgress] = useState<{ index: number; used: number }>({ index: 0, used: 0 });
  const [result, setResult] = useState<FoundAccounts>();
  const [error, setError] = useState<string>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const ctl = new AbortController();
    const walletP = walletNodeOfEntropyAsync(hexToBytes(entropyHex));
    const addresses: string[] = [];
    const addressOf = async (i: number) => {
      const seed = accountSeedFromWalletNode(await walletP, i);
      addresses[i] = keyPairFromSeed(seed).address;
      seed.fill(0);
      return addresses[i];
    };
    setResult(undefined);
    setError(undefined);
    scanAccounts({
      addressOf,
      isUsed: usedOnNode,
      signal: ctl.signal,
      onProgress: (p) => setProgress({ index: p.index, used: p.used.length }),
    })
      .then((r) => {
        if (!ctl.signal.aborted) setResult({ ...r, addresses: r.indexes.map((i) => addresses[i]!) });
      })
      .catch((e: unknown) => {
        if (!ctl.signal.aborted) setError(errorMessage(e));
      })
      .finally(() =>
        walletP.then(
          (w) => {
            w.key.fill(0);
            w.chainCode.fill(0);
          },
          () => {},
        ),
      );
    return () => ctl.abort();
  }, [entropyHex, attempt]);

  if (error) {
    return (
      <div data-testid="scan">
        <h1>Looking for your accounts</h1>
        <div className="error box" role="alert" data-testid="scan-error">
          Could not ask the node which accounts were used: {error}
        </div>
        <div className="row">
          <button type="button" onClick={onCancel}>
            Back
          </button>
          <button type="button" onClick={() => setAttempt((a) => a + 1)} data-testid="scan-retry">
            Try again
          </button>
        </div>
      </div>
    );
  }
  if (!result) {
    return (
      <div data-testid="scan" aria-busy="true">
        <h1>Looking for your accounts</h1>
        <p role="status" data-testid="scan-progress">
          Checking account {progress.index + 1}… {progress.used} used so far.
        </p>
        <progress aria-label="Search progress" />
        <p className="hint">
          The accounts of the phrase are checked in order until {SCAN_GAP} in a row were never used.
        </p>
        <div className="row">
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </div>
    );
  }
  const unusedFrom = result.checked - SCAN_GAP + 1;
  return (
    <div data-testid="scan-result">
      <h1>Your accounts</h1>
      <p data-testid="scan-summary">
        {result.used.length === 0
          ? 'None of this phrase’s accounts has been used yet: the wallet starts with its first account.'
          : `Found ${result.used.length} used ${result.used.length === 1 ? 'account' : 'accounts'}.`}{' '}
        {result.stoppedBy === 'gap'
          ? `The search stopped after ${SCAN_GAP} unused accounts in a row (accounts ${unusedFrom} to ${result.checked}).`
          : `The search stopped after ${result.checked} accounts.`}{' '}
        “New account” adds the next one later.
      </p>
      <table>
        <thead>
          <tr>
            <th>Account</th>
            <th>Address</th>
            <th>State</th>
          </tr>
        </thead>
        <tbody>
          {result.indexes.map((i, k) => (
            <tr key={i} data-testid="scan-account" data-index={i}>
              <td>{i + 1}</td>
              <td className="mono small">{result.addresses[k]}</td>
              <td>{result.used.includes(i) ? 'used' : 'new'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="row">
        <button type="button" onClick={onCancel}>
          Back
        </button>
        <button type="button" className="primary" onClick={() => onDone(result)} data-testid="scan-continue">
          Continue
        </button>
      </div>
    </div>
  );
}

/**
 * "New account": the phrase's next index, backed up already by the written phrase. A wallet made
 * before phrases has none: it gets one first (shown and checked), and its old accounts stay imported.
 */
export function NewAccountFlow({ onCancel }: { onCancel(): void }) {
  const ks = useKeystore();
  const [newPhrase, setNewPhrase] = useState<string>();
  const [label, setLabel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  if (!ks.hasPhrase && !newPhrase) {
    return (
      <PhraseBackupFlow
        onDone={setNewPhrase}
        onCancel={onCancel}
        intro={
          <p className="warn box" data-testid="phrase-first">
            This wallet was made before recovery phrases. New accounts come from one phrase, made now: write
            it down once and it backs up every new account. Your existing accounts stay as they are, each
            backed up by its own seed.
          </p>
        }
      />
    );
  }
  const index = newPhrase ? 0 : ks.nextIndex;
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (newPhrase) await keystore().adoptPhrase(newPhrase);
      const a = keystore().newAccount(label);
      updateSettings({ selectedAccount: a.address });
      navigate('wallet');
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void save(e)} data-testid="new-account" noValidate>
      <h1>New account</h1>
      <p className="muted" data-testid="new-account-index">
        Account {index + 1} of your recovery phrase: the phrase you wrote down already backs it up.
      </p>
      <label className="field">
        <span>Label</span>
        <input
          value={label}
          maxLength={40}
          placeholder={`Account ${index + 1}`}
          onChange={(e) => setLabel(e.target.value)}
          autoFocus
          data-testid="account-label"
        />
      </label>
      {error && (
        <div className="error box" role="alert" data-testid="error">
          {error}
        </div>
      )}
      <div className="row">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={busy} data-testid="add-account-save">
          Add account
        </button>
      </div>
    </form>
  );
}
