import { useState, type FormEvent } from 'react';
import { errorMessage } from '../api.ts';
import { Amount, short } from '../components/common.tsx';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import {
  type AccountInfo,
  type BackupImportReport,
  keystore,
  KeystoreFileError,
  useKeystore,
  WrongPasswordError,
} from '../keystore/index.ts';
import { useBalances } from '../wallet/queries.ts';
import { PhraseWords } from './PhraseFlows.tsx';
import '../components/phrase.css';
import { BackupFileFields } from '../components/BackupFileFields.tsx';

/**
 * Settings' wallet section, behind the password even while unlocked (someone at an unlocked computer
 * must not read the phrase or take a backup): the recovery phrase again, an encrypted backup file out
 * and in, and hiding or removing accounts (a removed phrase account comes back by its number).
 */
export function WalletSecurity() {
  const ks = useKeystore();
  const [open, setOpen] = useState(false);
  if (ks.status !== 'unlocked') return null;
  return (
    <div className="card" data-testid="wallet-security">
      <h2>Recovery phrase, backups and accounts</h2>
      {open ? <Opened onClose={() => setOpen(false)} /> : <PasswordGate onOpen={() => setOpen(true)} />}
    </div>
  );
}

function PasswordGate({ onOpen }: { onOpen(): void }) {
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await keystore().verifyPassword(password);
      onOpen();
    } catch (err) {
      setError(err instanceof WrongPasswordError ? 'Wrong password.' : errorMessage(err));
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate data-testid="security-gate" style={{ maxWidth: 360 }}>
      <p className="muted">
        Enter your password again to see the recovery phrase, export or import a backup, or hide and remove
        accounts.
      </p>
      <label className="field">
        <span>Password</span>
        <input
          type="password"
          value={password}
          autoComplete="current-password"
          onChange={(e) => {
            setPassword(e.target.value);
            setError(undefined);
          }}
          aria-invalid={error !== undefined}
          data-testid="security-password"
        />
      </label>
      {error && (
        <div className="error box" role="alert" data-testid="security-error">
          {error}
        </div>
      )}
      <button type="submit" disabled={busy || password === ''} data-testid="security-open">
        {busy ? 'Checking…' : 'Continue'}
      </button>
    </form>
  );
}

function Opened({ onClose }: { onClose(): void }) {
  return (
    <div data-testid="security-open-section">
      <Phrase />
      <Backup />
      <Accounts />
      <button type="button" onClick={onClose} data-testid="security-close">
        Close this section
      </button>
    </div>
  );
}

