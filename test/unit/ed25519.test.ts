import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bytesToHex,
  hexToBytes,
  publicKeyFromSeed,
  signBytes,
  verifyBytes,
} from '../../node-core/protocol/index.ts';
import { signBytesNode, verifyBytesNode, verifyOpenSsl } from '../../node-core/fastpath/ed25519.ts';
import { bigToLe, L, leToBig } from '../helpers/ed25519-scalars.ts';

describe('Ed25519: the node fast path (libsodium first, node:crypto deciding) agrees with the isomorphic path', () => {
  it('property: same signatures, same verdicts on valid and tampered input', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 200 }),
        fc.nat(),
        (seed, msg, flip) => {
          const pub = publicKeyFromSeed(seed);
          const sig = signBytes(msg, seed);
          expect(bytesToHex(signBytesNode(msg, seed))).toBe(bytesToHex(sig));
          expect(verifyBytes(sig, msg, pub)).toBe(true);
          expect(verifyBytesNode(sig, msg, pub)).toBe(true);
          const bad = Uint8Array.from(sig);
          bad[flip % 64]! ^= 1 << (flip % 8);
          expect(verifyBytesNode(bad, msg, pub)).toBe(verifyBytes(bad, msg, pub));
          // The node's verifier (libsodium first) gives node:crypto's verdict alone.
          expect(verifyBytesNode(bad, msg, pub)).toBe(verifyOpenSsl(bad, msg, pub));
          expect(verifyOpenSsl(sig, msg, pub)).toBe(true);
          expect(verifyBytes(bad, msg, pub)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('both reject a malleated signature with S + L (non-canonical S)', () => {
    const seed = new Uint8Array(32).fill(7);
    const msg = new Uint8Array([1, 2, 3]);
    const sig = signBytes(msg, seed);
    const s = leToBig(sig.subarray(32));
    const mall = Uint8Array.from([...sig.subarray(0, 32), ...bigToLe(s + L, 32)]);
    const pub = publicKeyFromSeed(seed);
    expect(verifyBytes(mall, msg, pub)).toBe(false);
    expect(verifyBytesNode(mall, msg, pub)).toBe(false);
  });

  it('both reject keys that are not curve points, wrong lengths and small-order keys', () => {
    const msg = new Uint8Array([9]);
    const sig = signBytes(msg, new Uint8Array(32).fill(3));
    const notAPoint = hexToBytes('02' + '00'.repeat(31)); // y = 2 has no x on the curve
    const identity = hexToBytes('01' + '00'.repeat(31)); // small order
    for (const pub of [notAPoint, identity, new Uint8Array(31), new Uint8Array(33)]) {
      expect(verifyBytes(sig, msg, pub)).toBe(false);
      expect(verifyBytesNode(sig, msg, pub)).toBe(false);
    }
    expect(verifyBytesNode(sig.subarray(0, 63), msg, publicKeyFromSeed(new Uint8Array(32).fill(3)))).toBe(
      false,
    );
  });
});
