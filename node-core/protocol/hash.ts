import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

/** SHA-256, the protocol's hash everywhere except proof of work. */
export function sha256(data: Uint8Array): Uint8Array {
  return nobleSha256(data);
}
