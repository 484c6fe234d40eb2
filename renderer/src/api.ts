import { ApiRequestError, LedgerClient } from '../../node-core/client/client.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';
import { desktopBridge } from './bridge.ts';

/**
 * Where the node's API is: the page's own origin (the node serves this app at /ui/), unless `?api=`
 * names another node (development: `vite` on its own port, or the end-to-end tests' static server).
 * Inside Electron a page loaded from a file has no http origin: the bridge then tells the API address.
 */
export function apiBaseFromLocation(
  loc: Pick<Location, 'search' | 'origin' | 'protocol'>,
): string | undefined {
  const override = new URLSearchParams(loc.search).get('api');
  if (override) {
    const u = new URL(override);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`?api= must be an http(s) URL`);
    return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
  }
  if (loc.protocol === 'http:' || loc.protocol === 'https:') return loc.origin;
  return undefined;
}

let client: LedgerClient | undefined;

/** Resolves the API base once at start-up (before the first render). */
export async function initApi(): Promise<LedgerClient> {
  let base = apiBaseFromLocation(window.location);
  if (base === undefined) {
    const bridge = desktopBridge();
    if (bridge) base = (await bridge.app.info()).apiUrl;
  }
  if (base === undefined)
    throw new Error('cannot tell where the node is: open this page from the node, or add ?api=');
  client = new LedgerClient(base, { headers: APP_HEADERS, fetch: appFetch });
  return client;
}

/**
 * Marks the window's requests (node-core/api/app-session.ts): the node takes the window session's
 * cookie only together with this header, which a page of another origin cannot add.
 */
export const APP_HEADERS: Readonly<Record<string, string>> = { 'x-ledger-app': '1' };

/** fetch with the window session's cookie, also in the development form (the GUI on another port). */
export const appFetch: typeof fetch = (input, init) => fetch(input, { ...init, credentials: 'include' });

/** The client for the node (initApi must have run). */
export function api(): LedgerClient {
  if (!client) throw new Error('API not initialised');
  return client;
}

/** True when the error is the node refusing (it answered), as opposed to the node not answering. */
export function isNodeError(e: unknown): e is ApiRequestError {
  return e instanceof ApiRequestError;
}

/**
 * The text to show for a failure: the node's own `error` text when it answered, a plain sentence when
 * it could not be reached, the field-free message of a local validation error.
 */
export function errorMessage(e: unknown): string {
  if (e instanceof ApiRequestError) return e.message;
  if (e instanceof ProtocolError) return fieldless(e);
  if (e instanceof TypeError && client) {
    // fetch() rejects with a TypeError when nothing answers (refused, reset, CORS).
    return `cannot reach the node at ${client.baseUrl} (${e.message})`;
  }
  if (e instanceof Error) return e.message;
  return String(e);
}

/** A ProtocolError's message without the "field: " prefix (the form shows which field). */
export function fieldless(e: ProtocolError): string {
  return e.field !== undefined && e.message.startsWith(`${e.field}: `)
    ? e.message.slice(e.field.length + 2)
    : e.message;
}
