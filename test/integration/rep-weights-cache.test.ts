import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerReads } from '../../node-core/ledger/reads.ts';
import { keyPairFromSeed } from '../../node-core/protocol/index.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * The ledger keeps the committed representative weights in memory with their running sum (consensus
 * asks for a weight and the total with every vote): after delegations and moves of weight, committed
 * in groups of several blocks, they must equal what the reps table holds, and the sum its sum.
 */
describe('representative weights kept in memory', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const sum = (m: Map<string, bigint>) => [...m.values()].reduce((a, b) => a + b, 0n);
  const table = () => LedgerReads.prototype.repWeights.call(t.node.ledger);
  /** The kept view equals the table, its total the table's sum; returns the view's version. */
  const matches = (): number => {
    const view = t.node.ledger.repWeightView();
    const stored = table();
    expect(new Map(view.entries())).toEqual(stored);
    expect(view.size).toBe(stored.size);
    expect(view.total).toBe(sum(stored));
    return view.version;
  };

  it('equal the stored table after every commit, groups of blocks included', async () => {
    const ledger = t.node.ledger;
    matches(); // read once: kept from here on
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
      matches();
    }
    expect(ledger.repWeightView().get(reps[2]!)).toBe(3_000_000_000n);

    // Weight moves between representatives in blocks submitted together (one group, or a few).
    // Inline finality is asked, with every block applied, for the weights as the group's writes so
    // far leave them: the total it is given for the last of them is the table's sum once they are
    // committed (sent funds are delegated by no one until received, so each send lowers it). This
    // hook replaces consensus's: these blocks are finalized by its election instead.
    const totals: bigint[] = [];
    ledger.setInlineFinality((_block, _before, weights) => {
      totals.push(weights().total);
      return false;
    });
    await Promise.all(
      holders.map((h, i) => h.send(holders[(i + 1) % holders.length]!.address, 100_000_000n)),
    );
    expect(totals).toHaveLength(holders.length);
    expect(totals.at(-1)).toBe(sum(table()));
    expect(new Set(totals).size).toBe(holders.length);
    const before = matches();
    // A holder moves its whole delegation to another representative: its old one leaves the table.
    holders[0]!.delegateTo(reps[1]!);
    await holders[0]!.send(holders[1]!.address, 1n);
    expect(matches()).toBeGreaterThan(before); // consensus takes its figures again
    expect(ledger.repWeightView().get(reps[0]!)).toBeUndefined();
    expect(t.node.consensus.eligibleReps()).toBe(table().size);
  });
});
