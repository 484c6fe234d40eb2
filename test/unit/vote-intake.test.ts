import { describe, expect, it } from 'vitest';
import { PreverifiedSignatures } from '../../node-core/net/preverified.ts';
import { countEncodedVoteBatches, countVoteBatch, countVotes } from '../../node-core/net/vote-intake.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed, signBytes } from '../../node-core/protocol/keys.ts';
import { signVote } from '../../node-core/protocol/vote.ts';
import { decodeSignedVoteBatch, encodeSignedVoteBatch } from '../../node-core/protocol/vote-batch.ts';
import type { Vote } from '../../node-core/protocol/vote.ts';

type SignedVote = Vote & { signature: string };

const vote = (i: number, final: boolean): SignedVote => ({
  rep_pub_key: 'aa'.repeat(32),
  block_hash: i.toString(16).padStart(64, '0'),
  account: 'bb'.repeat(32),
  previous: '0',
  timestamp: 1n,
  final,
  signature: 'cc'.repeat(64),
});

describe('counting many votes', () => {
  it('checks ahead only the final votes consensus will look at; converge votes wait for their budget (C-07)', async () => {
    const checked: string[] = [];
    const counted: string[] = [];
    const votes = [vote(1, true), vote(2, false), vote(3, true), vote(4, false)];
    const verdicts = await countVotes(votes, {
      consensus: {
        // Vote 3 is a duplicate: consensus would set it aside before any signature work.
        worthChecking: (v) => v.block_hash !== vote(3, true).block_hash,
        onVote: (v) => {
          counted.push(v.block_hash);
          return v.final ? 'accept' : 'ignore';
        },
      },
      verifier: {
        verify: (_s, msg) => {
          checked.push(Buffer.from(msg.subarray(33, 65)).toString('hex'));
          return Promise.resolve(true);
        },
      },
      preverified: new PreverifiedSignatures(),
    });
    expect(checked).toEqual([vote(1, true).block_hash]);
    expect(counted).toEqual(votes.map((v) => v.block_hash));
    expect(verdicts).toEqual(['accept', 'ignore', 'accept', 'ignore']);
  });

  it('counts in slices: other work runs between them', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const slow = (v: SignedVote) => {
      const end = performance.now() + 1;
      while (performance.now() < end);
      return v.final ? ('accept' as const) : ('ignore' as const);
    };
    await countVotes(
      Array.from({ length: 40 }, (_, i) => vote(i, true)),
      { consensus: { onVote: slow } },
    );
    clearInterval(timer);
    // 40 ms of counting in slices of at most 4 ms: the timer ran between them.
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it('a batch-signed batch: one signature check, then every vote counted as authenticated; a bad one counts none', async () => {
    const seed = new Uint8Array(32).fill(5);
    const key = keyPairFromSeed(seed).pub_key;
    const votes = [1, 2, 3].map((i) => signVote({ ...vote(i, true), rep_pub_key: key }, seed));
    const counted: [string, boolean | undefined][] = [];
    const checks: number[] = [];
    const deps = (ok: boolean) => ({
      consensus: {
        onVote: (v: SignedVote, authenticated?: boolean) => {
          counted.push([v.block_hash, authenticated]);
          return 'accept' as const;
        },
      },
      verifier: {
        verify: (_s: Uint8Array, msg: Uint8Array) => {
          checks.push(msg.length);
          return Promise.resolve(ok);
        },
      },
    });
    const batch = decodeSignedVoteBatch(encodeSignedVoteBatch(key, 0n, votes, (m) => signBytes(m, seed)));
    expect(await countVoteBatch(batch, deps(false))).toBeUndefined();
    expect(counted).toEqual([]);
    expect(await countVoteBatch(batch, deps(true))).toEqual(['accept', 'accept', 'accept']);
    // One check per batch (of its 48-byte domain-separated message), none per vote.
    expect(checks).toEqual([48, 48]);
    expect(counted).toEqual(votes.map((v) => [v.block_hash, true]));
    // Without a pool the batch signature is checked here, for real.
    counted.length = 0;
    const inline = { consensus: deps(true).consensus };
    expect(await countVoteBatch(batch, inline)).toHaveLength(3);
    const forged = { ...batch, signature: hexToBytes('00'.repeat(64)) };
    expect(await countVoteBatch(forged, inline)).toBeUndefined();
    expect(counted).toHaveLength(3);
  });

  it('batches as a sync peer sends them (base64): each verified for real and counted; forged or malformed ones count nothing', async () => {
    const seed = new Uint8Array(32).fill(7);
    const key = keyPairFromSeed(seed).pub_key;
    const signed = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => signVote({ ...vote(from + i, true), rep_pub_key: key }, seed));
    const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
    const good = encodeSignedVoteBatch(key, 5n, signed(0, 4), (m) => signBytes(m, seed));
    const forged = new Uint8Array(encodeSignedVoteBatch(key, 5n, signed(10, 3), (m) => signBytes(m, seed)));
    forged[forged.length - 1]! ^= 1; // the batch signature's last byte
    const tampered = new Uint8Array(encodeSignedVoteBatch(key, 5n, signed(20, 2), (m) => signBytes(m, seed)));
    tampered[90]! ^= 1; // a byte of the first vote's block hash: the batch signature does not cover it
    const counted: [string, boolean | undefined][] = [];
    const n = await countEncodedVoteBatches(
      [42, null, 'not base64 of a batch!', b64(good.subarray(0, 100)), b64(forged), b64(tampered), b64(good)],
      {
        consensus: {
          onVote: (v, authenticated) => {
            counted.push([v.block_hash, authenticated]);
            return 'accept';
          },
        },
      },
    );
    // Only the good batch's four votes, each counted on its batch signature.
    expect(n).toBe(4);
    expect(counted).toEqual(signed(0, 4).map((v) => [v.block_hash, true]));
  });
});
