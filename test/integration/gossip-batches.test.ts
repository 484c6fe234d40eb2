import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPICS } from '../../node-core/net/gossip.ts';
import { type TestNode, waitFor } from '../helpers/node.ts';
import { burst, finalEverywhere, threeNodes } from '../helpers/p2p.ts';

/**
 * Gossip batches (issue #18): blocks one commit accepts, and the votes it produces, travel as one
 * message each on `xe/block-batches` / `xe/vote-batches` while every peer takes them; a node that
 * does not (an older version: it does not subscribe to those topics) still gets every block and
 * vote as single messages, and finalizes them.
 */
describe('gossip batches between three nodes', () => {
  let a: TestNode;
  let b: TestNode;
  let c: TestNode;

  beforeAll(async () => {
    [a, b, c] = await threeNodes();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
  });

  it('blocks and votes go out in batches, and every node finalizes every block', async () => {
    const host = a.node.p2p!;
    await waitFor(
      () => Promise.resolve(host.allSubscribe(TOPICS.blockBatches) && host.allSubscribe(TOPICS.voteBatches)),
      10_000,
      'peers subscribed to the batch topics',
    );
    const hashes = await burst(a);
    await finalEverywhere(hashes, [a, b, c]);
    const sent = host.gossipBatching;
    expect(sent.blocks.batches).toBeGreaterThan(0);
    expect(sent.blocks.batched_items).toBeGreaterThan(sent.blocks.batches);
    // a's own votes go out batch-signed (one signature per batch: vote-batch-signed.test.ts).
    expect(sent.signedVotes!.batches).toBeGreaterThan(0);
  }, 90_000);

  it('a peer that does not take batches gets every block and vote alone, and finalizes them', async () => {
    const host = a.node.p2p!;
    c.node.p2p!.leaveBatchTopics();
    await waitFor(
      () => Promise.resolve(!host.allSubscribe(TOPICS.blockBatches)),
      10_000,
      "c's unsubscription seen by a",
    );
    const before = structuredClone(host.gossipBatching);
    const hashes = await burst(a);
    await finalEverywhere(hashes, [a, b, c]);
    const after = host.gossipBatching;
    expect(after.blocks.batches).toBe(before.blocks.batches);
    expect(after.votes.batches).toBe(before.votes.batches);
    expect(after.blocks.singles - before.blocks.singles).toBe(hashes.length);
  }, 90_000);
});
