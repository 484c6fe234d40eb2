import { describe, expect, it } from 'vitest';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { attestedTime, lowerMedian, type AttestationInput } from '../../node-core/leasing/attestations.ts';
import { LeasingError } from '../../node-core/leasing/errors.ts';
import type { Attestation } from '../../node-core/protocol/block.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { type KeyPair, keyPairFromSeed, verifyBytes } from '../../node-core/protocol/keys.ts';
import { signAttestation } from '../../node-core/protocol/payloads.ts';
import { vectors } from '../helpers/vectors.ts';

const LEASE = 'ab'.repeat(32);
const keepers = [1, 2, 3, 4, 5].map((i) => keyPairFromSeed(new Uint8Array(32).fill(i)));
const outsider = keyPairFromSeed(new Uint8Array(32).fill(99));
const NOW = 1_790_000_000_000_000_000n;
const SKEW = 60_000_000_000n;

function att(k: KeyPair, timestamp: bigint, lease = LEASE): Attestation {
  return signAttestation(lease, timestamp, hexToBytes(k.seed_hex), k.pub_key);
}

function input(attestations: Attestation[], over: Partial<AttestationInput> = {}): AttestationInput {
  return {
    leaseHash: LEASE,
    attestations,
    timekeepers: { keys: keepers.map((k) => k.pub_key), threshold: 3 },
    verify: verifyBytesNode,
    ...over,
  };
}

function failure(f: () => unknown): LeasingError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LeasingError);
    return e as LeasingError;
  }
  throw new Error('expected a LeasingError');
}

describe('lowerMedian', () => {
  it('takes index (n-1)/2 of the ascending order', () => {
    expect(lowerMedian([5n])).toBe(5n);
    expect(lowerMedian([9n, 1n])).toBe(1n);
    expect(lowerMedian([3n, 1n, 2n])).toBe(2n);
    expect(lowerMedian([40n, 10n, 30n, 20n])).toBe(20n); // even: the earlier middle
    expect(() => lowerMedian([])).toThrow(RangeError);
  });
});

