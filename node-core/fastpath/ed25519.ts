import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { sodium } from './sodium.ts';

/**
 * The node's Ed25519: libsodium first where it is faster (fastpath/sodium.ts), node:crypto (OpenSSL)
 * where its verdict is the one that counts. For node:crypto, raw 32-byte keys are wrapped in fixed
 * DER prefixes; public KeyObjects are cached because building one costs about as much as a
 * verification and the same keys recur (an account signs many blocks).
 */
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);
const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

/** A key's bytes as a Map key (latin1: one character a byte, no hex encoding). */
function keyId(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

const CACHE_LIMIT = 10_000;
const keyCache = new Map<string, KeyObject | null>();

function publicKeyObject(pub: Uint8Array): KeyObject | null {
  const id = keyId(pub);
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

/**
 * Same contract as the isomorphic `verifyBytes`: malformed input is simply invalid. The verdict is
 * node:crypto's, as it always was: libsodium accepts only signatures node:crypto accepts too, and
 * whatever it refuses (an invalid signature, or a small-order key or R point, valid in RFC 8032 and
 * to node:crypto, and so to the other nodes of the network) is checked again by node:crypto. Valid
 * signatures, nearly all of them, cost libsodium's 35 µs instead of node:crypto's 60.
 */
export function verifyBytesNode(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  const fast = sodium();
  if (fast !== undefined && fast.crypto_sign_verify_detached(signature, message, publicKey)) return true;
  return verifyOpenSsl(signature, message, publicKey);
}

/** node:crypto's verdict alone (the one verifyBytesNode gives; tests compare the two). */
export function verifyOpenSsl(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
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
 * Private keys of the few seeds this process signs with (the node key signs a vote per block it
 * finalizes): building one cost as much as the signature itself (the three-node benchmark's
 * profile, 116 of 233 µs per vote). A handful is kept; a signer with many seeds (tests, tools)
 * only rebuilds.
 */
const SIGNER_LIMIT = 8;
const signerCache = new Map<string, KeyObject>();
/** libsodium's 64-byte secret keys (seed and public key), by seed, kept alike. */
const secretKeys = new Map<string, Uint8Array>();

function remember<V>(cache: Map<string, V>, id: string, value: V): V {
  if (cache.size >= SIGNER_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(id, value);
  return value;
}

function privateKeyObject(seed: Uint8Array): KeyObject {
  const id = keyId(seed);
  return (
    signerCache.get(id) ??
    remember(
      signerCache,
      id,
      createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }),
    )
  );
}

/** RFC 8032 signing is deterministic: libsodium and node:crypto give the same bytes (a test holds them). */
export function signBytesNode(message: Uint8Array, seed: Uint8Array): Uint8Array {
  if (seed.length !== 32) throw new RangeError('an Ed25519 seed is 32 bytes');
  const fast = sodium();
  if (fast === undefined) return new Uint8Array(sign(null, message, privateKeyObject(seed)));
  const id = keyId(seed);
  let secret = secretKeys.get(id);
  if (secret === undefined) {
    secret = new Uint8Array(64);
    fast.crypto_sign_seed_keypair(new Uint8Array(32), secret, seed);
    remember(secretKeys, id, secret);
  }
  const out = new Uint8Array(64);
  fast.crypto_sign_detached(out, message, secret);
  return out;
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
