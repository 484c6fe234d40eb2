import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerReads } from '../../node-core/ledger/reads.ts';
import { keyPairFromSeed } from '../../node-core/protocol/index.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * The ledger keeps the committed representative weights in memory (consensus asks for them after
 * every commit): after delegations and moves of weight, committed in groups of several blocks, they
 * must equal what the reps table holds.
 */
describe('representative weights kept in memory', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const table = () => LedgerReads.prototype.repWeights.call(t.node.ledger);

  it('equal the stored table after every commit, groups of blocks included', async () => {
    const ledger = t.node.ledger;
    expect(ledger.repWeights()).toEqual(table()); // read once: kept from here on
    const treasury = await t.wallet(seedOf(t.keys.treasury.seed_hex));
    const reps = [1, 2, 3].map((i) => keyPairFromSeed(new Uint8Array(32).fill(60 + i)).address);
    const holders = await Promise.all(reps.map(() => t.wallet()));
    for (const [i, h] of holders.entries()) {
      const s = await treasury.send(h.address, 1_000_000_000n * BigInt(i + 1));
      h.delegateTo(reps[i]!);
      await h.receive({
        hash: s.hash!,
        from: treasury.address,
        amount: s.amount!,
        asset: 'XE',
        timestamp: s.timestamp,
      });
      expect(ledger.repWeights()).toEqual(table());
    }
    expect(ledger.repWeights().get(reps[2]!)).toBe(3_000_000_000n);

    // Weight moves between representatives in blocks submitted together (one group, or a few).
    await Promise.all(
      holders.map((h, i) => h.send(holders[(i + 1) % holders.length]!.address, 100_000_000n)),
    );
    expect(ledger.repWeights()).toEqual(table());
    // A holder moves its whole delegation to another representative.
    holders[0]!.delegateTo(reps[1]!);
    await holders[0]!.send(holders[1]!.address, 1n);
    const now = ledger.repWeights();
    expect(now).toEqual(table());
    expect(now.get(reps[0]!) ?? 0n).toBe(0n);

    // What a caller does with its copy does not change the kept weights.
    now.set(reps[0]!, 5n);
    expect(ledger.repWeights()).toEqual(table());
  });
});
