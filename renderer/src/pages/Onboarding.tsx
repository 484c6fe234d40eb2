import { useState, type FormEvent } from 'react';
import { errorMessage } from '../api.ts';
import { checkNewPassword, keystore, MIN_PASSWORD_LENGTH } from '../keystore/index.ts';
import { navigate } from '../router.ts';
import { ImportSeed, SeedBackupFlow } from './SeedFlows.tsx';

/** First run: create an account (with a confirmed backup) or import one, then set a password. */
export function Onboarding() {
  const [step, setStep] = useState<'choose' | 'create' | 'import' | 'password'>('choose');
  const [seedHex, setSeedHex] = useState<string>();
  const [origin, setOrigin] = useState<'create' | 'import'>('create');

  const gotSeed = (hex: string) => {
    setSeedHex(hex);
    setStep('password');
  };

  return (
    <div className="centered card" data-testid="onboarding">
      {step === 'choose' && (
        <div>
          <h1>Welcome to Ledger Node Desktop</h1>
          <p>
            This app runs a full node of the XE ledger. Your accounts’ keys stay on this computer, encrypted
            with a password you choose; the node never sees them.
          </p>
          <div className="row">
            <button
              type="button"
              className="primary"
              data-testid="onboarding-create"
              onClick={() => {
                setOrigin('create');
                setStep('create');
              }}
            >
              Create a new account
            </button>
            <button
              type="button"
              data-testid="onboarding-import"
              onClick={() => {
                setOrigin('import');
                setStep('import');
              }}
            >
              Import an account from its seed
            </button>
          </div>
        </div>
      )}
      {step === 'create' && <SeedBackupFlow onDone={gotSeed} onCancel={() => setStep('choose')} />}
      {step === 'import' && <ImportSeed onDone={gotSeed} onCancel={() => setStep('choose')} />}
      {step === 'password' && seedHex && <PasswordStep seedHex={seedHex} onBack={() => setStep(origin)} />}
    </div>
  );
}

function PasswordStep({ seedHex, onBack }: { seedHex: string; onBack(): void }) {
  const [label, setLabel] = useState('Main account');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const problem = checkNewPassword(password, confirm);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (problem) return;
    setBusy(true);
    setError(undefined);
    try {
      await keystore().create(password, confirm, { seedHex, label });
      navigate('wallet');
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} data-testid="password-form" noValidate>
      <h2>Protect it with a password</h2>
      <p className="muted">
        The password encrypts your keys in this browser’s storage. It is not sent anywhere and cannot be
        recovered: your written seed is the backup.
      </p>
      <label className="field">
        <span>Account label</span>
        <input
          value={label}
          maxLength={40}
          onChange={(e) => setLabel(e.target.value)}
          data-testid="account-label"
        />
      </label>
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
