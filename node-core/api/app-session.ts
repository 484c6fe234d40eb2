import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The window's session with its node (issue #16): how the GUI in a browser, which cannot read the
 * admin token file, gets the operator rights the app store and the Node page need.
 *
 * The page trades the admin token once (`POST /app/session`, from the link `npm start` prints or a
 * token pasted by the user; the desktop app's main process sets the cookie itself) for a cookie whose
 * value is an HMAC of the token. Cookies belong to a host, not to a port, so the session survives the
 * node moving to another port: that is the point. The value needs no server-side state, stays valid
 * across restarts, and dies with the token. The cookie's name carries a fingerprint of the token, so
 * two nodes with different data directories on one host each keep their own session.
 *
 * A cookie rides along on any request the browser makes to the host, including one started by another
 * page on 127.0.0.1 (same site: ports do not count). So the cookie counts only together with the
 * header `X-Ledger-App: 1`, which a page of another origin cannot add without a CORS preflight that
 * the node refuses; SameSite=Strict keeps it off requests started by other sites altogether.
 */
export const APP_HEADER = 'x-ledger-app';
const COOKIE_PREFIX = 'ledger_app_';
const SESSION_CONTEXT = 'ledger-node-desktop/app-session/v1';
/** About 400 days, the longest lifetime browsers keep (RFC 6265bis). */
export const SESSION_MAX_AGE_SECONDS = 400 * 24 * 3600;

export interface AppSession {
  readonly cookieName: string;
  /** The cookie's value (the desktop app's main process sets the cookie itself, before the window loads). */
  readonly cookieValue: string;
  /** Whether this request carries a valid session: the cookie and the app header. */
  check(cookieHeader: string | undefined, appHeader: string | string[] | undefined): boolean;
  /** The Set-Cookie value that opens a session. */
  setCookie(): string;
  /** The Set-Cookie value that ends it. */
  clearCookie(): string;
}

/** undefined when the node has no admin token (then there is nothing to hold a session for). */
export function createAppSession(adminToken: string | undefined): AppSession | undefined {
  if (adminToken === undefined || adminToken === '') return undefined;
  const value = createHmac('sha256', adminToken).update(SESSION_CONTEXT).digest('hex');
  const expected = Buffer.from(value);
  const fingerprint = createHash('sha256').update(adminToken).digest('hex').slice(0, 12);
  const cookieName = `${COOKIE_PREFIX}${fingerprint}`;
  const attributes = 'Path=/; HttpOnly; SameSite=Strict';
  return {
    cookieName,
    cookieValue: value,
    check(cookieHeader, appHeader) {
      if (appHeader !== '1') return false;
      const given = cookieValue(cookieHeader, cookieName);
      if (given === undefined || given.length !== value.length) return false;
      return timingSafeEqual(Buffer.from(given), expected);
    },
    setCookie: () => `${cookieName}=${value}; ${attributes}; Max-Age=${SESSION_MAX_AGE_SECONDS}`,
    clearCookie: () => `${cookieName}=; ${attributes}; Max-Age=0`,
  };
}

/** The value of the named cookie in a Cookie header (the first, as browsers send the most specific first). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
