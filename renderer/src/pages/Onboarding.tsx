import { lazy, Suspense, useState, type FormEvent } from 'react';
import { errorMessage } from '../api.ts';
import { Loading } from '../components/common.tsx';
import {
  checkNewPassword,
  keystore,
  KeystoreFileError,
  MIN_PASSWORD_LENGTH,
  type NewWallet,
  WrongPasswordError,
} from '../keystore/index.ts';
import { navigate } from '../router.ts';
import type { FoundAccounts, ImportedSecret } from './PhraseFlows.tsx';
import { BackupFileFields } from '../components/BackupFileFields.tsx';

// The phrase screens carry the BIP-39 word list and the derivation: loaded once a choice is made.
const PhraseBackupFlow = lazy(() =>
  import('./PhraseFlows.tsx').then((m) => ({ default: m.PhraseBackupFlow })),
);
const ImportSecret = lazy(() => import('./PhraseFlows.tsx').then((m) => ({ default: m.ImportSecret })));
const AccountScan = lazy(() => import('./PhraseFlows.tsx').then((m) => ({ default: m.AccountScan })));

type Step =
  | { name: 'choose' }
  | { name: 'create'; entropyHex?: string }
  | { name: 'import' }
  | { name: 'backup' }
  | { name: 'scan'; entropyHex: string }
  | { name: 'password'; wallet: NewWallet; back: Step };

/**
 * First run: a new wallet (its recovery phrase shown and checked word by word) or a restored one (a
 * phrase, whose used accounts are looked up on the node, or an old hex seed), then a password.
 */
export function Onboarding() {
  const [step, setStep] = useState<Step>({ name: 'choose' });
  const choose = () => setStep({ name: 'choose' });

  const imported = (secret: ImportedSecret) => {
    if (secret.kind === 'phrase') setStep({ name: 'scan', entropyHex: secret.entropyHex });
    else
      setStep({
        name: 'password',
        wallet: { seedHex: secret.seedHex, label: 'Main account' },
        back: { name: 'import' },
      });
  };
  const found = (entropyHex: string, f: FoundAccounts) =>
    setStep({
      name: 'password',
      wallet: { phraseEntropyHex: entropyHex, indexes: f.indexes, label: 'Main account' },
      back: { name: 'import' },
    });

  return (
    <div className="centered card" data-testid="onboarding">
      {step.name === 'choose' && (
        <div>
          <h1>Welcome to Ledger Node Desktop</h1>
          <p>
            This app runs a full node of the XE ledger. Your accounts’ keys stay on this computer, encrypted
            with a password you choose; the node never sees them.
          </p>
          <p className="muted">
            A wallet holds any number of accounts, all restored from one recovery phrase of 24 words.
          </p>
          <div className="row">
            <button
              type="button"
              className="primary"
              data-testid="onboarding-create"
              onClick={() => setStep({ name: 'create' })}
            >
              Create a new wallet
            </button>
            <button type="button" data-testid="onboarding-import" onClick={() => setStep({ name: 'import' })}>
              Restore from a recovery phrase or seed
            </button>
            <button type="button" data-testid="onboarding-backup" onClick={() => setStep({ name: 'backup' })}>
              Restore from a backup file
            </button>
          </div>
        </div>
      )}
      <Suspense fallback={<Loading />}>
        {step.name === 'create' && (
          <PhraseBackupFlow
            entropyHex={step.entropyHex}
            onDone={(entropyHex) =>
              setStep({
                name: 'password',
                wallet: { phraseEntropyHex: entropyHex, indexes: [0], label: 'Main account' },
                back: { name: 'create', entropyHex },
              })
            }
            onCancel={choose}
          />
        )}
        {step.name === 'import' && <ImportSecret onDone={imported} onCancel={choose} />}
        {step.name === 'scan' && (
          <AccountScan
            entropyHex={step.entropyHex}
            onDone={(f) => found(step.entropyHex, f)}
            onCancel={() => setStep({ name: 'import' })}
          />
        )}
      </Suspense>
      {step.name === 'password' && <PasswordStep wallet={step.wallet} onBack={() => setStep(step.back)} />}
      {step.name === 'backup' && <RestoreBackup onBack={choose} />}
    </div>
  );
}

