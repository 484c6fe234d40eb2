import { parentPort } from 'node:worker_threads';
import { verifyBytesNode } from './ed25519.ts';

/**
 * Worker side of the signature verification pool. A request packs many items as
 * [message length u16 BE][signature 64][public key 32][message]; the answer is one byte per item.
 */
export interface VerifyRequest {
  id: number;
  count: number;
  data: Uint8Array;
}

export function verifyPacked(count: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(count);
  let off = 0;
  for (let i = 0; i < count; i++) {
    const len = (data[off]! << 8) | data[off + 1]!;
    const sig = data.subarray(off + 2, off + 66);
    const pub = data.subarray(off + 66, off + 98);
    const msg = data.subarray(off + 98, off + 98 + len);
    out[i] = verifyBytesNode(sig, msg, pub) ? 1 : 0;
    off += 98 + len;
  }
  return out;
}

parentPort?.on('message', (req: VerifyRequest) => {
  const results = verifyPacked(req.count, req.data);
  parentPort!.postMessage({ id: req.id, results }, [results.buffer as ArrayBuffer]);
});
// Tells the pool this module has loaded: a worker that dies before saying so could not start.
parentPort?.postMessage({ ready: true });
