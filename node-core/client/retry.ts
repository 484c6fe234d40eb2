import { ApiRequestError, BlockRejected, RateLimited } from './errors.ts';

/**
 * When the client tries a request again by itself, and after how long. Only answers that promise a
 * later success are retried: a 429 (after the node's Retry-After) and a block refusal marked
 * `retryable` (503, with exponential backoff). A request is repeated only where a repeat cannot act
 * twice: a GET, a block submission (a block is its own key: the node takes a duplicate as a
 * duplicate), a 429 (refused before anything ran) or a request that carries an Idempotency-Key.
 * Connection failures are not retried: a node that is not running should be said at once.
 */
export interface RetryPolicy {
  /** Tries in all, the first included (default 4; 1 turns retries off). */
  maxAttempts: number;
  /** First backoff of a retryable refusal, doubled each time (default 250 ms). */
  baseDelayMs: number;
  /** Longest single wait; a longer Retry-After gives up instead of waiting (default 10 s). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryPolicy> = { maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 10_000 };
export const NO_RETRY: Readonly<RetryPolicy> = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 };

export interface RetryContext {
  method: string;
  path: string;
  /** The request carries an Idempotency-Key (the node replays its first answer). */
  idempotent: boolean;
}

/** A block submission in either form: `/blocks/<type>`, `/api/v1/blocks/<type>`. */
export function isBlockSubmission(method: string, path: string): boolean {
  return method === 'POST' && /^(\/api(\/v1)?)?\/blocks\/[a-z_]+$/.test(path.split('?')[0] ?? '');
}

/**
 * The wait before attempt `attempt + 1` after `error` on attempt `attempt` (1-based), or undefined to
 * give up and throw `error`.
 */
export function retryDelay(
  policy: RetryPolicy,
  error: unknown,
  attempt: number,
  ctx: RetryContext,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  if (!(error instanceof ApiRequestError)) return undefined;
  if (error instanceof RateLimited) {
    return error.retryAfterMs <= policy.maxDelayMs ? error.retryAfterMs : undefined;
  }
  const repeatable = ctx.method === 'GET' || ctx.idempotent || isBlockSubmission(ctx.method, ctx.path);
  if (!repeatable) return undefined;
  if (error instanceof BlockRejected && error.retryable) {
    return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  }
  return undefined;
}
