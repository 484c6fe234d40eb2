import { ed25519 } from './ed25519.ts';
import { ProtocolError } from './errors.ts';
import { sha256 } from './hash.ts';
import { bytesToHex, concatBytes, hexToBytes, isHex, utf8 } from './hex.ts';
import { u32BE } from './int.ts';

/**
 * Ed25519 keys (pure RFC 8032, no pre-hash, no context) and account addresses (protocol.md section 2).
 * This is the isomorphic path; node-core/fastpath has a node:crypto verifier with identical results.
 */
export interface KeyPair {
  /** 32-byte seed, hex. */
  seed_hex: string;
  /** 32-byte public key, hex. */
  pub_key: string;
  /** Account address derived from the key, hex. */
  address: string;
}

const ACCOUNT_TAG = utf8('xe/account/v1');

export function randomSeed(): Uint8Array {
  const seed = new Uint8Array(32);
  globalThis.crypto.getRandomValues(seed);
  return seed;
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  if (seed.length !== 32) throw new ProtocolError('ERR_LENGTH', 'seed must be 32 bytes', 'seed');
  return ed25519.getPublicKey(seed);
}

export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  const pub = publicKeyFromSeed(seed);
  return { seed_hex: bytesToHex(seed), pub_key: bytesToHex(pub), address: addressFromPublicKey(pub) };
}

export function generateKeyPair(): KeyPair {
  return keyPairFromSeed(randomSeed());
}

/** Verifies an Ed25519 signature; the isomorphic one by default, node:crypto's in the node. */
export type Verifier = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;

/** Signs a message (for blocks: the 32 raw hash bytes) with a 32-byte seed. */
export function signBytes(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed25519.sign(message, seed);
}

/**
 * Verifies with the strict RFC 8032 rules (zip215 off), matching OpenSSL as used by node:crypto, so
 * both paths accept exactly the same signatures. Malformed keys or signatures give false.
 */
export function verifyBytes(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return ed25519.verifyStrict(signature, message, publicKey);
  } catch {
    return false;
  }
}

/** Account address: SHA-256("xe/account/v1" || 32 raw public-key bytes), hex. */
export function addressFromPublicKey(publicKey: Uint8Array | string): string {
  const pub = typeof publicKey === 'string' ? hexToBytes(publicKey, 32, 'pub_key') : publicKey;
  if (pub.length !== 32) throw new ProtocolError('ERR_LENGTH', 'public key must be 32 bytes', 'pub_key');
  return bytesToHex(sha256(concatBytes(ACCOUNT_TAG, pub)));
}

export interface Keyset {
  keys: string[];
  threshold: number;
}

export const MAX_KEYSET_KEYS = 256;

/**
 * Checks a multisig keyset: 1..256 keys of 64 lowercase hex, no duplicates, 1 <= threshold <= count.
 * Returns the keys sorted ascending by hex string, the order used for hashing and addresses.
 */
export function normalizeKeyset(keyset: unknown, field = 'keyset'): Keyset {
  if (typeof keyset !== 'object' || keyset === null || Array.isArray(keyset)) {
    throw new ProtocolError('ERR_KEYSET', 'expected {keys, threshold}', field);
  }
  const { keys, threshold } = keyset as { keys?: unknown; threshold?: unknown };
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new ProtocolError('ERR_KEYSET', 'keys must be a non-empty array', `${field}.keys`);
  }
  if (keys.length > MAX_KEYSET_KEYS) {
    throw new ProtocolError('ERR_KEYSET', `at most ${MAX_KEYSET_KEYS} keys`, `${field}.keys`);
  }
  keys.forEach((k, i) => {
    if (!isHex(k, 32)) throw new ProtocolError('ERR_HEX', 'expected 64 lowercase hex', `${field}.keys.${i}`);
  });
  const sorted = [...(keys as string[])].sort();
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] === sorted[i - 1]) throw new ProtocolError('ERR_KEYSET', 'duplicate key', `${field}.keys`);
  }
  const t = typeof threshold === 'bigint' ? Number(threshold) : threshold;
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > sorted.length) {
    throw new ProtocolError(
      'ERR_KEYSET',
      'threshold must be an integer from 1 to the key count',
      `${field}.threshold`,
    );
  }
  return { keys: sorted, threshold: t };
}

/** Multisig address: SHA-256(threshold u32 BE || count u32 BE || raw keys sorted by hex). No tag. */
export function multisigAddress(keyset: Keyset): string {
  const ks = normalizeKeyset(keyset);
  const parts = [u32BE(ks.threshold), u32BE(ks.keys.length), ...ks.keys.map((k) => hexToBytes(k, 32))];
  return bytesToHex(sha256(concatBytes(...parts)));
}
