import { ProtocolError } from '../protocol/errors.ts';
import { StoreUnavailableError } from '../store/errors.ts';

/**
 * The one registry of the API's coded errors. Every error response the node sends comes from here, in
 * the node form `{"error": "<message>"}` (block rejections add `"retryable"`). Routes throw `ApiError`;
 * anything else that escapes a handler is mapped by `toApiError`, so the body shape and the status of
 * an error never depend on which layer (fastify, our parser, a handler) noticed it.
 */
export interface ErrorSpec {
  readonly status: number;
  /** Default message; most codes use it verbatim so clients can match on it. */
  readonly message: string;
}

export const ERROR_REGISTRY = {
  bad_request: { status: 400, message: 'bad request' },
  invalid_body: { status: 400, message: 'invalid request body' },
  // The node answers an oversized body like any other unreadable body (no 413).
  payload_too_large: { status: 400, message: 'invalid request body' },
  unauthorized: { status: 401, message: 'invalid or missing admin token' },
  forbidden: { status: 403, message: 'operator endpoint disabled: no admin token configured' },
  host_not_allowed: { status: 403, message: 'host not allowed' },
  not_found: { status: 404, message: 'not found' },
  method_not_allowed: { status: 405, message: 'method not allowed' },
  request_timeout: { status: 408, message: 'request timeout' },
  conflict: { status: 409, message: 'conflict with the current state' },
  // Idempotency-Key (api/idempotency.ts; D13): the key's first request is still being answered, or
  // the key was used before for a different request (method, path or body).
  idempotency_in_progress: {
    status: 409,
    message: 'a request with this Idempotency-Key is still in progress; retry once it is answered',
  },
  idempotency_mismatch: {
    status: 422,
    message: 'Idempotency-Key already used for a different request (method, path or body); use a new key',
  },
  rate_limited: { status: 429, message: 'rate limit exceeded' },
  headers_too_large: { status: 431, message: 'request headers too large' },
  // 400 when the block itself is wrong; 503 when it may succeed later (see ApiError.blockRejected).
  block_rejected: { status: 400, message: 'block rejected' },
  // VMs and the tunnel (reference-behavior.md 1.6; decisions D12, D17).
  missing_signature: { status: 401, message: 'missing X-Signature header' },
  signature_failed: { status: 403, message: 'signature verification failed' },
  vm_not_found: { status: 404, message: 'vm not found' },
  exec_timeout: { status: 408, message: 'command timed out' },
  lease_not_active: { status: 410, message: 'lease not active' },
  exec_failed: { status: 500, message: 'execution error' },
  tunnel_error: { status: 502, message: 'tunnel error' },
  internal: { status: 500, message: 'internal error' },
  unavailable: { status: 503, message: 'service unavailable' },
} as const satisfies Record<string, ErrorSpec>;

export type ApiErrorCode = keyof typeof ERROR_REGISTRY;

/** The node-form error body. */
export interface ErrorBody {
  error: string;
  retryable?: boolean;
}

