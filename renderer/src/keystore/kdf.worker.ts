import { scrypt } from '@noble/hashes/scrypt.js';
import type { KdfRequest, KdfResponse } from './kdf.ts';

/** scrypt off the page's thread: 32 MiB and a few hundred milliseconds of work per derivation. */
interface WorkerScope {
  onmessage: ((ev: MessageEvent<KdfRequest>) => void) | null;
  postMessage(msg: KdfResponse, transfer?: Transferable[]): void;
}
const scope = globalThis as unknown as WorkerScope;

scope.onmessage = (ev) => {
  const { password, salt, N, r, p, dkLen } = ev.data;
  try {
    const started = performance.now();
    const key = scrypt(password, salt, { N, r, p, dkLen });
    scope.postMessage({ ok: true, key, ms: performance.now() - started }, [key.buffer]);
  } catch (e) {
    scope.postMessage({ ok: false, message: e instanceof Error ? e.message : String(e) });
  }
};
