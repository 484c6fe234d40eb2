import { ProtocolError } from './errors.ts';
import { sha256 } from './hash.ts';
import { bytesToHex, hexToBytes, writeHex } from './hex.ts';
import { readI64BE } from './int.ts';
import type { Verifier } from './keys.ts';
import { type Vote, VOTE_BYTES, writeVoteMessage } from './vote.ts';

/**
 * Batch-signed votes (this node's extension, issue #18; README "What travels between nodes"): one
 * representative's votes of one commit, authenticated by ONE Ed25519 signature, so a receiving node
 * checks one signature per batch instead of one per vote (in the three-node benchmark the vote's
 * check was half of the signature work a receiving node did per block). Every entry still carries
 * its own 138-byte single-vote signature: a node passing the votes on to a peer that does not take
 * this format (an older version, possibly several hops away) cannot sign another representative's
 * votes, so the signer always signs them singly too. Receivers count a vote on the batch signature
 * alone and keep its single signature unchecked, to pass on.
 *
 * Bytes (big-endian):
 *
 *     offset      size     field
 *     0           1        0x03 (batch-signed votes, version 1)
 *     1           32       representative public key (every entry's key must equal it)
 *     33          16       weight, u128: the representative's weight as the signer counts it
 *                          (informational: receivers recompute it; passed on with single votes)
 *     49          2        n, the number of entries, 1 to MAX_SIGNED_BATCH_VOTES
 *     51          n * 202  entries: the vote's 138 signed bytes (vote.ts: 0x02 || key || block hash
 *                          || account || previous || timestamp || final) then its single signature (64)
 *     51 + n*202  64       batch signature
 *
 * The batch signature signs the 48 bytes VOTE_BATCH_DOMAIN || SHA-256(bytes 0 to 51 + n*202). That
 * message can be neither a single vote's (138 bytes starting 0x02) nor a block's (its 32-byte hash),
 * so no batch signature can be replayed as either, nor either as a batch signature. No two entries
 * may be the same vote (block hash and final flag); the whole batch is refused otherwise.
 */
export const VOTE_BATCH_DOMAIN = new TextEncoder().encode('XE-VOTE-BATCH-V1');
export const VOTE_BATCH_TYPE = 0x03;
export const MAX_SIGNED_BATCH_VOTES = 256;
const HEADER = 51;
const ENTRY = VOTE_BYTES + 64;
const SIG = 64;
export const MAX_SIGNED_BATCH_BYTES = HEADER + MAX_SIGNED_BATCH_VOTES * ENTRY + SIG;

type SignedVote = Vote & { signature: string };

export interface SignedVoteBatch {
  rep_pub_key: string;
  weight: bigint;
  votes: SignedVote[];
  /** The 48 bytes the batch signature signs. */
  message: Uint8Array;
  signature: Uint8Array;
}

/** SHA-256 of some bytes: the isomorphic one by default; the node passes node:crypto's (fastpath). */
export type Sha256 = (bytes: Uint8Array) => Uint8Array;

/**
 * The 48 bytes a batch signature signs: the domain tag, then SHA-256 of the batch before its
 * signature. `digest` must be SHA-256 (the node's native one hashes a 3 KB batch ~10x faster).
 */
export function voteBatchMessage(body: Uint8Array, digest: Sha256 = sha256): Uint8Array {
  const out = new Uint8Array(VOTE_BATCH_DOMAIN.length + 32);
  out.set(VOTE_BATCH_DOMAIN, 0);
  out.set(digest(body), VOTE_BATCH_DOMAIN.length);
  return out;
}

/**
 * One representative's votes (each already signed singly) as a batch, signed by `sign` with the
 * representative's key. Throws ProtocolError on an empty or oversized batch, an entry of another
 * key, or the same vote twice, as decoding would refuse them.
 */
export function encodeSignedVoteBatch(
  repPubKey: string,
  weight: bigint,
  votes: SignedVote[],
  sign: (message: Uint8Array) => Uint8Array,
  digest: Sha256 = sha256,
): Uint8Array {
  if (votes.length < 1 || votes.length > MAX_SIGNED_BATCH_VOTES)
    throw new ProtocolError('ERR_LENGTH', `a vote batch holds 1 to ${MAX_SIGNED_BATCH_VOTES} votes`, 'votes');
  if (weight < 0n || weight >= 1n << 128n)
    throw new ProtocolError('ERR_FIELD_RANGE', 'out of u128 range', 'weight');
  const out = new Uint8Array(HEADER + votes.length * ENTRY + SIG);
  out[0] = VOTE_BATCH_TYPE;
  writeHex(out, 1, repPubKey, 32, 'rep_pub_key');
  let w = weight;
  for (let i = 48; i >= 33; i--) {
    out[i] = Number(w & 0xffn);
    w >>= 8n;
  }
  new DataView(out.buffer).setUint16(49, votes.length, false);
  const seen = new Set<string>();
  votes.forEach((v, i) => {
    if (v.rep_pub_key !== repPubKey)
      throw new ProtocolError('ERR_FIELD_RANGE', 'not the batch key', `votes[${i}].rep_pub_key`);
    const id = `${v.block_hash}:${v.final ? 1 : 0}`;
    if (seen.has(id)) throw new ProtocolError('ERR_DUPLICATE', 'the same vote twice', `votes[${i}]`);
    seen.add(id);
    const at = HEADER + i * ENTRY;
    writeVoteMessage(out, at, v);
    writeHex(out, at + VOTE_BYTES, v.signature, 64, `votes[${i}].signature`);
  });
  const bodyEnd = out.length - SIG;
  out.set(sign(voteBatchMessage(out.subarray(0, bodyEnd), digest)), bodyEnd);
  return out;
}