export interface ApiErrorOptions {
  /** Sent as `"retryable"` in the body (block rejections), and selects 503 over 400 for them. */
  retryable?: boolean;
  /** Context for the logs only: never sent to the client. */
  details?: Readonly<Record<string, unknown>>;
  /** Extra response headers (`Retry-After`, `Allow`). */
  headers?: Readonly<Record<string, string>>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly retryable: boolean | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ApiErrorCode, message?: string, opts: ApiErrorOptions = {}) {
    const spec: ErrorSpec = ERROR_REGISTRY[code];
    super(message ?? spec.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = code === 'block_rejected' && opts.retryable === true ? 503 : spec.status;
    this.retryable = opts.retryable;
    this.details = opts.details;
    this.headers = opts.headers ?? {};
  }

  /**
   * A submitted block refused, by the ledger's rules (`block_rejected`) or for its shape
   * (`blockRefused`): the answers the proxy form passes through as the node wrote them.
   */
  get isBlockRefusal(): boolean {
    return this.code === 'block_rejected' || (this.code === 'invalid_body' && this.retryable === false);
  }

  /** The JSON body to send; `retryable` appears only when it was set. */
  toBody(): ErrorBody {
    return this.retryable === undefined
      ? { error: this.message }
      : { error: this.message, retryable: this.retryable };
  }

  static badRequest(message: string): ApiError {
    return new ApiError('bad_request', message);
  }

  /**
   * A submitted block refused before the ledger's rules, for what it is (its shape, its fields):
   * 400 with `retryable: false`, as every deterministic refusal of a block answers.
   */
  static blockRefused(message: string): ApiError {
    return new ApiError('invalid_body', message, { retryable: false });
  }

  static invalidBody(cause?: unknown): ApiError {
    return new ApiError('invalid_body', undefined, { cause });
  }

  static notFound(message?: string): ApiError {
    return new ApiError('not_found', message);
  }

  /** The request is well formed but the resource is not in a state that allows it. */
  static conflict(message: string): ApiError {
    return new ApiError('conflict', message);
  }

  /** `allow` lists the methods the path does accept (sent as the `Allow` header). */
  static methodNotAllowed(allow: readonly string[]): ApiError {
    return new ApiError('method_not_allowed', undefined, { headers: { allow: allow.join(', ') } });
  }

  static unauthorized(): ApiError {
    return new ApiError('unauthorized');
  }

  static forbidden(): ApiError {
    return new ApiError('forbidden');
  }

  static hostNotAllowed(): ApiError {
    return new ApiError('host_not_allowed');
  }

  static rateLimited(retryAfterSeconds: number): ApiError {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    return new ApiError('rate_limited', undefined, { headers: { 'retry-after': String(seconds) } });
  }

  /** `{"error": "block rejected: <reason>", "retryable": <retryable>}`, status 503 if retryable else 400. */
  static blockRejected(reason: string, retryable: boolean): ApiError {
    return new ApiError('block_rejected', `block rejected: ${reason}`, { retryable });
  }

  static unavailable(message?: string, retryAfterSeconds?: number): ApiError {
    const headers =
      retryAfterSeconds === undefined
        ? undefined
        : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) };
    return new ApiError('unavailable', message, { headers });
  }

  /** A connection over the node's caps: retryable once others have closed; this one is closed. */
  static tooManyConnections(): ApiError {
    return new ApiError('unavailable', 'too many connections', {
      retryable: true,
      headers: { 'retry-after': '1', connection: 'close' },
    });
  }

  static internal(cause?: unknown): ApiError {
    return new ApiError('internal', undefined, { cause });
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/** One failed check from fastify's schema validator (an Ajv error object). */
interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** The parts of a fastify error we look at (duck-typed: fastify's error classes are not exported). */
interface FrameworkErrorLike {
  code?: unknown;
  statusCode?: unknown;
  validation?: unknown;
  validationContext?: unknown;
}

const PART_LABEL: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  body: 'body field',
  headers: 'header',
};

/**
 * A one-line message naming the field a schema check failed on, e.g.
 * "invalid query parameter 'limit': must be <= 1000" or "missing query parameter 'address'".
 */
export function validationMessage(context: string, issues: readonly ValidationIssue[]): string {
  const label = PART_LABEL[context] ?? context;
  const issue = issues[0];
  if (issue === undefined) return `invalid ${label}`;
  const path = (issue.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
    const missing = issue.params.missingProperty;
    return `missing ${label} '${path === '' ? missing : `${path}.${missing}`}'`;
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
    return `unknown ${label} '${issue.params.additionalProperty}'`;
  }
  // An integer query parameter (routes/common.ts digitsParam): say so, not the pattern.
  const what =
    issue.keyword === 'pattern' && issue.params?.pattern === '^[0-9]+$'
      ? 'must be digits only'
      : (issue.message ?? 'is invalid');
  return path === '' ? `invalid ${label}: ${what}` : `invalid ${label} '${path}': ${what}`;
}

/**
 * Maps anything thrown while serving a request to an ApiError. Known shapes keep their meaning (our
 * errors, fastify's validation and body errors, protocol decoding errors are bad input, never 5xx);
 * anything else is an internal error whose message is not shown to the client.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // Transient: the write may succeed once the operator frees space (or restarts the node).
  if (err instanceof StoreUnavailableError)
    return new ApiError('unavailable', err.message, { retryable: true, cause: err });
  if (err instanceof ProtocolError) {
    // A handler decoding client data (a block, an address) failed: the input is at fault.
    return err.code === 'ERR_JSON'
      ? ApiError.invalidBody(err)
      : new ApiError('bad_request', err.message, { cause: err });
  }
  if (typeof err === 'object' && err !== null) {
    const fe = err as FrameworkErrorLike;
    if (Array.isArray(fe.validation)) {
      const context = typeof fe.validationContext === 'string' ? fe.validationContext : 'request';
      return new ApiError('bad_request', validationMessage(context, fe.validation as ValidationIssue[]), {
        cause: err,
      });
    }
    const code = typeof fe.code === 'string' ? fe.code : '';
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return new ApiError('payload_too_large', undefined, { cause: err });
    // Unreadable body: bad length, bad media type, aborted upload...
    if (code.startsWith('FST_ERR_CTP_')) return ApiError.invalidBody(err);
    if (code === 'FST_ERR_NOT_FOUND') return ApiError.notFound();
    const status = typeof fe.statusCode === 'number' ? fe.statusCode : 0;
    // Other client-side failures the framework flagged: keep them 4xx, with a generic message.
    if (status >= 400 && status < 500) return new ApiError('bad_request', undefined, { cause: err });
  }
  return ApiError.internal(err);
}
