import { parseJson, stringifyJson } from '../../../node-core/protocol/json.ts';

/**
 * The window's session with the node (node-core/api/app-session.ts). A browser gets it once, from
 * the link `npm start` prints (`/ui/#/connect/<admin token>`) or from the admin token pasted on the
 * Connect screen; the desktop app's main process sets it before the window loads. The cookie is the
 * host's, not the port's, so it outlives the node moving to another port.
 */
export interface SessionStatus {
  authenticated: boolean;
  /** Where the node keeps its admin token (null: given on its command line or by the environment). */
  adminTokenFile: string | null;
}

export const CONNECT_ROUTE = '#/connect/';

export interface SessionApi {
  base: string;
  fetch: typeof fetch;
  headers: Readonly<Record<string, string>>;
}

export async function sessionStatus(s: SessionApi): Promise<SessionStatus> {
  const res = await s.fetch(`${s.base}/app/session`, { headers: { ...s.headers }, cache: 'no-store' });
  const body = parseJson(await res.text()) as { authenticated?: unknown; admin_token_file?: unknown };
  if (!res.ok) throw new Error(`the node answered ${res.status} to /app/session`);
  return {
    authenticated: body.authenticated === true,
    adminTokenFile: typeof body.admin_token_file === 'string' ? body.admin_token_file : null,
  };
}

/** Trades the admin token for the session; resolves with an error sentence, or undefined when done. */
export async function connect(s: SessionApi, token: string): Promise<string | undefined> {
  const t = token.trim();
  if (t === '') return 'Paste the admin token first.';
  const res = await s.fetch(`${s.base}/app/session`, {
    method: 'POST',
    headers: { ...s.headers, 'content-type': 'application/json' },
    body: stringifyJson({ token: t }),
  });
  if (res.ok) return undefined;
  if (res.status === 401) return 'That is not this node’s admin token.';
  if (res.status === 403)
    return 'This node runs without an admin token, so it cannot keep a wallet for a browser.';
  return `The node answered ${res.status}.`;
}

/**
 * A connect link in the address bar (`#/connect/<token>`): trades it, and takes the token out of
 * the address at once, so that it stays out of bookmarks and screenshots. Resolves with an error
 * sentence when the link did not work, undefined otherwise (also when there was no link).
 */
export async function connectFromLink(
  s: SessionApi,
  loc: Location = window.location,
): Promise<string | undefined> {
  if (!loc.hash.startsWith(CONNECT_ROUTE)) return undefined;
  const token = decodeURIComponent(loc.hash.slice(CONNECT_ROUTE.length));
  history.replaceState(null, '', `${loc.pathname}${loc.search}#/`);
  return connect(s, token);
}
