import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIGEST_BUCKETS } from '../../node-core/ledger/frontier-digests.ts';
import type { SyncProgress } from '../../node-core/net/sync.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { listenAddr, P2P } from '../helpers/p2p.ts';

/**
 * Sync rounds compare frontier digests first (ledger/frontier-digests.ts, issue #18): two nodes in
 * step exchange no frontiers at all; after one missed a block, only the bucket of accounts holding
 * it is read; a peer that gives no digests (an older version) is compared in full, as before.
 */

let a: TestNode;
let genesisDir: string;
const ACCOUNTS = 40;

beforeAll(async () => {
  a = await startTestNode({ ...P2P });
  genesisDir = join(a.dataDir, 'genesis');
  const wallets = await Promise.all(Array.from({ length: ACCOUNTS }, () => a.wallet()));
  await Promise.all(wallets.map((w) => w.claim(1_000n)));
}, 60_000);
afterAll(async () => {
  await a?.stop();
});

const progress = (t: TestNode) => t.node.syncer!.progress;

/** Runs one more sync round of `t` with `a` and resolves with its progress after it. */
async function oneRound(t: TestNode): Promise<SyncProgress> {
  const before = progress(t).rounds;
  t.node.syncer!.request(a.node.nodeId);
  await waitFor(async () => progress(t).rounds > before, 20_000, 'a sync round');
  return { ...progress(t) };
}

async function joined(dataDir?: string): Promise<TestNode> {
  const t = await startTestNode({
    ...P2P,
    genesisDir,
    dial: [await listenAddr(a)],
    ...(dataDir ? { dataDir } : {}),
  });
  await waitFor(
    async () => (await t.client.node()).block_count === (await a.client.node()).block_count,
    30_000,
    'catch-up',
  );
  await waitFor(async () => progress(t).state === 'idle', 10_000, 'the round to end');
  return t;
}

describe('frontier digests in sync rounds', () => {
  it('nodes in step exchange no frontiers; a missed block costs only its bucket', async () => {
    const accounts = (await a.client.node()).accounts;
    let b = await joined();
    try {
      // The first round compared everything that differed: the joiner held nothing but the genesis.
      expect(progress(b).frontier_entries).toBeGreaterThanOrEqual(ACCOUNTS);
      const settled = { ...progress(b) };
      const idle = await oneRound(b);
      expect(idle.last_round_ok).toBe(true);
      expect(idle.frontier_entries).toBe(settled.frontier_entries);
      expect(idle.buckets_skipped - settled.buckets_skipped).toBe(DIGEST_BUCKETS);

      // B misses a new account's blocks while it is down; its next start reads that bucket only.
      await b.stop({ keepData: true });
      const w = await a.wallet();
      await w.claim(5_000n);
      await w.send(a.keys.treasury.address, 1n);
      b = await joined(b.dataDir);
      const after = progress(b);
      expect(await b.client.balances(w.address)).toEqual(await a.client.balances(w.address));
      expect(after.frontier_entries).toBeGreaterThan(0);
      expect(after.frontier_entries).toBeLessThan(accounts / 4);
      expect(after.buckets_skipped).toBeGreaterThanOrEqual(DIGEST_BUCKETS - 2);
    } finally {
      await b.stop();
    }
  }, 120_000);

  it('a peer without digests is compared in full, and what it holds is still pulled', async () => {
    const b = await joined();
    const answer = a.node.syncer!.answer.bind(a.node.syncer!);
    // As an older version answers: no such request.
    a.node.syncer!.answer = async (type, payload) =>
      type === 'frontier_digests' ? undefined : answer(type, payload);
    try {
      const accounts = (await a.client.node()).accounts;
      const before = { ...progress(b) };
      const round = await oneRound(b);
      expect(round.last_round_ok).toBe(true);
      expect(round.frontier_entries - before.frontier_entries).toBe(accounts);
      expect(round.buckets_skipped).toBe(before.buckets_skipped);
    } finally {
      a.node.syncer!.answer = answer;
      await b.stop();
    }
  }, 120_000);
});
