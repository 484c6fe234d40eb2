import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { signVote } from '../../node-core/protocol/vote.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * A block whose final votes arrived first (gossip carries blocks and votes side by side) is final
 * in the write that applies it (issue #18): no second write, the same outcome as deciding it right
 * after. A node on the network of `a` (whose representative holds all the weight) takes a's votes.
 */
describe('finality on apply by votes that came first', () => {
  let a: TestNode;
  let b: TestNode;

  beforeAll(async () => {
    a = await startTestNode();
    b = await startTestNode({ genesisDir: join(a.dataDir, 'genesis') });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const finalVote = (block: Block) =>
    signVote(
      {
        rep_pub_key: a.node.nodeKey.pub_key,
        block_hash: block.hash!,
        account: block.account,
        previous: '0',
        timestamp: b.node.now(),
        final: true,
      },
      hexToBytes(a.node.nodeKey.seed_hex),
    );

  async function claim(): Promise<Block> {
    return (await b.wallet()).prepare({ type: 'claim', asset: 'XE', amount: 10n, balance: 10n });
  }

  it('is final as it is applied when the quorum of final votes is already counted', async () => {
    const block = await claim();
    expect(b.node.consensus.onVote(finalVote(block))).toBe('accept');
    const r = await b.node.ledger.submit(block, { live: true });
    expect(r.status).toBe('accepted');
    expect(r.finalized).toBe(true);
    expect(b.node.ledger.getBlock(block.hash!)?.finalized).toBe(true);
    expect(b.node.ledger.getAccount(block.account)?.final_height).toBe(1);
    // Its election records went with it.
    expect(b.node.consensus.votersFor(block.hash!)).toEqual([]);
  });

  it('without those votes it waits for them, and is finalized when they come', async () => {
    const block = await claim();
    const r = await b.node.ledger.submit(block, { live: true });
    expect(r.finalized).toBeFalsy();
    expect(b.node.ledger.getBlock(block.hash!)?.finalized).toBe(false);
    expect(b.node.consensus.onVote(finalVote(block))).toBe('accept');
    await waitFor(
      () => Promise.resolve(b.node.ledger.getBlock(block.hash!)?.finalized === true),
      5000,
      'final',
    );
  });

  it('a converge vote alone does not make it final', async () => {
    const block = await claim();
    expect(b.node.consensus.onVote({ ...finalVote(block), final: false, signature: '' })).toBe('reject');
    const converge = signVote(
      { ...finalVote(block), final: false, timestamp: b.node.now() },
      hexToBytes(a.node.nodeKey.seed_hex),
    );
    expect(b.node.consensus.onVote(converge)).toBe('accept');
    const r = await b.node.ledger.submit(block, { live: true });
    expect(r.finalized).toBeFalsy();
  });
});
