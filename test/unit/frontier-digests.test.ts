import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bucketOf,
  DIGEST_BUCKETS,
  DIGEST_BYTES,
  differingRanges,
  FrontierDigests,
} from '../../node-core/ledger/frontier-digests.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Frontier digests (sync rounds, issue #18) on a real ledger: the digests a node keeps between its
 * writes are the ones a fresh computation gives, whatever was written meanwhile, so two nodes holding
 * the same frontiers always agree and a change always shows in its bucket.
 */

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode({});
});
afterAll(async () => {
  await t?.stop();
});

const now = () => Promise.resolve();
const fresh = () => new FrontierDigests((b) => t.node.ledger.accountHeadsInBucket(b)).all(now);

describe('FrontierDigests', () => {
  it('kept digests equal a fresh computation after writes, and only written buckets change', async () => {
    const wallets = await Promise.all(Array.from({ length: 30 }, () => t.wallet()));
    await Promise.all(wallets.map((w) => w.claim(1_000n)));
    const kept = t.node.ledger.frontierDigests;
    const first = await kept.all(now);
    expect(first).toEqual(await fresh());

    // Another block on one account: its bucket's digest changes, every other stays, and nothing
    // but that bucket is computed again.
    const computed = kept.computed;
    await wallets[0]!.send(wallets[1]!.address, 1n);
    const second = await kept.all(now);
    expect(second).toEqual(await fresh());
    expect(kept.computed - computed).toBe(1);
    expect(differingRanges(first, second)).toEqual([
      [bucketOf(wallets[0]!.address), bucketOf(wallets[0]!.address)],
    ]);

    // A new account in a bucket, and one more block on an account of another.
    const w = await t.wallet();
    await w.claim(5n);
    await wallets[2]!.send(w.address, 1n);
    expect(await kept.all(now)).toEqual(await fresh());
  }, 60_000);

  it('differing buckets come as ranges of consecutive buckets', () => {
    const a = new Uint8Array(DIGEST_BUCKETS * DIGEST_BYTES);
    const b = Uint8Array.from(a);
    expect(differingRanges(a, b)).toEqual([]);
    for (const bucket of [3, 4, 5, 9, 255]) b[bucket * DIGEST_BYTES + 7] = 1;
    expect(differingRanges(a, b)).toEqual([
      [3, 5],
      [9, 9],
      [255, 255],
    ]);
    // A digest set of another size (another version's buckets) differs everywhere.
    expect(differingRanges(a, new Uint8Array(16))).toEqual([[0, DIGEST_BUCKETS - 1]]);
  });
});
