import { describe, expect, it } from 'vitest';
import { VotesAhead } from '../../node-core/net/votes-ahead.ts';

/** Gossiped blocks are applied once the vote batches that arrived before them are counted. */
describe('votes counted ahead of the blocks that follow them', () => {
  const turns = () => new Promise((r) => setImmediate(r));
  const deferred = <T>() => {
    let resolve!: (v: T) => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };

  it('has nothing to wait for while no batch is being counted', () => {
    expect(new VotesAhead().now()).toBeUndefined();
  });

  it('waits for the batches being counted when asked, not for those that come later', async () => {
    const ahead = new VotesAhead();
    const first = deferred<string[]>();
    const tracked = ahead.track(first.promise);
    const wait = ahead.now()!;
    let waited = false;
    void wait.then(() => (waited = true));
    const later = deferred<string[]>();
    ahead.track(later.promise); // arrives after the block: not waited for
    await turns();
    expect(waited).toBe(false);
    first.resolve(['accept']);
    await turns();
    expect(waited).toBe(true);
    // The caller still gets the batch's own outcome.
    await expect(tracked).resolves.toEqual(['accept']);
    expect(ahead.now()).toBeDefined(); // the later batch is still being counted
    later.resolve([]);
    await turns();
    expect(ahead.now()).toBeUndefined();
  });

  it('does not hold blocks back for a batch whose counting failed, and passes the failure on', async () => {
    const ahead = new VotesAhead();
    const failing = deferred<string[]>();
    const tracked = ahead.track(failing.promise);
    const wait = ahead.now()!;
    failing.reject(new Error('store unavailable'));
    await expect(tracked).rejects.toThrow('store unavailable');
    await expect(wait).resolves.toBeDefined();
    await turns();
    expect(ahead.now()).toBeUndefined();
  });
});
