import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { describe, expect, it } from 'vitest';
import { noiseCrypto } from '../../node-core/net/noise-cipher.ts';

/**
 * Noise's ChaCha20-Poly1305 from libsodium (net/noise-cipher.ts) against the library's own (an
 * AssemblyScript build under 1,200 bytes, node:crypto above): the same ciphertext for the same
 * input, each opening what the other sealed, a tampered frame refused, decryption in place.
 */
describe('Noise cipher from libsodium', () => {
  // libsodium at every size (as in Electron), and the node's own split (node:crypto from 8 KB).
  const ours = noiseCrypto({ nodeFromBytes: Infinity });
  const split = noiseCrypto();
  let seed = 12345;
  const bytes = (n: number): Uint8Array =>
    Uint8Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff);
  const flat = (b: { subarray(): Uint8Array }): Uint8Array => Uint8Array.from(b.subarray());

  it('is libsodium here (else this file tests the library against itself)', () => {
    expect(ours.chaCha20Poly1305Encrypt).not.toBe(defaultCrypto.chaCha20Poly1305Encrypt);
    expect(split.chaCha20Poly1305Encrypt).not.toBe(defaultCrypto.chaCha20Poly1305Encrypt);
  });

  it('seals as the library does and opens what it seals, at every frame size; refuses a tampered frame', () => {
    for (const size of [0, 1, 15, 16, 17, 200, 1199, 1200, 1201, 1400, 4000, 8191, 8192, 65519]) {
      for (const ad of [new Uint8Array(0), bytes(32)]) {
        const k = bytes(32);
        const nonce = bytes(12);
        const plain = bytes(size);
        const sealed = flat(ours.chaCha20Poly1305Encrypt(plain, nonce, ad, k));
        expect(sealed.length, `size ${size}`).toBe(size + 16);
        expect(sealed, `size ${size}`).toEqual(
          flat(defaultCrypto.chaCha20Poly1305Encrypt(plain, nonce, ad, k)),
        );
        expect(flat(defaultCrypto.chaCha20Poly1305Decrypt(sealed, nonce, ad, k))).toEqual(plain);
        expect(flat(ours.chaCha20Poly1305Decrypt(sealed, nonce, ad, k))).toEqual(plain);

        const tampered = sealed.slice();
        tampered[(size * 7) % tampered.length]! ^= 0x20;
        expect(() => ours.chaCha20Poly1305Decrypt(tampered, nonce, ad, k), `size ${size}`).toThrow();
        expect(() => split.chaCha20Poly1305Decrypt(tampered, nonce, ad, k), `size ${size}`).toThrow();
        const otherNonce = nonce.slice();
        otherNonce[11]! ^= 1;
        expect(() => ours.chaCha20Poly1305Decrypt(sealed, otherNonce, ad, k)).toThrow();
      }
    }
    expect(() =>
      ours.chaCha20Poly1305Decrypt(new Uint8Array(15), bytes(12), new Uint8Array(0), bytes(32)),
    ).toThrow(/shorter than its tag/);
  });

  it('decrypts in place into the bytes the caller offers, as the library asks', () => {
    const k = bytes(32);
    const nonce = bytes(12);
    const ad = new Uint8Array(0);
    const plain = bytes(3000);
    const frame = flat(ours.chaCha20Poly1305Encrypt(plain, nonce, ad, k));
    const dst = frame.subarray(0, frame.length - 16);
    const out = ours.chaCha20Poly1305Decrypt(frame, nonce, ad, k, dst);
    expect(out).toBe(dst);
    expect(Uint8Array.from(dst)).toEqual(plain);
    // An offered buffer of another size is not used.
    const small = new Uint8Array(10);
    const again = flat(ours.chaCha20Poly1305Encrypt(plain, nonce, ad, k));
    expect(flat(ours.chaCha20Poly1305Decrypt(again, nonce, ad, k, small))).toEqual(plain);
    expect(small).toEqual(new Uint8Array(10));
  });
});
