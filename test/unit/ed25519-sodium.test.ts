import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { describe, expect, it, vi } from 'vitest';
import { signBytesNode, verifyBytesNode, verifyOpenSsl } from '../../node-core/fastpath/ed25519.ts';
import { sodium } from '../../node-core/fastpath/sodium.ts';
import { publicKeyFromSeed } from '../../node-core/protocol/index.ts';
import { bigToLe, L, leToBig } from '../helpers/ed25519-scalars.ts';

/**
 * The node verifies with libsodium first and asks node:crypto (OpenSSL) whenever libsodium refuses
 * (fastpath/ed25519.ts): its verdicts must be node:crypto's exactly (ed25519.test.ts's property
 * compares them on valid and tampered signatures, and the signatures with the isomorphic path's).
 * Signatures valid in RFC 8032 that libsodium refuses (a small-order R point, a small-order key) are
 * built here from the curve arithmetic, and must still verify.
 */

const IDENTITY = Uint8Array.from([1, ...new Uint8Array(31)]);

/** k = SHA-512(R || A || M) mod L, as RFC 8032 5.1.7 defines it. */
function challenge(r: Uint8Array, a: Uint8Array, msg: Uint8Array): bigint {
  return leToBig(createHash('sha512').update(r).update(a).update(msg).digest()) % L;
}
/** The secret scalar of a seed (RFC 8032 5.1.5: the clamped first half of SHA-512(seed)). */
function secretScalar(seed: Uint8Array): bigint {
  const h = createHash('sha512').update(seed).digest().subarray(0, 32);
  h[0]! &= 248;
  h[31]! &= 127;
  h[31]! |= 64;
  return leToBig(h);
}

describe('Ed25519 with libsodium first: node:crypto verdicts, same signatures', () => {
  it('libsodium is loaded on this platform (else only the fallback would be tested)', () => {
    expect(sodium()).toBeDefined();
  });

  it('a signature whose R is the identity point (small order): libsodium refuses it, node:crypto and the node accept it', () => {
    const seed = new Uint8Array(32).fill(11);
    const pub = publicKeyFromSeed(seed);
    const msg = new TextEncoder().encode('small-order R');
    // S = k·a: then S·B − k·A is the identity, whose encoding is R.
    const s = (challenge(IDENTITY, pub, msg) * secretScalar(seed)) % L;
    const sig = Uint8Array.from([...IDENTITY, ...bigToLe(s, 32)]);
    expect(sodium()!.crypto_sign_verify_detached(sig, msg, pub)).toBe(false);
    expect(verifyOpenSsl(sig, msg, pub)).toBe(true);
    expect(verifyBytesNode(sig, msg, pub)).toBe(true);
    // The same signature with S + L (non-canonical) is refused by all.
    const mall = Uint8Array.from([...IDENTITY, ...bigToLe(s + L, 32)]);
    expect(verifyOpenSsl(mall, msg, pub)).toBe(false);
    expect(verifyBytesNode(mall, msg, pub)).toBe(false);
  });

  it('a signature by the identity key (small order): libsodium refuses it, node:crypto and the node accept it', () => {
    const msg = new TextEncoder().encode('small-order key');
    // k·A is the identity for any k: S = r with R = r·B verifies without the cofactor.
    const r = 123456789n;
    const R = ed.Point.BASE.multiply(r).toBytes();
    const sig = Uint8Array.from([...R, ...bigToLe(r, 32)]);
    expect(sodium()!.crypto_sign_verify_detached(sig, msg, IDENTITY)).toBe(false);
    expect(verifyOpenSsl(sig, msg, IDENTITY)).toBe(true);
    expect(verifyBytesNode(sig, msg, IDENTITY)).toBe(true);
  });

  it('wrong lengths are invalid without reaching either library', () => {
    const seed = new Uint8Array(32).fill(3);
    const msg = new Uint8Array([9]);
    const sig = signBytesNode(msg, seed);
    const pub = publicKeyFromSeed(seed);
    expect(verifyBytesNode(sig.subarray(0, 63), msg, pub)).toBe(false);
    expect(verifyBytesNode(sig, msg, pub.subarray(0, 31))).toBe(false);
    expect(verifyBytesNode(Uint8Array.from([...sig, 0]), msg, pub)).toBe(false);
  });
});

describe('Ed25519 without libsodium (LEDGER_NODE_SODIUM=0, or no binary for the platform)', () => {
  it('node:crypto alone: the same signatures and verdicts', async () => {
    const before = process.env.LEDGER_NODE_SODIUM;
    process.env.LEDGER_NODE_SODIUM = '0';
    vi.resetModules();
    try {
      const fresh = await import('../../node-core/fastpath/ed25519.ts');
      const freshSodium = await import('../../node-core/fastpath/sodium.ts');
      expect(freshSodium.sodium()).toBeUndefined();
      const seed = new Uint8Array(32).fill(21);
      const msg = new TextEncoder().encode('no libsodium');
      const sig = fresh.signBytesNode(msg, seed);
      expect(Buffer.from(sig).equals(Buffer.from(signBytesNode(msg, seed)))).toBe(true);
      const pub = publicKeyFromSeed(seed);
      expect(fresh.verifyBytesNode(sig, msg, pub)).toBe(true);
      sig[5]! ^= 1;
      expect(fresh.verifyBytesNode(sig, msg, pub)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.LEDGER_NODE_SODIUM;
      else process.env.LEDGER_NODE_SODIUM = before;
      vi.resetModules();
    }
  });
});
