import { describe, expect, it } from 'vitest';
import { sha256Node } from '../../node-core/fastpath/block-hash.ts';
import { isProtocolError } from '../../node-core/protocol/errors.ts';
import { sha256 } from '../../node-core/protocol/hash.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed, signBytes, verifyBytes } from '../../node-core/protocol/keys.ts';
import {
  signVote,
  type Vote,
  verifyVote,
  voteMessage,
  writeVoteMessage,
} from '../../node-core/protocol/vote.ts';
import {
  decodeSignedVoteBatch,
  encodeSignedVoteBatch,
  MAX_SIGNED_BATCH_BYTES,
  MAX_SIGNED_BATCH_VOTES,
  VOTE_BATCH_DOMAIN,
  verifyVoteBatch,
} from '../../node-core/protocol/vote-batch.ts';

const seed = new Uint8Array(32).fill(7);
const rep = keyPairFromSeed(seed);
const other = keyPairFromSeed(new Uint8Array(32).fill(9));

function vote(i: number, final = true, key = rep.pub_key, s = seed): Vote & { signature: string } {
  return signVote(
    {
      rep_pub_key: key,
      block_hash: (i + 1).toString(16).padStart(64, '0'),
      account: 'ab'.repeat(32),
      previous: i % 2 === 0 ? '0' : 'cd'.repeat(32),
      timestamp: 1_700_000_000_000_000_000n + BigInt(i),
      final,
    },
    s,
  );
}

const sign = (m: Uint8Array) => signBytes(m, seed);
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return isProtocolError(e) ? e.code : 'not a ProtocolError';
  }
  return 'no error';
};

