import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Wallet } from '../../node-core/client/wallet.ts';
import { TOPICS } from '../../node-core/net/gossip.ts';
import { type TestNode, waitFor } from '../helpers/node.ts';
import { finalEverywhere, twoNodes } from '../helpers/p2p.ts';

/**
 * The gossip window (NodeOptions.gossipWindowMs, net/flush-pacer.ts; issue #18): under a steady
 * stream a node sends its blocks at most once a window, each batch carrying what several commits
 * accepted, and the peer still gets and finalizes every block.
 */
describe('gossip window', () => {
  let a: TestNode;
  let b: TestNode;

  beforeAll(async () => {
    [a, b] = await twoNodes({ gossipWindowMs: 1000 });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('a stream of 11 rounds that each waited for the one before goes out in a few batches', async () => {
    const host = a.node.p2p!;
    await waitFor(() => Promise.resolve(host.allSubscribe(TOPICS.blockBatches)), 10_000, 'batch topic');
    // 16 accounts, each a claim then 10 sends, one at a time: a round's blocks reach a only after
    // the round before was committed (and, without a window, gossiped in its own batch).
    const wallets: Wallet[] = await Promise.all(Array.from({ length: 16 }, () => a.wallet()));
    const hashes: string[] = [];
    const before = structuredClone(host.gossipBatching.blocks);
    await Promise.all(
      wallets.map(async (w, i) => {
        hashes.push((await w.claim(1_000_000n)).hash!);
        for (let k = 0; k < 10; k++)
          hashes.push((await w.send(wallets[(i + 1) % wallets.length]!.address, 1n)).hash!);
      }),
    );
    await finalEverywhere(hashes, [a, b]);
    const sent = host.gossipBatching.blocks;
    const items = sent.batched_items + sent.singles - before.batched_items - before.singles;
    const messages = sent.batches + sent.singles - before.batches - before.singles;
    expect(items).toBe(hashes.length);
    // One message per round at least without the window (11 rounds); with it, the rounds after
    // the first busy send share a few.
    expect(messages).toBeLessThanOrEqual(6);
    // a's votes for a window's blocks go out with them (one pacer), so b, which has no votes of its
    // own, holds them when it applies the blocks and finalizes nearly all in that same write.
    const onApply = (await b.client.get<{ consensus: { final_on_apply: number } }>('/node')).consensus
      .final_on_apply;
    expect(onApply).toBeGreaterThanOrEqual(Math.floor(hashes.length * 0.9));
  }, 90_000);
});
