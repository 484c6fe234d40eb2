import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

describe('a development node: claim, send, receive, finality', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('claims test funds, sends with a memo, receives, and finalizes every block', async () => {
    const alice = await t.wallet();
    const bob = await t.wallet();
    await alice.claim(1_000_000_000n);
    expect(await t.client.balances(alice.address)).toEqual({ XE: 1_000_000_000n });
    const send = await alice.send(bob.address, 250_000_000n, 'XE', 'lunch 🍜');
    const pending = await t.client.pending(bob.address);
    expect(pending).toEqual([
      { hash: send.hash, from: alice.address, amount: 250_000_000n, asset: 'XE', timestamp: send.timestamp },
    ]);
    await bob.receiveAll();
    expect(await t.client.balances(bob.address)).toEqual({ XE: 250_000_000n });
    expect(await t.client.balances(alice.address)).toEqual({ XE: 750_000_000n });
    expect(await t.client.pending(bob.address)).toEqual([]);
    await waitFor(
      async () => (await t.client.chain(bob.address))!.blocks.every((b) => b.finalized),
      5000,
      'finality',
    );
    const chain = await t.client.chain(alice.address);
    expect(chain!.total).toBe(2);
    expect(chain!.blocks.map((b) => b.block.type)).toEqual(['claim', 'send']);
    expect(chain!.blocks[1]!.block.memo).toBe('lunch 🍜');
  });
});
