import { verifyBytesNode } from './ed25519.ts';

/**
 * The verify pool's message format (verify-pool.ts to verify-worker.ts): many checks packed in one
 * buffer as [message length u16 BE][signature 64][public key 32][message]; the answer is one byte
 * per check, 1 for a valid signature.
 */
export interface VerifyRequest {
  id: number;
  count: number;
  data: Uint8Array;
}

export interface VerifyItem {
  sig: Uint8Array;
  msg: Uint8Array;
  pub: Uint8Array;
}

/** Packs `items` (each message at most 65,535 bytes) for one request. */
export function packChecks(items: readonly VerifyItem[]): Uint8Array<ArrayBuffer> {
  let size = 0;
  for (const it of items) size += 98 + it.msg.length;
  const data = new Uint8Array(size);
  let off = 0;
  for (const it of items) {
    data[off] = it.msg.length >> 8;
    data[off + 1] = it.msg.length & 0xff;
    data.set(it.sig, off + 2);
    data.set(it.pub, off + 66);
    data.set(it.msg, off + 98);
    off += 98 + it.msg.length;
  }
  return data;
}

/** Checks every packed item; one verdict byte each. */
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
