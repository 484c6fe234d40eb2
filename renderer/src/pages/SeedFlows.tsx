import { lazy, Suspense, useState, type FormEvent } from 'react';
import { Loading } from '../components/common.tsx';
import { parseSeedInput } from '../keystore/seed.ts';

/**
 * The wallet page's entry points for adding an account, light enough for the first screen: the
 * phrase screens (word list, derivation) load only when opened, from PhraseFlows.tsx.
 */
const NewAccountFlow = lazy(() => import('./PhraseFlows.tsx').then((m) => ({ default: m.NewAccountFlow })));

/**
 * "New account": the wallet's next phrase account (a wallet made before phrases first gets its
 * phrase, shown and checked). It adds the account itself and never calls onDone; the signature is the
 * one the wallet page has always used.
 */
export function SeedBackupFlow({ onCancel }: { onDone(seedHex: string): void; onCancel(): void }) {
  return (
    <Suspense fallback={<Loading />}>
      <NewAccountFlow onCancel={onCancel} />
    </Suspense>
  );
}

/** Import of one account from its 64-character hex seed (an imported account, as before phrases). */
export function ImportSeed({ onDone, onCancel }: { onDone(seedHex: string): void; onCancel(): void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = parseSeedInput(text);
    if ('error' in r) setError(r.error);
    else onDone(r.seedHex);
  };
  return (
    <form onSubmit={submit} data-testid="seed-import" noValidate>
      <h1>Import an account</h1>
      <p className="muted">
        An account with its own seed is kept as an imported account: your recovery phrase does not cover it,
        so keep its seed, or export a backup file (Settings) after importing it.
      </p>
      <label className="field">
        <span>Seed (64 hexadecimal characters; spaces and dashes are ignored)</span>
        <textarea
          className="mono"
          rows={3}
          value={text}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={error !== undefined}
          data-testid="import-seed-input"
          onChange={(e) => {
            setText(e.target.value);
            setError(undefined);
          }}
        />
        {error && (
          <span className="field-error" data-testid="import-seed-error">
            {error}
          </span>
        )}
      </label>
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
