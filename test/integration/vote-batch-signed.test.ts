import { afterAll, describe, expect, it } from 'vitest';
import { TOPICS } from '../../node-core/net/gossip.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { signBytes } from '../../node-core/protocol/keys.ts';
import { signVote } from '../../node-core/protocol/vote.ts';
import { encodeSignedVoteBatch } from '../../node-core/protocol/vote-batch.ts';
import { gossipPeer } from '../helpers/gossip-peer.ts';
import { type TestNode, waitFor } from '../helpers/node.ts';
import { burst, finalEverywhere, lineOfThree, peerCount, threeNodes } from '../helpers/p2p.ts';

/**
 * Batch-signed votes (protocol/vote-batch.ts, issue #18): a representative's votes of one commit go
 * out under one signature while every peer takes the format, and receivers count them as the same
 * votes arriving singly. A node that does not take the format (an older version) still gets every
 * vote with its own signature, also when it hears of them only through a node that took the batch.
 */

describe('batch-signed votes between three real nodes', () => {
  const started: TestNode[] = [];
  afterAll(async () => {
    await Promise.all(started.map((t) => t.stop()));
  });

  it('votes travel batch-signed and every block becomes final on all three', async () => {
    const [a, b, c] = await threeNodes();
    started.push(a, b, c);
    const host = a.node.p2p!;
    await waitFor(
      () => Promise.resolve(host.allSubscribe(TOPICS.signedVoteBatches)),
      10_000,
      'peers subscribed to batch-signed votes',
    );
    const ballotsBefore = a.node.consensus.heldBallotPositions;
    const hashes = await burst(a);
    await finalEverywhere(hashes, [a, b, c]);
    // a decided each block in the write that applied it: the final vote it cast there is not kept
    // as a ballot until the 30 s sweep (a decided position answers vote requests afresh).
    expect(a.node.consensus.heldBallotPositions - ballotsBefore).toBeLessThan(hashes.length);
    const sent = host.gossipBatching.signedVotes!;
    expect(sent.batches).toBeGreaterThan(0);
    // Several votes under one signature, not one batch per vote.
    expect(sent.batched_votes).toBeGreaterThan(sent.batches);
    // The receivers counted them off the batch signature.
    for (const t of [b, c]) {
      expect(t.node.p2p!.signedVotesIn.batches).toBeGreaterThan(0);
      expect(t.node.p2p!.signedVotesIn.votes).toBeGreaterThan(t.node.p2p!.signedVotesIn.batches);
    }
    await Promise.all([a, b, c].map((t) => t.stop()));
    started.length = 0;
  }, 120_000);

  it('an older node behind a newer one (a - b - c, c without the format) finalizes every block', async () => {
    const [a, b, c] = await lineOfThree(started);
    c.node.p2p!.leaveSignedVoteBatches();
    await waitFor(
      async () => (await peerCount(b)) === 2 && (await peerCount(c)) >= 1,
      15_000,
      'a - b - c connected',
    );
    await waitFor(
      () => Promise.resolve(!b.node.p2p!.allSubscribe(TOPICS.signedVoteBatches)),
      10_000,
      "c's unsubscription seen by b",
    );
    expect(await peerCount(a)).toBe(1); // a hears of c only through b
    await waitFor(
      () => Promise.resolve(a.node.p2p!.allSubscribe(TOPICS.signedVoteBatches)),
      10_000,
      "b's subscription seen by a",
    );
    const hashes = await burst(a);
    await finalEverywhere(hashes, [a, b, c]);
    expect(await peerCount(a)).toBe(1);
    // a's only peer takes the format: a signed batches, and b counted them off the batch signature.
    expect(a.node.p2p!.gossipBatching.signedVotes!.batches).toBeGreaterThan(0);
    expect(b.node.p2p!.signedVotesIn.batches).toBeGreaterThan(0);
    // b passed the votes on to c with their own signatures (c takes vote batches, not this format).
    expect(b.node.p2p!.gossipBatching.votes.batched_items).toBeGreaterThan(0);
    // c counted no batch-signed vote: every vote reached it singly signed, and it finalized.
    expect(c.node.p2p!.signedVotesIn.batches).toBe(0);
  }, 120_000);

  it('a node that does not take the format, connected to the representative, finalizes every block', async () => {
    const [a, b, c] = await threeNodes();
    started.push(a, b, c);
    c.node.p2p!.leaveSignedVoteBatches();
    const host = a.node.p2p!;
    await waitFor(
      () => Promise.resolve(!host.allSubscribe(TOPICS.signedVoteBatches)),
      10_000,
      "c's unsubscription seen by a",
    );
    const before = structuredClone(host.gossipBatching);
    const hashes = await burst(a);
    await finalEverywhere(hashes, [a, b, c]);
    const after = host.gossipBatching;
    // a signed no batch while c does not take them: its votes went singly signed (in vote batches).
    expect(after.signedVotes!.batches).toBe(before.signedVotes!.batches);
    expect(after.signedVotes!.fallback).toBeGreaterThan(before.signedVotes!.fallback);
    expect(after.votes.batches).toBeGreaterThan(before.votes.batches);
  }, 120_000);

  it("a vote whose own signature is bad is not passed on to a node without the format, its batch's good votes are", async () => {
    // a - b - c with c not taking the format, and a bare peer on b that sends a batch under a's key
    // (only a's key could sign one) in which one vote carries a bad single signature.
    const [a, b, c] = await lineOfThree(started);
    c.node.p2p!.leaveSignedVoteBatches();
    await waitFor(async () => (await peerCount(b)) === 2, 15_000, 'a - b - c connected');
    const peer = await gossipPeer(b, 3);
    try {
      await waitFor(
        () => Promise.resolve(!b.node.p2p!.allSubscribe(TOPICS.signedVoteBatches)),
        10_000,
        "c's unsubscription seen by b",
      );
      const seed = hexToBytes(a.node.nodeKey.seed_hex);
      const rnd = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
      const vote = (hash: string) =>
        signVote(
          {
            rep_pub_key: a.node.nodeKey.pub_key,
            block_hash: hash,
            account: rnd(),
            previous: '0',
            timestamp: b.node.now(),
            final: true,
          },
          seed,
        );
      const good = vote(rnd());
      const bad = { ...vote(rnd()), signature: '11'.repeat(64) };
      const batch = encodeSignedVoteBatch(a.node.nodeKey.pub_key, 1n, [good, bad], (m) => signBytes(m, seed));
      const relayed = () => {
        const v = b.node.p2p!.gossipBatching.votes;
        return v.singles + v.batched_items;
      };
      const before = relayed();
      await peer.services.pubsub.publish(TOPICS.signedVoteBatches, batch);
      const rep = a.node.nodeKey.address;
      // b counts both (the batch signature holds); c gets the good one alone, singly signed.
      await waitFor(
        () => Promise.resolve(b.node.consensus.votersFor(bad.block_hash).includes(rep)),
        10_000,
        'b counted',
      );
      await waitFor(
        () => Promise.resolve(c.node.consensus.votersFor(good.block_hash).includes(rep)),
        10_000,
        'c counted the good vote',
      );
      await new Promise((r) => setTimeout(r, 500));
      expect(c.node.consensus.votersFor(bad.block_hash)).toEqual([]);
      // b passed on one vote, not the forged one (c would have refused it, and scored b down).
      expect(relayed() - before).toBe(1);
    } finally {
      await peer.stop();
    }
  }, 120_000);
});
