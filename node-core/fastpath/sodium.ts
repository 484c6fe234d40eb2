import { createRequire } from 'node:module';

/**
 * libsodium's Ed25519 (the `sodium-native` package's prebuilt N-API binary), the node's fastest
 * signature path: 35-36 µs a verification and 12 µs a signature here, against node:crypto's 58-65
 * and 20 (2026-11-29, one thread). Signatures are the same bytes (RFC 8032 signing is deterministic).
 * Verification is not the same function: libsodium also refuses small-order and non-canonical keys
 * and R points, which RFC 8032 and node:crypto (OpenSSL) accept, so ed25519.ts asks node:crypto
 * whenever libsodium says no (see verifyBytesNode).
 *
 * Loaded on first use (about 10 ms, off the start-up path). A platform without a prebuilt binary, or
 * LEDGER_NODE_SODIUM=0, leaves the node on node:crypto alone: `sodium()` is then undefined.
 */
interface Sodium {
  crypto_sign_verify_detached(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
  crypto_sign_detached(signature: Uint8Array, message: Uint8Array, secretKey: Uint8Array): void;
  crypto_sign_seed_keypair(publicKey: Uint8Array, secretKey: Uint8Array, seed: Uint8Array): void;
  /** Throws when it cannot encrypt; `nsec` is always null. */
  crypto_aead_chacha20poly1305_ietf_encrypt(
    c: Uint8Array,
    m: Uint8Array,
    ad: Uint8Array,
    nsec: null,
    npub: Uint8Array,
    k: Uint8Array,
  ): number;
  /** Throws when the tag does not verify (and zeroes `m`); `nsec` is always null. */
  crypto_aead_chacha20poly1305_ietf_decrypt(
    m: Uint8Array,
    nsec: null,
    c: Uint8Array,
    ad: Uint8Array,
    npub: Uint8Array,
    k: Uint8Array,
  ): number;
}

let loaded: Sodium | null | undefined;

export function sodium(): Sodium | undefined {
  if (loaded === undefined) {
    loaded = null;
    if (process.env.LEDGER_NODE_SODIUM !== '0') {
      try {
        loaded = createRequire(import.meta.url)('sodium-native') as Sodium;
      } catch {
        // No binary for this platform: node:crypto serves alone, as before.
      }
    }
  }
  return loaded ?? undefined;
}