function Phrase() {
  const ks = useKeystore();
  const [entropyHex, setEntropyHex] = useState<string>();
  const [error, setError] = useState<string>();
  if (!ks.hasPhrase) {
    return (
      <section data-testid="phrase-none">
        <h3>Recovery phrase</h3>
        <p className="muted">
          This wallet was made before recovery phrases: each of its accounts is backed up by its own seed. It
          gets a phrase when you add a new account; keep a backup file of it (below) meanwhile.
        </p>
      </section>
    );
  }
  return (
    <section>
      <h3>Recovery phrase</h3>
      {entropyHex ? (
        <>
          <PhraseWords entropyHex={entropyHex} testId="phrase-again" />
          <button type="button" onClick={() => setEntropyHex(undefined)} data-testid="phrase-hide">
            Hide the phrase
          </button>
        </>
      ) : (
        <button
          type="button"
          onClick={() => {
            try {
              setEntropyHex(keystore().phraseEntropyHex());
            } catch (e) {
              setError(errorMessage(e));
            }
          }}
          data-testid="phrase-view"
        >
          Show the recovery phrase
        </button>
      )}
      {error && (
        <div className="error box" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

/** "ledger-wallet-backup-2026-11-24.json": what it is and when, sorted by date in a folder. */
export function backupFileName(date = new Date()): string {
  return `ledger-wallet-backup-${date.toISOString().slice(0, 10)}.json`;
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function reportText(r: BackupImportReport): string {
  const parts = [
    r.added === 0
      ? 'Nothing new in this backup: every account in it is already in this wallet.'
      : `Added ${r.added} ${r.added === 1 ? 'account' : 'accounts'} from the backup.`,
  ];
  if (r.added > 0 && r.present > 0)
    parts.push(`${r.present} ${r.present === 1 ? 'was' : 'were'} already here.`);
  if (r.adoptedPhrase) parts.push('The backup’s recovery phrase is now this wallet’s phrase.');
  if (r.otherPhrase === 1)
    parts.push('1 account comes from another recovery phrase and was added as an imported account.');
  else if (r.otherPhrase > 1)
    parts.push(
      `${r.otherPhrase} accounts come from another recovery phrase and were added as imported accounts.`,
    );
  return parts.join(' ');
}

function Backup() {
  const [file, setFile] = useState<File>();
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string }>();
  const [exported, setExported] = useState<string>();

  const exportNow = () => {
    try {
      const name = backupFileName();
      download(name, keystore().exportBackup());
      setExported(name);
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };

  const importNow = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) {
      setMessage({ ok: false, text: 'Choose the backup file first.' });
      return;
    }
    setBusy(true);
    setMessage(undefined);
    try {
      const report = await keystore().importBackup(await file.text(), password);
      setMessage({ ok: true, text: reportText(report) });
      setPassword('');
    } catch (err) {
      setMessage({
        ok: false,
        text:
          err instanceof WrongPasswordError
            ? 'Wrong password for this backup file (the password it was made with, which may be an older one).'
            : err instanceof KeystoreFileError
              ? `${file.name} cannot be imported: ${err.message}`
              : errorMessage(err),
      });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h3>Backup file</h3>
      <p className="muted">
        The backup holds the recovery phrase, imported accounts, labels and lease access keys, encrypted with
        your current password. Keep it somewhere other than this computer.
      </p>
      <button type="button" onClick={exportNow} data-testid="backup-export">
        Export an encrypted backup
      </button>
      {exported && (
        <p className="success box" role="status" data-testid="backup-exported">
          Saved as {exported}.
        </p>
      )}
      <form
        onSubmit={(e) => void importNow(e)}
        noValidate
        data-testid="backup-import"
        style={{ maxWidth: 420 }}
      >
        <h4>Import a backup</h4>
        <BackupFileFields
          password={password}
          onFile={(f) => {
            setFile(f);
            setMessage(undefined);
          }}
          onPassword={setPassword}
          autoComplete="off"
          testIds={{ file: 'backup-file', password: 'backup-password' }}
        />
        <button type="submit" disabled={busy} data-testid="backup-import-submit">
          {busy ? 'Decrypting…' : 'Import'}
        </button>
      </form>
      {message && (
        <div className={`${message.ok ? 'success' : 'error'} box`} role="alert" data-testid="backup-message">
          {message.text}
        </div>
      )}
    </section>
  );
}

function Accounts() {
  const ks = useKeystore();
  const [removing, setRemoving] = useState<AccountInfo>();
  const [message, setMessage] = useState<{ ok: boolean; text: string }>();
  const [restoreNumber, setRestoreNumber] = useState('');
  const act = (fn: () => string) => {
    try {
      setMessage({ ok: true, text: fn() });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  const restore = (e: FormEvent) => {
    e.preventDefault();
    const n = Number(restoreNumber);
    act(() => {
      if (!/^\d+$/.test(restoreNumber.trim()) || n < 1)
        throw new Error('Type the account’s number (1, 2, 3, …).');
      const a = keystore().restoreAccount(n - 1);
      setRestoreNumber('');
      return `Account ${n} is back as “${a.label}”.`;
    });
  };
  return (
    <section>
      <h3>Accounts</h3>
      <table data-testid="security-accounts">
        <thead>
          <tr>
            <th>Account</th>
            <th>Kind</th>
            <th className="num">Balance</th>
            <th className="num">Actions</th>
          </tr>
        </thead>
        <tbody>
          {ks.allAccounts.map((a) => (
            <AccountRow
              key={a.address}
              account={a}
              onHide={() =>
                act(() => {
                  keystore().setHidden(a.address, !a.hidden);
                  return a.hidden ? `“${a.label}” is shown again.` : `“${a.label}” is hidden from the lists.`;
                })
              }
              onRemove={() => setRemoving(a)}
            />
          ))}
        </tbody>
      </table>
      {message && (
        <div
          className={`${message.ok ? 'success' : 'error'} box`}
          role="alert"
          data-testid="accounts-message"
        >
          {message.text}
        </div>
      )}
      {ks.hasPhrase && (
        <form
          onSubmit={restore}
          noValidate
          className="row"
          style={{ alignItems: 'flex-end' }}
          data-testid="account-restore"
        >
          <label className="field" style={{ maxWidth: 380, marginBottom: 0 }}>
            <span>Bring back a removed phrase account by its number</span>
            <input
              inputMode="numeric"
              value={restoreNumber}
              onChange={(e) => setRestoreNumber(e.target.value)}
              data-testid="account-restore-number"
            />
          </label>
          <button type="submit" data-testid="account-restore-submit">
            Bring back
          </button>
        </form>
      )}
      {removing && (
        <RemoveDialog
          account={removing}
          onDone={(text) => {
            setRemoving(undefined);
            if (text) setMessage({ ok: true, text });
          }}
        />
      )}
    </section>
  );
}

function kindText(a: AccountInfo): string {
  return a.kind === 'derived' ? `phrase account ${a.index! + 1}` : 'imported seed';
}

function AccountRow({
  account: a,
  onHide,
  onRemove,
}: {
  account: AccountInfo;
  onHide(): void;
  onRemove(): void;
}) {
  const balances = useBalances(a.address);
  return (
    <tr data-testid="security-account" data-address={a.address} data-hidden={a.hidden ? 'true' : 'false'}>
      <td>
        {a.label} <span className="mono small muted">{short(a.address)}</span>
        {a.hidden && (
          <>
            {' '}
            <span className="badge">hidden</span>
          </>
        )}
      </td>
      <td className="small">{kindText(a)}</td>
      <td className="num">
        <Amount micro={balances.data ? (balances.data.balances.XE ?? 0n) : undefined} asset="XE" />
      </td>
      <td className="num">
        <div className="row" style={{ justifyContent: 'flex-end' }}>
          <button type="button" onClick={onHide} data-testid="account-hide">
            {a.hidden ? 'Show' : 'Hide'}
          </button>
          <button type="button" className="danger" onClick={onRemove} data-testid="account-remove">
            Remove
          </button>
        </div>
      </td>
    </tr>
  );
}

function RemoveDialog({ account: a, onDone }: { account: AccountInfo; onDone(message?: string): void }) {
  const balances = useBalances(a.address);
  const [error, setError] = useState<string>();
  const assets = Object.entries(balances.data?.balances ?? {}).filter(([, v]) => v > 0n);
  return (
    <ConfirmDialog
      open
      title={`Remove “${a.label}”?`}
      confirmLabel="Remove account"
      onCancel={() => onDone()}
      onConfirm={() => {
        try {
          keystore().removeAccount(a.address);
          onDone(`“${a.label}” was removed from this wallet.`);
        } catch (e) {
          setError(errorMessage(e));
        }
      }}
      testId="remove-dialog"
    >
      <p className="mono small">{a.address}</p>
      <p data-testid="remove-balance">
        {balances.isPending ? (
          'Reading its balance…'
        ) : assets.length === 0 ? (
          'It holds nothing.'
        ) : (
          <>
            It holds{' '}
            {assets.map(([asset, v], i) => (
              <span key={asset}>
                {i > 0 && ', '}
                <Amount micro={v} asset={asset} />
              </span>
            ))}
            : the funds stay on the ledger, but this wallet can no longer spend them.
          </>
        )}
      </p>
      <p data-testid="remove-comeback">
        {a.kind === 'derived'
          ? `It is account ${a.index! + 1} of your recovery phrase: it can come back with that number (Settings) or by restoring the phrase.`
          : 'It is an imported account: only its own seed or a backup file made before removing it can bring it back.'}
      </p>
      {error && (
        <div className="error box" role="alert">
          {error}
        </div>
      )}
    </ConfirmDialog>
  );
}
