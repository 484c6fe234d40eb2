import type { NoiseInit } from '@chainsafe/libp2p-noise';
import { defaultCrypto, nodeCrypto } from '@chainsafe/libp2p-noise/crypto';
import { getCiphers } from 'node:crypto';
import { sodium } from '../fastpath/sodium.ts';

type NoiseCrypto = NonNullable<NoiseInit['crypto']>;

/** Poly1305's tag after each ciphertext. */
const TAG_BYTES = 16;

/**
 * From this frame size up node:crypto (OpenSSL) is the faster, where it has the cipher: measured
 * here (AMD EPYC), seal/open 7.5/6.7 against 9.8/8.3 µs at 6,000 bytes, 8.8/10.4 against 7.8/6.5 at
 * 10,000, 49/50 against 35/29 at 65,519.
 */
const NODE_FROM_BYTES = 8192;

/**
 * Noise's ChaCha20-Poly1305 from libsodium, the rest (SHA-256, HKDF, X25519) the library's own.
 *
 * The library seals a frame under 1,200 bytes with an AssemblyScript build, and a larger one with
 * node:crypto, which sets up a cipher object for every frame; in Electron's main process, where the
 * desktop app's node runs, always with the AssemblyScript build (Electron's BoringSSL has no
 * chacha20-poly1305 cipher). Measured here, seal/open: 200 bytes 1.9/1.9 µs against 3.5/4.1, 1,000
 * bytes 2.9/3.0 against 12.0/10.7, 1,400 bytes 2.7/2.9 against 6.6/7.8, 4,000 bytes 4.3/4.3 against
 * 7.4/6.2; the AssemblyScript build (Electron) 3.7, 11.2, 15.1, 31.4 µs to seal, and 486 at 65,519.
 * Large frames still go to node:crypto where it has the cipher (`nodeFromBytes`).
 * Without libsodium (no binary for the platform) the library's own serve.
 */
export function noiseCrypto(opts: { nodeFromBytes?: number } = {}): NoiseCrypto {
  const na = sodium();
  if (na === undefined) return defaultCrypto;
  const nodeFrom =
    process.versions.electron === undefined && getCiphers().includes('chacha20-poly1305')
      ? (opts.nodeFromBytes ?? NODE_FROM_BYTES)
      : Infinity;
  return {
    ...defaultCrypto,
    chaCha20Poly1305Encrypt(plaintext, nonce, ad, k) {
      if (plaintext.byteLength >= nodeFrom)
        return nodeCrypto.chaCha20Poly1305Encrypt(plaintext, nonce, ad, k);
      const m = plaintext.subarray();
      const c = Buffer.allocUnsafe(m.byteLength + TAG_BYTES);
      na.crypto_aead_chacha20poly1305_ietf_encrypt(c, m, ad, null, nonce, k);
      return c;
    },
    chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst) {
      if (ciphertext.byteLength - TAG_BYTES >= nodeFrom)
        return nodeCrypto.chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst);
      const c = ciphertext.subarray();
      if (c.byteLength < TAG_BYTES)
        throw new Error('Invalid chacha20poly1305 decryption: shorter than its tag');
      // Into `dst` when the caller offers it (the library offers the ciphertext's own bytes, to save
      // an allocation a frame): libsodium checks the tag before it decrypts, and decrypts in place.
      const m =
        dst !== undefined && dst.byteLength === c.byteLength - TAG_BYTES
          ? dst
          : Buffer.allocUnsafe(c.byteLength - TAG_BYTES);
      na.crypto_aead_chacha20poly1305_ietf_decrypt(m, null, c, ad, nonce, k);
      return m;
    },
  };
}