/**
 * One representative's votes, each with the weight it goes out with, as few batches as the format
 * allows (encodeSignedVoteBatch each): a new batch where the weight changes (a header carries one),
 * at MAX_SIGNED_BATCH_VOTES, and where a vote already in the batch comes again (a re-signed copy).
 */
export function encodeSignedVoteBatches(
  repPubKey: string,
  items: readonly { vote: SignedVote; weight: bigint }[],
  sign: (message: Uint8Array) => Uint8Array,
  digest: Sha256 = sha256,
): Uint8Array[] {
  const out: Uint8Array[] = [];
  let chunk: SignedVote[] = [];
  let weight = 0n;
  let ids = new Set<string>();
  for (const it of items) {
    const id = `${it.vote.block_hash}:${it.vote.final ? 1 : 0}`;
    if (chunk.length > 0 && (it.weight !== weight || chunk.length >= MAX_SIGNED_BATCH_VOTES || ids.has(id))) {
      out.push(encodeSignedVoteBatch(repPubKey, weight, chunk, sign, digest));
      chunk = [];
      ids = new Set();
    }
    weight = it.weight;
    chunk.push(it.vote);
    ids.add(id);
  }
  if (chunk.length > 0) out.push(encodeSignedVoteBatch(repPubKey, weight, chunk, sign, digest));
  return out;
}

/**
 * A batch's fields and votes, strictly (ProtocolError with its code on anything malformed: wrong
 * type byte or length ERR_LENGTH / ERR_VERSION, an entry not a vote or of another key
 * ERR_FIELD_RANGE, the same vote twice ERR_DUPLICATE). The batch signature is not checked here:
 * verifyVoteBatch, or the verify pool with `message` and `signature`.
 */
export function decodeSignedVoteBatch(bytes: Uint8Array, digest: Sha256 = sha256): SignedVoteBatch {
  if (bytes.length > MAX_SIGNED_BATCH_BYTES) throw new ProtocolError('ERR_LENGTH', 'vote batch too large');
  if (bytes.length < HEADER + ENTRY + SIG) throw new ProtocolError('ERR_LENGTH', 'vote batch too short');
  if (bytes[0] !== VOTE_BATCH_TYPE) throw new ProtocolError('ERR_VERSION', 'not a vote batch (type 0x03)');
  const n = (bytes[49]! << 8) | bytes[50]!;
  if (n < 1 || n > MAX_SIGNED_BATCH_VOTES)
    throw new ProtocolError('ERR_LENGTH', `a vote batch holds 1 to ${MAX_SIGNED_BATCH_VOTES} votes`, 'n');
  if (bytes.length !== HEADER + n * ENTRY + SIG)
    throw new ProtocolError('ERR_LENGTH', `${n} votes need ${HEADER + n * ENTRY + SIG} bytes`);
  const repPubKey = bytesToHex(bytes.subarray(1, 33));
  let weight = 0n;
  for (let i = 33; i < 49; i++) weight = (weight << 8n) | BigInt(bytes[i]!);
  const votes: SignedVote[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const at = HEADER + i * ENTRY;
    if (bytes[at] !== 0x02) throw new ProtocolError('ERR_FIELD_RANGE', 'not a vote (0x02)', `votes[${i}]`);
    if (!sameBytes(bytes, 1, at + 1, 32))
      throw new ProtocolError('ERR_FIELD_RANGE', 'not the batch key', `votes[${i}].rep_pub_key`);
    const flag = bytes[at + 137]!;
    if (flag > 1) throw new ProtocolError('ERR_FIELD_RANGE', 'final flag is 0 or 1', `votes[${i}].final`);
    const blockHash = bytesToHex(bytes.subarray(at + 33, at + 65));
    const id = `${blockHash}:${flag}`;
    if (seen.has(id)) throw new ProtocolError('ERR_DUPLICATE', 'the same vote twice', `votes[${i}]`);
    seen.add(id);
    const prev = bytes.subarray(at + 97, at + 129);
    votes.push({
      rep_pub_key: repPubKey,
      block_hash: blockHash,
      account: bytesToHex(bytes.subarray(at + 65, at + 97)),
      // An opening block's vote names no previous: '0', as single votes carry it (vote.ts).
      previous: prev.every((b) => b === 0) ? '0' : bytesToHex(prev),
      timestamp: readI64BE(bytes, at + 129),
      final: flag === 1,
      signature: bytesToHex(bytes.subarray(at + VOTE_BYTES, at + ENTRY)),
    });
  }
  const bodyEnd = bytes.length - SIG;
  return {
    rep_pub_key: repPubKey,
    weight,
    votes,
    message: voteBatchMessage(bytes.subarray(0, bodyEnd), digest),
    signature: bytes.slice(bodyEnd),
  };
}

/** True when `bytes` holds the same `length` bytes at `a` and at `b` (no copy: this is isomorphic). */
function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/** True when the batch signature is the representative's over the batch's domain-separated hash. */
export function verifyVoteBatch(batch: SignedVoteBatch, verify: Verifier): boolean {
  try {
    return verify(batch.signature, batch.message, hexToBytes(batch.rep_pub_key, 32));
  } catch {
    return false;
  }
}
