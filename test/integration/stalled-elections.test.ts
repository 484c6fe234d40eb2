import { afterEach, describe, expect, it } from 'vitest';
import type { Wallet } from '../../node-core/client/wallet.ts';
import { keyPairFromSeed } from '../../node-core/protocol/index.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { delegate } from '../helpers/p2p.ts';

/**
 * A representative holding 40 % of the weight is offline: no block reaches the 67 % quorum, each
 * waits for the fallback (more than half after the delay). Every account with a block waiting has
 * an open election. Consensus used to look at all of them again with every commit, which cost
 * 18 µs an election a commit and took a node from 3,000 to 240 blocks/s (issue #18); each is now
 * looked at again when its own timers or its backoff come due.
 */
describe('elections stalled for want of votes', () => {
  let t: TestNode | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  const OFFLINE = keyPairFromSeed(new Uint8Array(32).fill(91)).address;
  /** 17 of the genesis's 42 million XE delegated to a representative that never votes: 40 %. */
  const SHARE = 17_000_000_000_000n;

  async function delegateAway(node: TestNode): Promise<{ treasury: Wallet; holder: Wallet }> {
    const wallets = await delegate(node, OFFLINE, SHARE);
    expect(node.node.ledger.repWeightView().get(OFFLINE)).toBe(SHARE);
    return wallets;
  }

  /** `n` new accounts each opened by a claim: `n` elections left open. */
  async function openAccounts(node: TestNode, n: number): Promise<string[]> {
    const wallets = await Promise.all(Array.from({ length: n }, () => node.wallet()));
    const blocks = await Promise.all(wallets.map((w) => w.claim(1_000_000n)));
    return blocks.map((b) => b.hash!);
  }

  const finalized = (node: TestNode, hashes: string[]) =>
    hashes.filter((h) => node.node.ledger.getBlock(h)?.finalized).length;

  async function until(cond: () => boolean, timeoutMs: number): Promise<number> {
    const started = Date.now();
    while (!cond()) {
      if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return Date.now() - started;
  }

  it('a commit looks again at the accounts it touched, not at every open election; all decide at the fallback', async () => {
    const node = (t = await startTestNode({ consensusTiming: { fallbackMs: 4_000 } }));
    await delegateAway(node);
    const N = 150;
    const open = await openAccounts(node, N);
    expect(finalized(node, open)).toBe(0);
    expect(node.node.ledger.unfinalizedAccounts().length).toBeGreaterThanOrEqual(N);
    // `/ready` counts them without listing them; the count is the list's length.
    const ready = (await (await fetch(`${node.node.url}/ready`)).json()) as { unfinalized_positions: number };
    expect(ready.unfinalized_positions).toBe(node.node.ledger.unfinalizedAccounts().length);

    // Each consensus pass over an account starts by asking its height: count those asks while 20
    // more blocks are committed one by one. Looking at every open election with every commit
    // would be at least 20 x 150; the 20 accounts touched and the elections whose retry falls
    // inside the window are a few hundred at most.
    const ledger = node.node.ledger;
    const heightOf = ledger.heightOf.bind(ledger);
    let asks = 0;
    ledger.heightOf = (address: string) => {
      asks += 1;
      return heightOf(address);
    };
    const more: string[] = [];
    try {
      for (let i = 0; i < 20; i++) more.push(...(await openAccounts(node, 1)));
    } finally {
      ledger.heightOf = heightOf;
    }
    expect(asks).toBeLessThan(3 * N);

    // Nothing is lost by looking less often: every election decides once its fallback runs out.
    const all = [...open, ...more];
    await until(() => finalized(node, all) === all.length, 12_000);
    expect(node.node.ledger.unfinalizedAccounts()).toEqual([]);
  });

  it("an account's chain waiting for the fallback decides together, not one fallback after another", async () => {
    const FALLBACK = 2_000;
    const node = (t = await startTestNode({ consensusTiming: { fallbackMs: FALLBACK } }));
    const { treasury } = await delegateAway(node);
    // A claim and 7 sends, committed within a moment: 8 positions, each gated on the one before.
    const w = await node.wallet();
    const chain = [(await w.claim(1_000_000n)).hash!];
    for (let i = 0; i < 7; i++) chain.push((await w.send(treasury.address, 1n)).hash!);
    const committed = Date.now();
    await until(() => finalized(node, chain) === chain.length, 30_000);
    const ms = Date.now() - committed;
    // Each position's delay runs from its block's commit: all 8 are final about one delay after
    // the chain was committed. Measured from each election's first vote, as before, the eighth
    // waited for 8 delays (16 s).
    expect(ms).toBeLessThan(3 * FALLBACK);
  });

  it('elections stalled short of the quorum decide within the backoff once weight moves back, with no vote and no fallback', async () => {
    const node = (t = await startTestNode({ consensusTiming: { fallbackMs: 600_000 } }));
    const { treasury, holder } = await delegateAway(node);
    const open = await openAccounts(node, 30);
    // Past the first retry (at 1 s), so the backoff has grown to 2 s.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(finalized(node, open)).toBe(0);
    // The offline representative's weight goes back to the treasury's (sent funds are nobody's
    // weight until received): this node's representative holds the quorum again.
    await holder.send(treasury.address, SHARE);
    const ms = await until(() => finalized(node, open) === open.length, 12_000);
    // These had been retried once: each is looked at again within 2 s (the schedule's tick and a
    // loaded machine's timers added, well within 6 s), long before the fallback's 10 minutes.
    expect(ms).toBeLessThan(6_000);
    await until(() => node.node.ledger.unfinalizedAccounts().length === 0, 5_000);
  });

  it('re-affirms every open election in slices, not in one turn of the event loop (a recording sink in place of gossip)', async () => {
    const node = (t = await startTestNode({ consensusTiming: { fallbackMs: 600_000, reaffirmMs: 1_000 } }));
    await delegateAway(node);
    const open: string[] = [];
    for (let i = 0; i < 1_000; i += 25) open.push(...(await openAccounts(node, 25)));
    // Each turn of the event loop runs the ticker once: the votes sent are counted per turn.
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn += 1;
      if (ticking) setImmediate(tick);
    };
    tick();
    const perTurn = new Map<number, number>();
    const sent = new Map<string, number>();
    node.node.consensus.setSink({
      broadcast: (vote) => {
        perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
        sent.set(vote.block_hash, (sent.get(vote.block_hash) ?? 0) + 1);
      },
    });
    try {
      await until(() => open.every((h) => (sent.get(h) ?? 0) >= 1), 5_000);
    } finally {
      ticking = false;
    }
    expect(finalized(node, open)).toBe(0);
    // 1,000 positions in slices of 200: at least 5 turns, none with more than a slice.
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(200);
    expect(perTurn.size).toBeGreaterThanOrEqual(5);
  });
});
