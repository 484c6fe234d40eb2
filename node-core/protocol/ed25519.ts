import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';

/**
 * The isomorphic Ed25519 (design: @noble/ed25519), configured once for synchronous use. The library
 * ships without a hash so that callers choose one; @noble/hashes is already our SHA-256 and BLAKE2b,
 * so its SHA-512 adds little to a browser bundle. node-core/fastpath keeps node:crypto for the node.
 */
ed.hashes.sha512 = sha512;

export const ed25519 = {
  getPublicKey: (seed: Uint8Array): Uint8Array => ed.getPublicKey(seed),
  sign: (message: Uint8Array, seed: Uint8Array): Uint8Array => ed.sign(message, seed),
  /** Strict RFC 8032 (zip215 off): non-canonical encodings and small-order keys are refused. */
  verifyStrict: (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean =>
    ed.verify(signature, message, publicKey, { zip215: false }),
};