describe('batch-signed votes (protocol/vote-batch.ts)', () => {
  it('round-trips: every vote, its single signature, the weight', () => {
    const votes = [vote(0), vote(1), vote(2, false)];
    const bytes = encodeSignedVoteBatch(rep.pub_key, 123_456_789_012_345_678_901_234n, votes, sign);
    expect(bytes.length).toBe(51 + 3 * 202 + 64);
    const b = decodeSignedVoteBatch(bytes);
    expect(b.rep_pub_key).toBe(rep.pub_key);
    expect(b.weight).toBe(123_456_789_012_345_678_901_234n);
    expect(b.votes).toEqual(votes);
    expect(verifyVoteBatch(b, verifyBytes)).toBe(true);
    // Each vote's own signature travels intact, for peers that take only single votes.
    for (const v of b.votes) expect(verifyVote(v, verifyBytes)).toBe(true);
  });

  it("writes a vote's signed bytes in place exactly as voteMessage gives them, and nothing around them", () => {
    for (const v of [vote(0), vote(1, false)]) {
      // Over bytes already set: an opening block's zero previous is written, not assumed.
      const out = new Uint8Array(300).fill(0xff);
      writeVoteMessage(out, 100, v);
      expect(bytesToHex(out.subarray(100, 238))).toBe(bytesToHex(voteMessage(v)));
      expect(out.subarray(0, 100).every((b) => b === 0xff)).toBe(true);
      expect(out.subarray(238).every((b) => b === 0xff)).toBe(true);
    }
    expect(
      code(() => writeVoteMessage(new Uint8Array(138), 0, { ...vote(1), account: 'AB'.repeat(32) })),
    ).toBe('ERR_HEX');
  });

  it('is pinned: the bytes of a fixed batch (a format change shows here)', () => {
    const bytes = encodeSignedVoteBatch(rep.pub_key, 5n, [vote(0), vote(1)], sign);
    expect(bytesToHex(sha256(bytes))).toMatchInlineSnapshot(
      `"5dc84c6dc83d7a49eb05260391e688d04a7ceda1c6294882c73d38995d2d1b94"`,
    );
  });

  it("gives the same bytes and message with node:crypto's SHA-256 (the node's) as with the isomorphic one", () => {
    const votes = [vote(0), vote(1), vote(2, false)];
    const native = encodeSignedVoteBatch(rep.pub_key, 3n, votes, sign, sha256Node);
    expect(native).toEqual(encodeSignedVoteBatch(rep.pub_key, 3n, votes, sign));
    const a = decodeSignedVoteBatch(native, sha256Node);
    expect(a.message).toEqual(decodeSignedVoteBatch(native).message);
    expect(verifyVoteBatch(a, verifyBytes)).toBe(true);
  });

  it('signs the domain-separated hash, which is neither a vote nor a block message', () => {
    const votes = [vote(0), vote(1)];
    const bytes = encodeSignedVoteBatch(rep.pub_key, 1n, votes, sign);
    const body = bytes.subarray(0, bytes.length - 64);
    const sig = bytes.subarray(bytes.length - 64);
    const message = new Uint8Array([...VOTE_BATCH_DOMAIN, ...sha256(body)]);
    expect(message.length).toBe(48);
    expect(verifyBytes(sig, message, hexToBytes(rep.pub_key))).toBe(true);
    // Not a signature over the bare hash (what a block's signature signs), nor over the body.
    expect(verifyBytes(sig, sha256(body), hexToBytes(rep.pub_key))).toBe(false);
    expect(verifyBytes(sig, body, hexToBytes(rep.pub_key))).toBe(false);
    // Nor does it pass as any of its votes' single signature.
    for (const v of votes) expect(verifyBytes(sig, voteMessage(v), hexToBytes(rep.pub_key))).toBe(false);
    // A batch signed over the bare hash (no domain) is refused.
    const undomained = encodeSignedVoteBatch(rep.pub_key, 1n, votes, (m) => signBytes(m.subarray(16), seed));
    expect(verifyVoteBatch(decodeSignedVoteBatch(undomained), verifyBytes)).toBe(false);
  });

  it('a tampered entry, weight or key fails the batch signature', () => {
    const bytes = encodeSignedVoteBatch(rep.pub_key, 1n, [vote(0), vote(1)], sign);
    const cases: [string, number][] = [
      ['block hash of entry 2', 51 + 202 + 40],
      ['timestamp of entry 1', 51 + 130],
      ['single signature of entry 1', 51 + 150],
      ['weight', 40],
      ['batch signature', bytes.length - 1],
    ];
    for (const [what, at] of cases) {
      const t = bytes.slice();
      t[at]! ^= 1;
      expect(verifyVoteBatch(decodeSignedVoteBatch(t), verifyBytes), what).toBe(false);
    }
    // Signed by another key than the one it names.
    const forged = encodeSignedVoteBatch(rep.pub_key, 1n, [vote(0), vote(1)], (m) =>
      signBytes(m, new Uint8Array(32).fill(9)),
    );
    expect(verifyVoteBatch(decodeSignedVoteBatch(forged), verifyBytes)).toBe(false);
  });

  it('refuses malformed batches with coded errors: size bounds, type, key, flags, duplicates', () => {
    const good = encodeSignedVoteBatch(rep.pub_key, 1n, [vote(0), vote(1)], sign);
    expect(code(() => decodeSignedVoteBatch(good.subarray(0, good.length - 1)))).toBe('ERR_LENGTH');
    expect(code(() => decodeSignedVoteBatch(new Uint8Array([...good, 0])))).toBe('ERR_LENGTH');
    expect(code(() => decodeSignedVoteBatch(new Uint8Array(50)))).toBe('ERR_LENGTH');
    expect(code(() => decodeSignedVoteBatch(new Uint8Array(MAX_SIGNED_BATCH_BYTES + 1)))).toBe('ERR_LENGTH');
    const zero = good.slice();
    zero[49] = 0;
    zero[50] = 0;
    expect(code(() => decodeSignedVoteBatch(zero))).toBe('ERR_LENGTH');
    const wrongType = good.slice();
    wrongType[0] = 0x02;
    expect(code(() => decodeSignedVoteBatch(wrongType))).toBe('ERR_VERSION');
    const badFlag = good.slice();
    badFlag[51 + 137] = 2;
    expect(code(() => decodeSignedVoteBatch(badFlag))).toBe('ERR_FIELD_RANGE');
    const otherKey = good.slice();
    otherKey.set(hexToBytes(other.pub_key), 51 + 202 + 1);
    expect(code(() => decodeSignedVoteBatch(otherKey))).toBe('ERR_FIELD_RANGE');
    // The same vote twice (even with a newer timestamp): the whole batch is refused.
    const dup = good.slice();
    dup.set(dup.subarray(51 + 33, 51 + 65), 51 + 202 + 33);
    expect(code(() => decodeSignedVoteBatch(dup))).toBe('ERR_DUPLICATE');
    // The encoder refuses what the decoder would.
    expect(code(() => encodeSignedVoteBatch(rep.pub_key, 1n, [], sign))).toBe('ERR_LENGTH');
    expect(code(() => encodeSignedVoteBatch(rep.pub_key, 1n, [vote(0), vote(0)], sign))).toBe(
      'ERR_DUPLICATE',
    );
    expect(
      code(() =>
        encodeSignedVoteBatch(
          rep.pub_key,
          1n,
          [vote(0), vote(1, true, other.pub_key, new Uint8Array(32).fill(9))],
          sign,
        ),
      ),
    ).toBe('ERR_FIELD_RANGE');
    // A converge and a final vote for one block are two votes.
    expect(
      decodeSignedVoteBatch(encodeSignedVoteBatch(rep.pub_key, 1n, [vote(0), vote(0, false)], sign)).votes,
    ).toHaveLength(2);
  });

  it('holds up to MAX_SIGNED_BATCH_VOTES votes and no more', () => {
    const votes = Array.from({ length: MAX_SIGNED_BATCH_VOTES + 1 }, (_, i) => vote(i));
    const full = encodeSignedVoteBatch(rep.pub_key, 1n, votes.slice(0, MAX_SIGNED_BATCH_VOTES), sign);
    expect(full.length).toBe(MAX_SIGNED_BATCH_BYTES);
    expect(decodeSignedVoteBatch(full).votes).toHaveLength(MAX_SIGNED_BATCH_VOTES);
    expect(code(() => encodeSignedVoteBatch(rep.pub_key, 1n, votes, sign))).toBe('ERR_LENGTH');
  });
});
