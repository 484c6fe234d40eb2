import { useState, type FormEvent } from 'react';
import { connect, type SessionApi } from '../window-store/session.ts';

/**
 * Shown when this browser has no session with the node: the wallet lives in the node, and only the
 * node's operator (whoever can read its admin token) may open it. One paste, once per browser.
 */
export function Connect({
  session,
  adminTokenFile,
  linkError,
}: {
  session: SessionApi;
  adminTokenFile: string | null;
  linkError?: string;
}) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(linkError);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const problem = await connect(session, token);
      if (problem === undefined) window.location.reload();
      else setError(problem);
    } catch (err) {
      setError(
        `Cannot reach the node at ${session.base} (${err instanceof Error ? err.message : String(err)}).`,
      );
    } finally {
      setBusy(false);
    }
  };

  const file = adminTokenFile ?? '<data-dir>/admin-token';
  return (
    <main className="centered card" data-testid="connect">
      <h1>Connect this browser to your node</h1>
      <p>
        Your wallet, settings and contacts are kept by the node, so they are here whichever port the node runs
        on. To open them from a browser, show it the node’s admin token once.
      </p>
      <p className="muted small">
        The easiest way: open the link that <span className="mono">npm start</span> printed. Or paste the
        token from{' '}
        <span className="mono" data-testid="connect-token-file">
          {file}
        </span>
        , for example with <span className="mono">cat '{file}'</span>.
      </p>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <label className="field">
          <span>Admin token</span>
          <input
            type="password"
            value={token}
            autoFocus
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => {
              setToken(e.target.value);
              setError(undefined);
            }}
            aria-invalid={error !== undefined}
            data-testid="connect-token"
          />
        </label>
        {error && (
          <div className="error box" role="alert" data-testid="connect-error">
            {error}
          </div>
        )}
        <button type="submit" className="primary" disabled={busy} data-testid="connect-submit">
          {busy ? 'Connecting…' : 'Connect'}
        </button>
      </form>
    </main>
  );
}
