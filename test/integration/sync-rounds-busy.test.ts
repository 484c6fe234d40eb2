import { describe, expect, it } from 'vitest';
import { twoNodes } from '../helpers/p2p.ts';

/**
 * A node's periodic sync rounds (net/sync.ts) wait while its ledger takes blocks, for at most their
 * longest wait (issue #18): mid-stream a round compared frontiers that differed only by blocks in
 * flight and pulled what gossip was bringing. Intervals are shortened here (100 ms, at most 1 s).
 */
describe('periodic sync rounds while blocks come in', () => {
  it('run on their interval when the ledger is idle, and wait (at most their longest wait) while it takes blocks', async () => {
    const [a, b] = await twoNodes({ syncRounds: { roundEveryMs: 100, roundDeferMaxMs: 1000 } });
    try {
      const syncer = a.node.syncer!;
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const idle0 = syncer.progress.rounds;
      await sleep(1000);
      expect(syncer.progress.rounds - idle0).toBeGreaterThanOrEqual(4);
      expect(syncer.roundsDeferred).toBe(0);

      // Blocks committed without pause for 3 s: a round only when the last began 1 s ago or more.
      const w = await a.wallet();
      const rounds0 = syncer.progress.rounds;
      const deferred0 = syncer.roundsDeferred;
      let blocks = 0;
      for (const end = Date.now() + 3000; Date.now() < end; blocks++) await w.claim(1_000n);
      const rounds = syncer.progress.rounds - rounds0;
      expect(blocks).toBeGreaterThan(30);
      expect(rounds).toBeGreaterThanOrEqual(1);
      expect(rounds).toBeLessThanOrEqual(4);
      expect(syncer.roundsDeferred - deferred0).toBeGreaterThanOrEqual(10);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);
});
