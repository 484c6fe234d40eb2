import type { Session } from 'electron';
import { createAppSession, SESSION_MAX_AGE_SECONDS } from '../node-core/api/app-session.ts';

/**
 * The desktop window's session with its node (node-core/api/app-session.ts): the main process knows
 * the admin token, so it sets the session cookie itself before the window loads, and the window
 * opens the wallet kept by the node without asking anyone for the token. A browser gets the same
 * cookie from the link `npm start` prints. Resolves false when the node has no admin token (then the
 * window shows how to connect, as in a browser).
 */
export async function openWindowSession(
  ses: Pick<Session, 'cookies'>,
  apiUrl: string,
  adminToken: string | undefined,
): Promise<boolean> {
  const s = createAppSession(adminToken);
  if (s === undefined) return false;
  await ses.cookies.set({
    url: apiUrl,
    name: s.cookieName,
    value: s.cookieValue,
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    expirationDate: Math.floor(Date.now() / 1000) + SESSION_MAX_AGE_SECONDS,
  });
  return true;
}
