import { describe, expect, it } from 'vitest';
import {
  ApiRequestError,
  apiErrorOf,
  BlockRejected,
  IdempotencyConflict,
  NotFound,
  RateLimited,
  retryAfterMs,
  Unauthorized,
} from '../../node-core/client/errors.ts';
import { DEFAULT_RETRY, isBlockSubmission, NO_RETRY, retryDelay } from '../../node-core/client/retry.ts';

const h = (o: Record<string, string>) => new Headers(o);

describe('client errors: the typed error of each answer', () => {
  it('maps statuses and bodies of both forms to classes and codes', () => {
    const rej = apiErrorOf(400, { error: 'insufficient balance', retryable: false }, 'POST', '/blocks/send');
    expect(rej).toBeInstanceOf(BlockRejected);
    expect(rej.retryable).toBe(false);
    expect(rej.code).toBe('block_rejected');
    expect(rej.message).toBe('insufficient balance');
    const later = apiErrorOf(503, { error: 'store busy', retryable: true }, 'POST', '/api/v1/blocks/claim');
    expect(later).toBeInstanceOf(BlockRejected);
    expect(later.retryable).toBe(true);
    // A block route's 400 without the flag (an unreadable body) is a refusal too.
    expect(apiErrorOf(400, undefined, 'POST', '/blocks/send')).toBeInstanceOf(BlockRejected);
    // Another route's 400 is a plain bad request.
    const bad = apiErrorOf(400, { error: 'invalid request body' }, 'POST', '/chat/send');
    expect(bad).not.toBeInstanceOf(BlockRejected);
    expect(bad.code).toBe('bad_request');

    const nf = apiErrorOf(
      404,
      { error: { code: 'not_found', status: 404, message: 'account not found' } },
      'GET',
      '/api/v1/x',
    );
    expect(nf).toBeInstanceOf(NotFound);
    expect(nf.message).toBe('account not found');
    expect(apiErrorOf(401, { error: 'invalid or missing admin token' }, 'GET', '/a')).toBeInstanceOf(
      Unauthorized,
    );
    expect(apiErrorOf(403, { error: 'x' }, 'GET', '/a').code).toBe('forbidden');
    const busy = apiErrorOf(
      409,
      { error: 'a request with this Idempotency-Key is still in progress' },
      'POST',
      '/x',
    );
    expect(busy).toBeInstanceOf(IdempotencyConflict);
    expect(busy.code).toBe('idempotency_in_progress');
    expect(apiErrorOf(422, { error: 'Idempotency-Key already used' }, 'POST', '/x').code).toBe(
      'idempotency_mismatch',
    );
    expect(apiErrorOf(409, { error: 'message has not failed' }, 'POST', '/x').code).toBe('conflict');
    const up = apiErrorOf(503, { error: { code: 'upstream_unavailable', message: 'm' } }, 'GET', '/api/v1/y');
    expect(up.code).toBe('unavailable');
    expect(up).toBeInstanceOf(ApiRequestError);
  });

  it('reads the wait of a 429 from Retry-After (seconds or a date), 1 s when absent', () => {
    const rl = apiErrorOf(429, { error: 'rate limit exceeded' }, 'GET', '/node', h({ 'retry-after': '3' }));
    expect(rl).toBeInstanceOf(RateLimited);
    expect((rl as RateLimited).retryAfterMs).toBe(3000);
    expect(retryAfterMs(undefined)).toBe(1000);
    expect(retryAfterMs(h({ 'retry-after': 'soon' }))).toBe(1000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000);
  });
});

describe('client retries: what is tried again, after how long, how many times', () => {
  const get = { method: 'GET', path: '/node', idempotent: false };
  const block = { method: 'POST', path: '/blocks/send', idempotent: false };
  const chat = { method: 'POST', path: '/chat/send', idempotent: false };
  const later = apiErrorOf(503, { error: 'busy', retryable: true }, 'POST', '/blocks/send');
  const never = apiErrorOf(400, { error: 'bad', retryable: false }, 'POST', '/blocks/send');
  const slow = apiErrorOf(429, {}, 'POST', '/chat/send', h({ 'retry-after': '2' }));

  it('backs off exponentially on a retryable refusal, up to maxAttempts', () => {
    expect(retryDelay(DEFAULT_RETRY, later, 1, block)).toBe(250);
    expect(retryDelay(DEFAULT_RETRY, later, 2, block)).toBe(500);
    expect(retryDelay(DEFAULT_RETRY, later, 3, block)).toBe(1000);
    expect(retryDelay(DEFAULT_RETRY, later, 4, block)).toBeUndefined();
    expect(retryDelay({ ...DEFAULT_RETRY, maxDelayMs: 300 }, later, 3, block)).toBe(300);
  });

  it('never retries a final refusal, a connection failure, or with retries off', () => {
    expect(retryDelay(DEFAULT_RETRY, never, 1, block)).toBeUndefined();
    expect(retryDelay(DEFAULT_RETRY, new TypeError('fetch failed'), 1, get)).toBeUndefined();
    expect(retryDelay(NO_RETRY, later, 1, block)).toBeUndefined();
  });

  it('waits out a 429 on any route, but gives up when the wait is longer than maxDelayMs', () => {
    expect(retryDelay(DEFAULT_RETRY, slow, 1, chat)).toBe(2000);
    expect(retryDelay({ ...DEFAULT_RETRY, maxDelayMs: 1000 }, slow, 1, chat)).toBeUndefined();
  });

  it('repeats a non-block POST after a retryable refusal only with an Idempotency-Key', () => {
    const busy = apiErrorOf(503, { error: 'busy', retryable: true }, 'POST', '/directory/register');
    expect(retryDelay(DEFAULT_RETRY, busy, 1, chat)).toBeUndefined();
    expect(retryDelay(DEFAULT_RETRY, busy, 1, { ...chat, idempotent: true })).toBe(250);
  });

  it('knows block submissions in both forms', () => {
    expect(isBlockSubmission('POST', '/blocks/lease_accept')).toBe(true);
    expect(isBlockSubmission('POST', '/api/v1/blocks/send')).toBe(true);
    expect(isBlockSubmission('GET', '/blocks/recent')).toBe(false);
    expect(isBlockSubmission('POST', '/statechain/blocks')).toBe(false);
  });
});
