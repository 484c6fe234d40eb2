import { scryptAsync } from '@noble/hashes/scrypt.js';
import { passwordBytes } from '../../../node-core/client/keystore-file.ts';
import { hexToBytes } from '../../../node-core/protocol/hex.ts';
import { KEY_BYTES, type KdfParams } from './vault.ts';

/**
 * Key derivation from the password (scrypt), in a short-lived Web Worker so the page never freezes;
 * where no worker can start, noble's async scrypt, which yields to the page every few milliseconds.
 */
export interface KdfRequest {
  password: Uint8Array;
  salt: Uint8Array;
  N: number;
  r: number;
  p: number;
  dkLen: number;
}

export type KdfResponse = { ok: true; key: Uint8Array; ms: number } | { ok: false; message: string };

export type DeriveKey = (password: string, kdf: KdfParams) => Promise<Uint8Array>;

/** Milliseconds the last derivation took (shown in Settings; the e2e test and benchmark read it). */
export let lastKdfMs: number | undefined;

/** The password's bytes as the keystore file defines them (NFKC), so the CLI derives the same key. */
export { passwordBytes };

function request(password: string, kdf: KdfParams): KdfRequest {
  return {
    password: passwordBytes(password),
    salt: hexToBytes(kdf.salt, 16),
    N: kdf.N,
    r: kdf.r,
    p: kdf.p,
    dkLen: KEY_BYTES,
  };
}

export const deriveKeyAsync: DeriveKey = async (password, kdf) => {
  const req = request(password, kdf);
  const started = performance.now();
  const key = await scryptAsync(req.password, req.salt, { N: req.N, r: req.r, p: req.p, dkLen: req.dkLen });
  lastKdfMs = performance.now() - started;
  req.password.fill(0);
  return key;
};

export const deriveKeyInWorker: DeriveKey = (password, kdf) =>
  new Promise<Uint8Array>((resolve, reject) => {
    const worker = new Worker(new URL('./kdf.worker.ts', import.meta.url), { type: 'module', name: 'kdf' });
    const req = request(password, kdf);
    worker.onmessage = (ev: MessageEvent<KdfResponse>) => {
      worker.terminate();
      if (ev.data.ok) {
        lastKdfMs = ev.data.ms;
        resolve(ev.data.key);
      } else reject(new Error(`key derivation failed: ${ev.data.message}`));
    };
    worker.onerror = (ev) => {
      worker.terminate();
      reject(new Error(`key derivation worker failed: ${ev.message || 'could not start'}`));
    };
    worker.postMessage(req, [req.password.buffer]);
  });

/** The worker where there is one, falling back to the async variant if it cannot start. */
export const deriveKey: DeriveKey = async (password, kdf) => {
  if (typeof Worker === 'undefined') return deriveKeyAsync(password, kdf);
  try {
    return await deriveKeyInWorker(password, kdf);
  } catch (e) {
    if ((e as Error).message.startsWith('key derivation worker failed')) return deriveKeyAsync(password, kdf);
    throw e;
  }
};