function PasswordStep({ wallet, onBack }: { wallet: NewWallet; onBack(): void }) {
  const [label, setLabel] = useState(wallet.label);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const problem = checkNewPassword(password, confirm);
  const count = 'indexes' in wallet ? wallet.indexes.length : 1;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (problem) return;
    setBusy(true);
    setError(undefined);
    try {
      await keystore().create(password, confirm, { ...wallet, label });
      navigate('wallet');
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} data-testid="password-form" noValidate>
      <h1>Protect it with a password</h1>
      <p className="muted">
        The password encrypts your keys on this computer. It is not sent anywhere and cannot be recovered:
        what you wrote down is the backup.
      </p>
      <label className="field">
        <span>{count > 1 ? 'Label of the first account' : 'Account label'}</span>
        <input
          value={label}
          maxLength={40}
          onChange={(e) => setLabel(e.target.value)}
          data-testid="account-label"
        />
      </label>
      {count > 1 && (
        <p className="hint" data-testid="password-accounts">
          The wallet opens with {count} accounts; the others are named Account 2, Account 3, … and can be
          renamed.
        </p>
      )}
      <label className="field">
        <span>Password (at least {MIN_PASSWORD_LENGTH} characters)</span>
        <input
          type="password"
          value={password}
          autoComplete="new-password"
          onChange={(e) => setPassword(e.target.value)}
          data-testid="new-password"
          aria-invalid={tried && problem !== undefined && [...password].length < MIN_PASSWORD_LENGTH}
        />
      </label>
      <label className="field">
        <span>Password again</span>
        <input
          type="password"
          value={confirm}
          autoComplete="new-password"
          onChange={(e) => setConfirm(e.target.value)}
          data-testid="confirm-password"
          aria-invalid={tried && password !== confirm}
        />
      </label>
      {tried && problem && (
        <div className="field-error" data-testid="password-error">
          {problem}
        </div>
      )}
      {error && (
        <div className="error box" role="alert" data-testid="error">
          {error}
        </div>
      )}
      <div className="row">
        <button type="button" onClick={onBack} disabled={busy}>
          Back
        </button>
        <button type="submit" className="primary" disabled={busy} data-testid="create-wallet">
          {busy ? 'Encrypting…' : 'Create wallet'}
        </button>
      </div>
    </form>
  );
}

/** A backup file (Settings' export) becomes this computer's wallet, with the password it was made with. */
function RestoreBackup({ onBack }: { onBack(): void }) {
  const [file, setFile] = useState<File>();
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) {
      setError('Choose the backup file first.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await keystore().restoreBackup(await file.text(), password);
      navigate('wallet');
    } catch (err) {
      setError(
        err instanceof WrongPasswordError
          ? 'Wrong password for this backup file: it is the password the wallet had when the backup was made.'
          : err instanceof KeystoreFileError
            ? `${file.name} cannot be imported: ${err.message}`
            : errorMessage(err),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} noValidate data-testid="restore-backup">
      <h1>Restore from a backup file</h1>
      <p className="muted">
        Choose a backup file exported from Settings and type the password the wallet had then. The wallet
        keeps that password; you can change it in Settings.
      </p>
      <BackupFileFields
        password={password}
        onFile={(f) => {
          setFile(f);
          setError(undefined);
        }}
        onPassword={(p) => {
          setPassword(p);
          setError(undefined);
        }}
        autoComplete="current-password"
        testIds={{ file: 'restore-file', password: 'restore-password' }}
      />
      {error && (
        <div className="error box" role="alert" data-testid="restore-error">
          {error}
        </div>
      )}
      <div className="row">
        <button type="button" onClick={onBack} disabled={busy}>
          Back
        </button>
        <button type="submit" className="primary" disabled={busy} data-testid="restore-submit">
          {busy ? 'Decrypting…' : 'Restore'}
        </button>
      </div>
    </form>
  );
}
