import { describe, expect, it } from 'vitest';
import { ElectionPuller, type ElectionPullDeps } from '../../node-core/net/election-pull.ts';
import { isNetError, NetError } from '../../node-core/net/errors.ts';
import { type SyncDeps, Syncer } from '../../node-core/net/sync.ts';

/**
 * Requests whose payload a node cannot act on are refused with a NetError ERR_BAD_REQUEST (the code
 * for callers, the message for the peer, who reads it in the answer's `error`). The payload checks
 * come before any ledger work, so no ledger is needed here.
 */
const noDeps = {} as never;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('NetError', () => {
  it('carries a code and a message, and is an Error', () => {
    const e = new NetError('ERR_RATE_LIMITED', 'rate limited');
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: 'NetError', code: 'ERR_RATE_LIMITED', message: 'rate limited' });
    expect(isNetError(e)).toBe(true);
    expect(isNetError(e, 'ERR_RATE_LIMITED')).toBe(true);
    expect(isNetError(e, 'ERR_BAD_REQUEST')).toBe(false);
    expect(isNetError(new Error('rate limited'))).toBe(false);
  });
});

describe('bad request payloads', () => {
  const puller = new ElectionPuller(noDeps as ElectionPullDeps);

  it('vote_request: account and previous must be hashes', () => {
    const bad = thrown(() => puller.answer('vote_request', { account: 'zz', previous: '0' }));
    expect(isNetError(bad, 'ERR_BAD_REQUEST')).toBe(true);
    expect((bad as Error).message).toBe('vote_request: account must be 64 hex');
    const prev = thrown(() => puller.answer('vote_request', { account: 'ab'.repeat(32), previous: 7 }));
    expect(isNetError(prev, 'ERR_BAD_REQUEST')).toBe(true);
    expect((prev as Error).message).toBe('vote_request: previous must be 64 hex or "0"');
    expect(
      isNetError(
        thrown(() => puller.answer('vote_request', null)),
        'ERR_BAD_REQUEST',
      ),
    ).toBe(true);
  });

  it('chain and statechain sync requests: account must be a hash, from a whole number', async () => {
    const syncer = new Syncer(noDeps as SyncDeps);
    await expect(syncer.answer('chain', { account: 'nope', from: 1 })).rejects.toSatisfy(
      (e) => isNetError(e, 'ERR_BAD_REQUEST') && (e as Error).message === 'chain: account must be 64 hex',
    );
    await expect(syncer.answer('statechain', { from: 1.5 })).rejects.toSatisfy(
      (e) => isNetError(e, 'ERR_BAD_REQUEST') && /from must be a whole number/.test((e as Error).message),
    );
  });
});
