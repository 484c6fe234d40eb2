import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The node's libp2p peer id as text, read from its key file without loading libp2p (which takes a
 * good part of a start-up): the API answers with the node's id before networking has started. Only
 * the key the node makes (Ed25519, libp2p's protobuf form) is read here; any other form, or no file
 * yet, gives undefined and the caller asks libp2p itself (peer-key.ts). The id is libp2p's: the
 * identity multihash of the protobuf public key, in base58btc (tests compare it with libp2p's).
 */

/** The key file in the data directory (peer-key.ts writes it). */
export const PEER_KEY_FILE = 'p2p.key';

/** libp2p's protobuf of an Ed25519 private key: type 1, then 64 bytes (seed and public key). */
const ED25519_PRIVATE_PREFIX = Uint8Array.of(0x08, 0x01, 0x12, 0x40);
/** The same of the public key: type 1, then 32 bytes. */
const ED25519_PUBLIC_PREFIX = Uint8Array.of(0x08, 0x01, 0x12, 0x20);
/** Multihash "identity" (0x00) of 36 bytes: keys this short are their own hash in a peer id. */
const IDENTITY_36 = Uint8Array.of(0x00, 0x24);
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58btc(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)]! + out;
    n /= 58n;
  }
  return '1'.repeat(zeros) + out;
}

/** The peer id of an Ed25519 key in libp2p's protobuf form, or undefined for any other key. */
export function peerIdOfProtobufKey(key: Uint8Array): string | undefined {
  if (key.length !== 68 || !ED25519_PRIVATE_PREFIX.every((b, i) => key[i] === b)) return undefined;
  const pub = key.subarray(36, 68);
  return base58btc(Uint8Array.from([...IDENTITY_36, ...ED25519_PUBLIC_PREFIX, ...pub]));
}

/** The peer id of the key file in `dataDir` (net/peer-key.ts's), if there is one this can read. */
export function peerIdFromKeyFile(dataDir: string, file: string): string | undefined {
  const path = join(dataDir, file);
  if (!existsSync(path)) return undefined;
  const hex = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]+$/.test(hex) || hex.length % 2 !== 0) return undefined;
  return peerIdOfProtobufKey(Uint8Array.from(Buffer.from(hex, 'hex')));
}
