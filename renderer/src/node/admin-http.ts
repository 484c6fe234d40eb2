import { type JsonValue, parseJson, stringifyJson } from '../../../node-core/protocol/json.ts';
import { api } from '../api.ts';

/**
 * Requests to the node's operator routes (the log, the peer-to-peer switch). The page holds no
 * admin token: it is signed in by the window session's cookie (POST /app/session, or set by the
 * desktop app), which the node accepts only together with the header `X-Ledger-App: 1`.
 * `credentials: 'include'` lets the cookie ride along in the development form too, where the page
 * comes from another loopback port than the node.
 */
export const APP_HEADERS = { 'x-ledger-app': '1' } as const;

export type AdminErrorKind = 'signed_out' | 'refused' | 'unreachable';

export class AdminRequestError extends Error {
  readonly kind: AdminErrorKind;
  readonly status: number;

  constructor(kind: AdminErrorKind, status: number, message: string) {
    super(message);
    this.name = 'AdminRequestError';
    this.kind = kind;
    this.status = status;
  }
}

/** The message a person reads for a refusal of the node, by status. */
function refusal(status: number, body: JsonValue | undefined): AdminRequestError {
  const error = (body as { error?: unknown } | null | undefined)?.error;
  const said = typeof error === 'string' ? error : `HTTP ${status}`;
  if (status === 401)
    return new AdminRequestError(
      'signed_out',
      401,
      'This window is not signed in to the node as its operator, so the node keeps this part private.',
    );
  if (status === 403)
    return new AdminRequestError('refused', 403, `The node has operator access turned off (${said}).`);
  return new AdminRequestError('refused', status, said);
}

export function adminUrl(path: string): string {
  return `${api().baseUrl}${path}`;
}

/** A request to an operator route; the lossless JSON body, or a typed error. */
export async function adminRequest<T = JsonValue>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(adminUrl(path), {
      method,
      credentials: 'include',
      headers: {
        accept: 'application/json',
        ...APP_HEADERS,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : stringifyJson(body),
    });
  } catch (e) {
    throw new AdminRequestError(
      'unreachable',
      0,
      `cannot reach the node at ${api().baseUrl} (${(e as Error).message})`,
    );
  }
  const text = await res.text();
  let parsed: JsonValue | undefined;
  try {
    parsed = text === '' ? undefined : parseJson(text);
  } catch {
    parsed = undefined;
  }
  if (res.status >= 400) throw refusal(res.status, parsed);
  return parsed as T;
}

export function isSignedOut(e: unknown): boolean {
  return e instanceof AdminRequestError && e.kind === 'signed_out';
}
