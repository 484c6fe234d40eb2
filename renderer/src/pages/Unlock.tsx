import { useState, type FormEvent } from 'react';
import { errorMessage } from '../api.ts';
import { keystore, useKeystore, WrongPasswordError } from '../keystore/index.ts';

/** The lock screen: the password decrypts the keystore in this page's memory. */
export function Unlock() {
  const ks = useKeystore();
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [showErase, setShowErase] = useState(false);
  const [eraseText, setEraseText] = useState('');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (password === '') {
      setError('Enter your password.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await keystore().unlock(password);
    } catch (err) {
      setError(err instanceof WrongPasswordError ? 'Wrong password. Try again.' : errorMessage(err));
      setPassword('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="centered card" data-testid="unlock">
      <h1>Unlock your wallet</h1>
      {ks.lockedBy === 'idle' && (
        <p className="muted" data-testid="locked-idle">
          Locked after a period of inactivity.
        </p>
      )}
      {ks.lockedBy === 'elsewhere' && (
        <p className="muted" data-testid="locked-elsewhere">
          The keystore was changed in another window of this app: unlock to load the current version.
        </p>
      )}
      <form onSubmit={(e) => void submit(e)} data-testid="unlock-form" noValidate>
        <label className="field">
          <span>Password</span>
          <input
            type="password"
            value={password}
            autoFocus
            autoComplete="current-password"
            onChange={(e) => {
              setPassword(e.target.value);
              setError(undefined);
            }}
            aria-invalid={error !== undefined}
            data-testid="unlock-password"
          />
        </label>
        {error && (
          <div className="error box" role="alert" data-testid="unlock-error">
            {error}
          </div>
        )}
        <button type="submit" className="primary" disabled={busy} data-testid="unlock-submit">
          {busy ? 'Unlocking…' : 'Unlock'}
        </button>
      </form>
      <p className="small muted" style={{ marginTop: 24 }}>
        <button type="button" className="link" onClick={() => setShowErase((s) => !s)}>
          Forgot the password?
        </button>
      </p>
      {showErase && (
        <div className="card">
          <p>
            The password cannot be recovered. You can erase the keystore from this computer and restore the
            wallet from its recovery phrase (imported accounts from their own seeds, or everything from a
            backup file and its password). Accounts you have neither for are lost.
          </p>
          <label className="field">
            <span>Type ERASE to confirm</span>
            <input value={eraseText} onChange={(e) => setEraseText(e.target.value)} />
          </label>
          <button
            type="button"
            className="danger"
            disabled={eraseText !== 'ERASE'}
            onClick={() => keystore().erase()}
          >
            Erase the keystore
          </button>
        </div>
      )}
    </div>
  );
}
