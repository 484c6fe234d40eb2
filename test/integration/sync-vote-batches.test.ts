import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import {
  decodeSignedVoteBatch,
  MAX_SIGNED_BATCH_VOTES,
  verifyVoteBatch,
} from '../../node-core/protocol/vote-batch.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { burst, finalEverywhere, listenAddr, P2P } from '../helpers/p2p.ts';

/**
 * Final votes for a node catching up, batch-signed (issue #18): asked with `batches`, a
 * representative answers `final_votes` with its votes under one signature per batch of up to 256,
 * and the joining node checks that one signature instead of one per vote. A node of an older version
 * answers single votes; a newer node syncing from it still makes the history final.
 */

interface FinalVotesAnswer {
  votes: unknown[];
  batches?: string[];
}

describe('final votes for a catching-up node, batch-signed', () => {
  const started: TestNode[] = [];
  let a: TestNode;
  /** More blocks than one batch holds, all final on `a`. */
  const hashes: string[] = [];

  beforeAll(async () => {
    a = await startTestNode({ ...P2P });
    started.push(a);
    while (hashes.length <= MAX_SIGNED_BATCH_VOTES) hashes.push(...(await burst(a)));
    await finalEverywhere(hashes, [a]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(started.map((t) => t.stop()));
  });

  /** A node joining `a`: once it holds the history as final, the final votes its sync counted. */
  async function joinAndCount(): Promise<{ single: number; batched: number }> {
    const t = await startTestNode({
      ...P2P,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
    });
    started.push(t);
    await finalEverywhere(hashes, [t]);
    return t.node.syncer!.finalVotesIn;
  }

  it('a representative answers batches of at most 256 votes under its key, one vote per final block asked', async () => {
    const syncer = a.node.syncer!;
    const unknown = 'ab'.repeat(32);
    // A hash asked twice gets one vote; one not held gets none.
    const asked = [...hashes, hashes[0]!, unknown];
    const answer = (await syncer.answer('final_votes', { hashes: asked, batches: true })) as FinalVotesAnswer;
    expect(answer.votes).toEqual([]);
    const batches = answer.batches!.map((b) => decodeSignedVoteBatch(Buffer.from(b, 'base64')));
    expect(batches.map((b) => b.votes.length)).toEqual([
      MAX_SIGNED_BATCH_VOTES,
      hashes.length - MAX_SIGNED_BATCH_VOTES,
    ]);
    const voted = batches.flatMap((b) => b.votes);
    expect(voted.map((v) => v.block_hash).sort()).toEqual([...hashes].sort());
    expect(voted.every((v) => v.final)).toBe(true);
    // The same key as its single votes, and each batch signature checks out under it.
    const singles = (await syncer.answer('final_votes', { hashes })) as FinalVotesAnswer;
    expect(singles.batches).toBeUndefined();
    expect(singles.votes).toHaveLength(hashes.length);
    const single = singles.votes[0] as { RepPubKey?: string; rep_pub_key?: string };
    const repKey = single.RepPubKey ?? single.rep_pub_key;
    for (const b of batches) {
      expect(b.rep_pub_key).toBe(repKey);
      expect(verifyVoteBatch(b, verifyBytesNode)).toBe(true);
    }
    const forged = { ...batches[0]!, signature: batches[1]!.signature };
    expect(verifyVoteBatch(forged, verifyBytesNode)).toBe(false);
  });

  it('a joining node makes the history final from batches, with no single vote', async () => {
    const got = await joinAndCount();
    expect(got.batched).toBeGreaterThanOrEqual(hashes.length);
    expect(got.single).toBe(0);
  }, 120_000);

  it('from a peer of an older version (single votes only) the same history becomes final', async () => {
    a.node.syncer!.answersBatches = false;
    const got = await joinAndCount();
    expect(got.single).toBeGreaterThanOrEqual(hashes.length);
    expect(got.batched).toBe(0);
  }, 120_000);
});