describe('attestedTime (reference-behavior.md 4.6)', () => {
  it('returns the lower median of valid attestations, in any order', () => {
    const atts = [att(keepers[3]!, NOW + 4n), att(keepers[0]!, NOW + 1n), att(keepers[2]!, NOW + 3n)];
    expect(attestedTime(input(atts))).toEqual({ time: NOW + 3n, counted: 3 });
    const four = [...atts, att(keepers[1]!, NOW + 2n)];
    expect(attestedTime(input(four))).toEqual({ time: NOW + 2n, counted: 4 });
  });

  it('works with the isomorphic verifier too', () => {
    const atts = [att(keepers[0]!, NOW), att(keepers[1]!, NOW), att(keepers[2]!, NOW)];
    expect(attestedTime(input(atts, { verify: verifyBytes })).time).toBe(NOW);
  });

  it('needs a timekeeper config with threshold > 0', () => {
    const atts = [att(keepers[0]!, NOW)];
    expect(failure(() => attestedTime(input(atts, { timekeepers: undefined }))).code).toBe(
      'timekeepers_not_configured',
    );
    const zero = { keys: keepers.map((k) => k.pub_key), threshold: 0 };
    expect(failure(() => attestedTime(input(atts, { timekeepers: zero }))).message).toBe(
      'timekeepers not configured',
    );
  });

  it('refuses more than 20 before any signature work (LS-08)', () => {
    let calls = 0;
    const counting = () => {
      calls++;
      return true;
    };
    const many = Array.from({ length: 21 }, () => att(keepers[0]!, NOW));
    expect(failure(() => attestedTime(input(many, { verify: counting }))).code).toBe('too_many_attestations');
    expect(calls).toBe(0);
    // Twenty is allowed (then only one key counts: too few survivors).
    expect(failure(() => attestedTime(input(many.slice(0, 20)))).code).toBe('insufficient_attestations');
  });

  it('refuses fewer raw entries than the threshold before any signature work', () => {
    let calls = 0;
    const counting = () => {
      calls++;
      return true;
    };
    const e = failure(() =>
      attestedTime(input([att(keepers[0]!, NOW), att(keepers[1]!, NOW)], { verify: counting })),
    );
    expect(e.code).toBe('too_few_attestations');
    expect(calls).toBe(0);
  });

  it('skips untrusted keys, repeated keys and bad signatures, then counts survivors', () => {
    const bad = { ...att(keepers[2]!, NOW), timestamp: NOW + 1n }; // signature over another time
    const atts = [
      att(keepers[0]!, NOW),
      att(keepers[0]!, NOW + 10n), // same key again: skipped
      { ...att(keepers[0]!, NOW), public_key: outsider.pub_key }, // key swapped for a stranger's
      att(outsider, NOW), // signed by a key that is not a timekeeper
      bad,
      att(keepers[1]!, NOW + 20n),
    ];
    const e = failure(() => attestedTime(input(atts)));
    expect(e.code).toBe('insufficient_attestations');
    expect(e.message).toBe('only 2 valid attestations from trusted timekeepers, need 3');
  });

  it('lets a key count on a later entry when its first entry was invalid', () => {
    const atts = [
      { ...att(keepers[0]!, NOW), signature: '00'.repeat(64) },
      att(keepers[0]!, NOW + 7n),
      att(keepers[1]!, NOW + 8n),
      att(keepers[2]!, NOW + 9n),
    ];
    expect(attestedTime(input(atts))).toEqual({ time: NOW + 8n, counted: 3 });
  });

  it('skips an attestation for another lease (its signature does not verify)', () => {
    const other = 'cd'.repeat(32);
    const atts = [att(keepers[0]!, NOW, other), att(keepers[1]!, NOW), att(keepers[2]!, NOW)];
    expect(failure(() => attestedTime(input(atts))).code).toBe('insufficient_attestations');
  });

  it('live path: skips timestamps more than the max skew from now, either side; sync does not', () => {
    const atts = [
      att(keepers[0]!, NOW - SKEW), // exactly at the bound: counts
      att(keepers[1]!, NOW + SKEW),
      att(keepers[2]!, NOW + SKEW + 1n), // too far ahead
      att(keepers[3]!, NOW - SKEW - 1n), // too far behind
    ];
    const live = { now: NOW, maxSkewNs: SKEW };
    const e = failure(() => attestedTime(input(atts, { live })));
    expect(e.message).toBe('only 2 valid attestations from trusted timekeepers, need 3');
    // On sync all four count: sorted [-S-1, -S, +S, +S+1], lower median index 1.
    expect(attestedTime(input(atts))).toEqual({ time: NOW - SKEW, counted: 4 });
  });

  it('accepts the attestation_vectors of vectors.json', () => {
    const key = vectors.attestation_vectors[0]!.public_key;
    for (const v of vectors.attestation_vectors) {
      const a = { public_key: v.public_key, timestamp: BigInt(v.timestamp), signature: v.signature };
      const r = attestedTime({
        leaseHash: v.lease_hash,
        attestations: [a],
        timekeepers: { keys: [key], threshold: 1 },
        verify: verifyBytesNode,
      });
      expect(r).toEqual({ time: BigInt(v.timestamp), counted: 1 });
    }
    // The vectors are one key: together they count once, at the first entry's time.
    const all = vectors.attestation_vectors.map((v) => ({
      public_key: v.public_key,
      timestamp: BigInt(v.timestamp),
      signature: v.signature,
    }));
    const r = attestedTime({
      leaseHash: vectors.attestation_vectors[0]!.lease_hash,
      attestations: all,
      timekeepers: { keys: [key], threshold: 1 },
      verify: verifyBytes,
    });
    expect(r).toEqual({ time: 1790155844400578712n, counted: 1 });
  });
});
