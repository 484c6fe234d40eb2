import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

/**
 * Ed25519 through node:crypto (OpenSSL): the node's fast path, with the same results as the
 * isomorphic verifier in node-core/protocol/keys.ts (both strict RFC 8032; a test holds them equal).
 * Raw 32-byte keys are wrapped in fixed DER prefixes; public KeyObjects are cached because building
 * one costs about as much as a verification and the same keys recur (an account signs many blocks).
 */
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);
const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

const CACHE_LIMIT = 10_000;
const keyCache = new Map<string, KeyObject | null>();

function publicKeyObject(pub: Uint8Array): KeyObject | null {
  const id = Buffer.from(pub.buffer, pub.byteOffset, pub.byteLength).toString('latin1');
  const hit = keyCache.get(id);
  if (hit !== undefined) return hit;
  let key: KeyObject | null;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: 'der', type: 'spki' });
  } catch {
    key = null; // not a point on the curve: no signature can verify against it
  }
  if (keyCache.size >= CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value!);
  keyCache.set(id, key);
  return key;
}

/** Same contract as the isomorphic `verifyBytes`: malformed input is simply invalid. */
export function verifyBytesNode(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  const key = publicKeyObject(publicKey);
  if (!key) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * Private KeyObjects of the few seeds this process signs with (the node key signs a vote per block
 * it finalizes): building one cost as much as the signature itself (the three-node benchmark's
 * profile, 116 of 233 µs per vote). A handful is kept; a signer with many seeds (tests, tools)
 * only rebuilds.
 */
const SIGNER_LIMIT = 8;
const signerCache = new Map<string, KeyObject>();

function privateKeyObject(seed: Uint8Array): KeyObject {
  const id = Buffer.from(seed.buffer, seed.byteOffset, seed.byteLength).toString('latin1');
  let key = signerCache.get(id);
  if (key === undefined) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    if (signerCache.size >= SIGNER_LIMIT) signerCache.delete(signerCache.keys().next().value!);
    signerCache.set(id, key);
  }
  return key;
}

export function signBytesNode(message: Uint8Array, seed: Uint8Array): Uint8Array {
  if (seed.length !== 32) throw new RangeError('an Ed25519 seed is 32 bytes');
  return new Uint8Array(sign(null, message, privateKeyObject(seed)));
}

/**
 * The public key of a seed through node:crypto, equal to the isomorphic `publicKeyFromSeed`: the
 * pure-JS path builds a table of base-point multiples on first use (~25 ms), which a node paid at
 * start-up for its own key alone.
 */
export function publicKeyFromSeedNode(seed: Uint8Array): Uint8Array {
  if (seed.length !== 32) throw new RangeError('an Ed25519 seed is 32 bytes');
  const spki = createPublicKey(privateKeyObject(seed)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(SPKI_PREFIX.length));
}
