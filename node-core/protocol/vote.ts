import { bytesToHex, hexToBytes, writeHex } from './hex.ts';
import { writeU64BE } from './int.ts';
import { signBytes, type Verifier, verifyBytes } from './keys.ts';

/**
 * Representative votes (protocol.md section 8.7, reference-behavior.md section 2.2): 138 signed
 * bytes = 0x02 || rep public key (32) || block hash (32) || position account (32) || position
 * previous (32, zeros for an opening block) || timestamp (i64 BE) || final flag (1 byte). Ed25519
 * signs these bytes directly, not a hash of them.
 */
export interface Vote {
  rep_pub_key: string;
  block_hash: string;
  account: string;
  previous: string;
  timestamp: bigint;
  final: boolean;
  signature?: string;
}

export const VOTE_BYTES = 138;

export function voteMessage(v: Vote): Uint8Array {
  const out = new Uint8Array(VOTE_BYTES);
  writeVoteMessage(out, 0, v);
  return out;
}

/**
 * The vote's signed bytes written into `out` at `offset` (a batch's entry, protocol/vote-batch.ts):
 * one array a vote where decoding each field to an array of its own took five.
 */
export function writeVoteMessage(out: Uint8Array, offset: number, v: Vote): void {
  out[offset] = 0x02;
  writeHex(out, offset + 1, v.rep_pub_key, 32, 'rep_pub_key');
  writeHex(out, offset + 33, v.block_hash, 32, 'block_hash');
  writeHex(out, offset + 65, v.account, 32, 'account');
  // An opening block's vote names no previous: 32 zero bytes.
  if (v.previous === '0') out.fill(0, offset + 97, offset + 129);
  else writeHex(out, offset + 97, v.previous, 32, 'previous');
  writeU64BE(out, offset + 129, v.timestamp);
  out[offset + 137] = v.final ? 1 : 0;
}

/** Signs a vote; `sign` lets the node use its native signer (same signatures: Ed25519 is deterministic). */
export function signVote(
  v: Vote,
  seed: Uint8Array,
  sign: (message: Uint8Array, seed: Uint8Array) => Uint8Array = signBytes,
): Vote & { signature: string } {
  return { ...v, signature: bytesToHex(sign(voteMessage(v), seed)) };
}

export function verifyVote(v: Vote, verify: Verifier = verifyBytes): boolean {
  try {
    if (!v.signature) return false;
    return verify(hexToBytes(v.signature, 64), voteMessage(v), hexToBytes(v.rep_pub_key, 32));
  } catch {
    return false;
  }
}
