import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, errorMessage } from '../api.ts';
import { desktopBridge } from '../bridge.ts';
import {
  checkNewPassword,
  keystore,
  lastKdfMs,
  MIN_PASSWORD_LENGTH,
  useKeystore,
  WrongPasswordError,
} from '../keystore/index.ts';
import { DEFAULT_KDF } from '../keystore/vault.ts';
import { powEngine } from '../pow/engine.ts';
import { AUTO_LOCK_CHOICES, settings, updateSettings, type ThemeChoice } from '../settings.ts';
import { WalletSecurity } from './WalletSecurity.tsx';

/**
 * Settings: theme, auto-lock, password; behind the password again, the recovery phrase, backup files and
 * hiding or removing accounts; where the node's admin token is, the API's OpenAPI document.
 */
export default function SettingsPage() {
  const s = settings.use();
  const bridge = desktopBridge();
  const appInfo = useQuery({
    queryKey: ['app-info'],
    queryFn: () => bridge!.app.info(),
    enabled: bridge !== undefined,
    staleTime: Infinity,
  });
  const base = api().baseUrl;
  const tokenFile = appInfo.data?.adminTokenFile ?? (appInfo.data ? null : undefined);
  return (
    <div className="page" data-testid="settings-page">
      <h1>Settings</h1>
      <div className="card">
        <h2>Appearance</h2>
        <label className="field" style={{ maxWidth: 260 }}>
          <span>Theme</span>
          <select
            value={s.theme}
            onChange={(e) => updateSettings({ theme: e.target.value as ThemeChoice })}
            data-testid="settings-theme"
          >
            <option value="system">Same as the system</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>
      </div>
      <div className="card">
        <h2>Security</h2>
        <label className="field" style={{ maxWidth: 260 }}>
          <span>Lock automatically after</span>
          <select
            value={s.autoLockMinutes}
            onChange={(e) => updateSettings({ autoLockMinutes: Number(e.target.value) })}
            data-testid="settings-autolock"
          >
            {AUTO_LOCK_CHOICES.map((m) => (
              <option key={m} value={m}>
                {m === 0 ? 'never' : `${m} minute${m === 1 ? '' : 's'} of inactivity`}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={s.autoReceive}
            onChange={(e) => updateSettings({ autoReceive: e.target.checked })}
          />
          Receive incoming sends automatically while unlocked
        </label>
        <p className="hint" data-testid="kdf-info">
          Keys are encrypted with XChaCha20-Poly1305 under a key derived from the password by scrypt (N=
          {DEFAULT_KDF.N}, r={DEFAULT_KDF.r}, p={DEFAULT_KDF.p}).
          {lastKdfMs !== undefined && (
            <>
              {' '}
              The last derivation took <span data-testid="kdf-ms">{Math.round(lastKdfMs)}</span> ms.
            </>
          )}
        </p>
        <ChangePassword />
      </div>
      <WalletSecurity />
      <div className="card">
        <h2>Node</h2>
        <table>
          <tbody>
            <tr>
              <th style={{ width: 200 }}>API address</th>
              <td className="mono">{base}</td>
            </tr>
            <tr>
              <th>API description</th>
              <td>
                <a href={`${base}/openapi.json`} target="_blank" rel="noreferrer" data-testid="openapi-link">
                  {base}/openapi.json
                </a>{' '}
                ·{' '}
                <a href={`${base}/`} target="_blank" rel="noreferrer">
                  manifest
                </a>
              </td>
            </tr>
            <tr>
              <th>Admin token file</th>
              <td className="mono" data-testid="admin-token-file">
                {tokenFile === undefined
                  ? '<data-dir>/admin-token'
                  : tokenFile === null
                    ? 'none (the token was given on the command line or the environment)'
                    : tokenFile}
              </td>
            </tr>
            {appInfo.data && (
              <tr>
                <th>Data directory</th>
                <td className="mono">{appInfo.data.dataDir}</td>
              </tr>
            )}
            <tr>
              <th>Proof of work</th>
              <td data-testid="pow-engine">{powEngine(bridge).describe()}</td>
            </tr>
          </tbody>
        </table>
        <p className="hint">
          Operator endpoints need the admin token as <span className="mono">Authorization: Bearer …</span>.
          This window does not keep the token: it was traded once for a session with the node (a cookie).
        </p>
      </div>
    </div>
  );
}

function ChangePassword() {
  const ks = useKeystore();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string }>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = checkNewPassword(next, confirm);
    if (problem) {
      setMessage({ ok: false, text: problem });
      return;
    }
    setBusy(true);
    setMessage(undefined);
    try {
      await keystore().changePassword(current, next, confirm);
      setMessage({ ok: true, text: 'Password changed: the keystore is re-encrypted under the new one.' });
      setCurrent('');
      setNext('');
      setConfirm('');
    } catch (err) {
      setMessage({
        ok: false,
        text: err instanceof WrongPasswordError ? 'The current password is wrong.' : errorMessage(err),
      });
    } finally {
      setBusy(false);
    }
  };
  if (ks.status !== 'unlocked') return null;
  return (
    <form onSubmit={(e) => void submit(e)} noValidate data-testid="change-password" style={{ maxWidth: 360 }}>
      <h3>Change password</h3>
      <label className="field">
        <span>Current password</span>
        <input
          type="password"
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          autoComplete="current-password"
          data-testid="cp-current"
        />
      </label>
      <label className="field">
        <span>New password (at least {MIN_PASSWORD_LENGTH} characters)</span>
        <input
          type="password"
          value={next}
          onChange={(e) => setNext(e.target.value)}
          autoComplete="new-password"
          data-testid="cp-new"
        />
      </label>
      <label className="field">
        <span>New password again</span>
        <input
          type="password"
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
          autoComplete="new-password"
          data-testid="cp-confirm"
        />
      </label>
      {message && (
        <div className={`${message.ok ? 'success' : 'error'} box`} role="alert" data-testid="cp-message">
          {message.text}
        </div>
      )}
      <button type="submit" disabled={busy} data-testid="cp-submit">
        {busy ? 'Re-encrypting…' : 'Change password'}
      </button>
    </form>
  );
}
