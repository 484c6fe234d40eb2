/**
 * The client's typed errors. A script branches on the class (or on `code`, which survives being
 * logged and re-read) instead of on status numbers: `BlockRejected` says whether the same block may
 * be taken later, `RateLimited` how long to wait, `NodeUnreachable` that nothing answered at all.
 * Both API forms are read: the node form's `{error, retryable?}` and the proxy form's wrapped
 * `{error: {code, message, ...}}`. Isomorphic: no Node built-ins.
 */

export type ClientErrorCode =
  | 'bad_request'
  | 'block_rejected'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'idempotency_in_progress'
  | 'idempotency_mismatch'
  | 'gone'
  | 'rate_limited'
  | 'unavailable'
  | 'server_error'
  | 'http_error';

/** An answer of the node with an error status (4xx, 5xx). */
export class ApiRequestError extends Error {
  readonly status: number;
  readonly body: unknown;
  /** The node's `retryable` flag on block rejections (503 = true); false when it gave none. */
  readonly retryable: boolean;
  readonly code: ClientErrorCode;
  readonly method: string;
  readonly path: string;

  constructor(status: number, body: unknown, method: string, path: string, code?: ClientErrorCode) {
    const msg = errorText(body) ?? `HTTP ${status}`;
    super(msg);
    this.name = 'ApiRequestError';
    this.status = status;
    this.body = body;
    this.retryable = retryableOf(body) === true;
    this.code = code ?? codeOf(status, body);
    this.method = method;
    this.path = path;
    this.stack = `${this.name}: ${msg} (${method} ${path})`;
  }
}

/** A block the node refused: never takeable when `retryable` is false (400), maybe later when true (503). */
export class BlockRejected extends ApiRequestError {
  constructor(status: number, body: unknown, method: string, path: string) {
    super(status, body, method, path, 'block_rejected');
    this.name = 'BlockRejected';
  }
}

/** 429: `retryAfterMs` is the wait the node asked for (Retry-After), 1 s when it named none. */
export class RateLimited extends ApiRequestError {
  readonly retryAfterMs: number;
  constructor(status: number, body: unknown, method: string, path: string, retryAfterMs: number) {
    super(status, body, method, path, 'rate_limited');
    this.name = 'RateLimited';
    this.retryAfterMs = retryAfterMs;
  }
}

export class NotFound extends ApiRequestError {
  constructor(status: number, body: unknown, method: string, path: string) {
    super(status, body, method, path, 'not_found');
    this.name = 'NotFound';
  }
}

/** 401 or 403: a missing or wrong admin token (or app session), or a refused signature. */
export class Unauthorized extends ApiRequestError {
  constructor(status: number, body: unknown, method: string, path: string) {
    super(status, body, method, path);
    this.name = 'Unauthorized';
  }
}

/** 409 and 422 of an Idempotency-Key: the key's first request still runs, or the key was used for another. */
export class IdempotencyConflict extends ApiRequestError {
  constructor(status: number, body: unknown, method: string, path: string) {
    super(status, body, method, path, status === 409 ? 'idempotency_in_progress' : 'idempotency_mismatch');
    this.name = 'IdempotencyConflict';
  }
}

/**
 * Nothing answered: connection refused or reset, DNS failure, the node not running. A TypeError, as
 * fetch's own failure is, so code written against plain fetch keeps working; `cause` is fetch's error.
 */
export class NodeUnreachable extends TypeError {
  readonly code = 'node_unreachable' as const;
  readonly url: string;
  constructor(url: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'NodeUnreachable';
    this.url = url;
  }
}

/** The typed error of an error answer. `retryAfterMs` comes from the answer's Retry-After header. */
export function apiErrorOf(
  status: number,
  body: unknown,
  method: string,
  path: string,
  headers?: Headers,
): ApiRequestError {
  if (status === 429) return new RateLimited(status, body, method, path, retryAfterMs(headers));
  if (isBlockRefusal(status, body, path)) return new BlockRejected(status, body, method, path);
  if (status === 404) return new NotFound(status, body, method, path);
  if (status === 401 || status === 403) return new Unauthorized(status, body, method, path);
  const text = errorText(body) ?? '';
  if ((status === 409 || status === 422) && /Idempotency-Key/.test(text))
    return new IdempotencyConflict(status, body, method, path);
  return new ApiRequestError(status, body, method, path);
}

/** Retry-After in ms: delta-seconds or an HTTP date; 1 s when absent or unreadable. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number {
  const v = headers?.get('retry-after')?.trim();
  if (v === undefined || v === '') return 1000;
  if (/^[0-9]+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : 1000;
}

/**
 * A block refusal carries `retryable` at the top level in both forms (the proxy passes it through);
 * a block route's 400 or 503 without it is one too (an unreadable body on a submission).
 */
function isBlockRefusal(status: number, body: unknown, path: string): boolean {
  if (status !== 400 && status !== 503) return false;
  if (typeof retryableOf(body) === 'boolean') return true;
  return /^(\/api(\/v1)?)?\/blocks\/[a-z_]+$/.test(path.split('?')[0] ?? '');
}

function retryableOf(body: unknown): boolean | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const r = (body as { retryable?: unknown }).retryable;
  return typeof r === 'boolean' ? r : undefined;
}

/** The node form's `error` string, or the proxy form's `error.message`. */
export function errorText(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const e = (body as { error?: unknown }).error;
  if (typeof e === 'string') return e;
  if (typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string')
    return (e as { message: string }).message;
  return undefined;
}

function codeOf(status: number, body: unknown): ClientErrorCode {
  const proxy = (body as { error?: { code?: unknown } } | null)?.error;
  if (typeof proxy === 'object' && proxy !== null && typeof proxy.code === 'string') {
    const c = proxy.code;
    if (c === 'upstream_unavailable') return 'unavailable';
    if (c === 'upstream_error' || c === 'upstream_timeout') return 'server_error';
  }
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 408:
      return 'request_timeout';
    case 409:
      return 'conflict';
    case 410:
      return 'gone';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return status >= 500 ? 'server_error' : 'http_error';
  }
}
