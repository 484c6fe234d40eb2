import { type Block, isBlockType } from '../protocol/block.ts';
import {
  CERTIFICATE_FIELDS,
  certificateToJson,
  decodeCertificate,
  type PerformanceCertificate,
} from '../protocol/certificate.ts';
import { blockToJson, decodeBlock } from '../protocol/block-json.ts';
import { bytesToHex, hexToBytes, isHex } from '../protocol/hex.ts';
import { toBigIntField } from '../protocol/int.ts';
import { type JsonPath, parseJson, stringifyJson } from '../protocol/json.ts';
import { decodeMarketplaceGossip, type MarketplaceGossip } from '../protocol/marketplace.ts';
import { decodeStateBlock, type StateBlock, stateBlockToJson } from '../protocol/statechain.ts';
import type { Vote } from '../protocol/vote.ts';

/**
 * Gossip topics and their payloads (reference-behavior.md section 5.3, protocol.md section 8.7):
 * JSON objects `{"block": …}` and `{"vote": …}`, at most 256 KiB. Decoding is strict: anything
 * malformed is undefined, and the sender is penalised by the topic validator.
 */
export const TOPICS = {
  blocks: 'xe/blocks',
  votes: 'xe/votes',
  statechain: 'xe/statechain',
  /** Raw registration JSON (reference-behavior.md 5.3, 7.2). */
  directory: 'xe/directory',
  /** Raw performance-certificate JSON (reference-behavior.md 4.7, 5.3). */
  certificates: 'xe/certificates',
  /** Marketplace ads, requests and offers (reference-behavior.md 4.9). */
  marketplace: 'xe/marketplace',
  /**
   * Several blocks in one message, `{"blocks": [block, …]}` (this node's extension, issue #18): a
   * message costs every hop its framing, encryption, id hash, duplicate filter and score bookkeeping
   * whatever it carries, and one per block was most of what three nodes spent relaying a block. Only
   * sent while every peer subscribes to it; nodes that do not know it still get `xe/blocks`.
   */
  blockBatches: 'xe/block-batches',
  /** Several votes in one message, `{"votes": [vote, …]}`, each vote signed on its own as ever. */
  voteBatches: 'xe/vote-batches',
  /**
   * One representative's votes under one signature (protocol/vote-batch.ts, binary): receivers
   * check one signature per batch. Sent only while every peer subscribes; each vote also carries
   * its own signature, so a node can pass it on to a peer that does not take the format.
   */
  signedVoteBatches: 'xe/vote-batches-signed',
} as const;

/** Most blocks or votes in one batch message; its bytes stay within MAX_BATCH_BYTES too. */
export const MAX_BATCH_ITEMS = 256;
/** Room left under MAX_GOSSIP_BYTES for the envelope. */
export const MAX_BATCH_BYTES = 200 * 1024;

export const MAX_GOSSIP_BYTES = 256 * 1024;

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

function text(bytes: Uint8Array): string | undefined {
  if (bytes.length > MAX_GOSSIP_BYTES) return undefined;
  try {
    return dec.decode(bytes);
  } catch {
    return undefined;
  }
}

export function encodeBlockMessage(block: Block): Uint8Array {
  return enc.encode(stringifyJson({ block: blockToJson(block, 'reference') }));
}

export function decodeBlockMessage(bytes: Uint8Array): Block | undefined {
  const t = text(bytes);
  if (t === undefined) return undefined;
  try {
    const o = parseJson(t) as Record<string, unknown>;
    if (Object.keys(o).length !== 1 || o.block === undefined) return undefined;
    return decodeBlock(o.block);
  } catch {
    return undefined;
  }
}

/**
 * The type name of a well-formed block message whose type this node does not know (a block type of a
 * newer network), or undefined. Such a block cannot be judged yet, so the validator ignores it rather
 * than penalising the peer that relayed it (reference-behavior.md 9.1, L-19). Only asked once
 * decodeBlockMessage has failed, so it costs the valid path nothing.
 */
export function unknownBlockType(bytes: Uint8Array): string | undefined {
  const t = text(bytes);
  if (t === undefined) return undefined;
  try {
    const o = parseJson(t) as Record<string, unknown>;
    if (Object.keys(o).length !== 1 || typeof o.block !== 'object' || o.block === null) return undefined;
    const type = (o.block as Record<string, unknown>).type;
    return typeof type === 'string' && /^[a-z][a-z0-9_]{0,31}$/.test(type) && !isBlockType(type)
      ? type
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Votes travel with PascalCase names as the reference node's are inferred to (protocol.md 8.7,
 * unconfirmed on the wire): keys and hashes as hex, the signature as base64, the weight unsigned.
 */
export function voteToJson(v: Vote & { signature: string }, weight: bigint): Record<string, unknown> {
  return {
    RepPubKey: v.rep_pub_key,
    BlockHash: v.block_hash,
    ConflictAccount: v.account,
    ConflictPrev: v.previous,
    Timestamp: v.timestamp,
    Final: v.final,
    Signature: Buffer.from(hexToBytes(v.signature, 64)).toString('base64'),
    Weight: weight.toString(),
  };
}

const VOTE_KEYS = [
  'RepPubKey',
  'BlockHash',
  'ConflictAccount',
  'ConflictPrev',
  'Timestamp',
  'Final',
  'Signature',
  'Weight',
];

/** A vote object (strict: unknown keys or malformed fields give undefined). */
export function voteFromJson(v: unknown): (Vote & { signature: string }) | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (Object.keys(o).some((k) => !VOTE_KEYS.includes(k))) return undefined;
  const prev = o.ConflictPrev;
  if (!isHex(o.RepPubKey, 32) || !isHex(o.BlockHash, 32) || !isHex(o.ConflictAccount, 32)) return undefined;
  if (!(prev === '0' || isHex(prev, 32))) return undefined;
  if (typeof o.Final !== 'boolean' || typeof o.Signature !== 'string') return undefined;
  const sig = Buffer.from(o.Signature, 'base64');
  if (sig.length !== 64) return undefined;
  try {
    return {
      rep_pub_key: o.RepPubKey,
      block_hash: o.BlockHash,
      account: o.ConflictAccount,
      previous: prev as string,
      timestamp: toBigIntField(o.Timestamp, 'i64', 'Timestamp'),
      final: o.Final,
      signature: bytesToHex(new Uint8Array(sig)),
    };
  } catch {
    return undefined;
  }
}

export function encodeVoteMessage(v: Vote & { signature: string }, weight: bigint): Uint8Array {
  return enc.encode(stringifyJson({ vote: voteToJson(v, weight) }));
}

export function decodeVoteMessage(bytes: Uint8Array): (Vote & { signature: string }) | undefined {
  const t = text(bytes);
  if (t === undefined || t.length > 4096) return undefined;
  try {
    const o = parseJson(t) as { vote?: unknown };
    if (Object.keys(o).length !== 1) return undefined;
    return voteFromJson(o.vote);
  } catch {
    return undefined;
  }
}

/** A batch message `{"<key>":[item,…]}` from items already encoded (blockJson / voteJson text, as UTF-8). */
export function encodeBatchMessage(key: 'blocks' | 'votes', items: readonly Uint8Array[]): Uint8Array {
  const head = enc.encode(`{"${key}":[`);
  let size = head.length + items.length + 1; // the commas between items, and `]}`
  for (const it of items) size += it.length;
  const out = new Uint8Array(size);
  out.set(head);
  let at = head.length;
  items.forEach((it, i) => {
    if (i > 0) out[at++] = 0x2c; // ,
    out.set(it, at);
    at += it.length;
  });
  out[at++] = 0x5d; // ]
  out[at] = 0x7d; // }
  return out;
}

/** One block as it travels inside a batch (the same object as a `{"block": …}` message holds). */
export function blockJson(block: Block): string {
  return stringifyJson(blockToJson(block, 'reference'));
}

export function voteJson(v: Vote & { signature: string }, weight: bigint): string {
  return stringifyJson(voteToJson(v, weight));
}

/** The items of a batch message `{"<key>": [item, …]}`: exactly that one key, 1 to MAX_BATCH_ITEMS items. */
function batchItems(bytes: Uint8Array, key: 'blocks' | 'votes'): unknown[] | undefined {
  const t = text(bytes);
  if (t === undefined) return undefined;
  try {
    const o = parseJson(t) as Record<string, unknown>;
    const items = o[key];
    if (Object.keys(o).length !== 1 || !Array.isArray(items)) return undefined;
    return items.length === 0 || items.length > MAX_BATCH_ITEMS ? undefined : (items as unknown[]);
  } catch {
    return undefined;
  }
}

/**
 * `{"blocks": [block, …]}`, strictly: one key, 1 to MAX_BATCH_ITEMS blocks, each as strict as a
 * single block message. A block of a type this node does not know is left out and counted (not the
 * sender's fault, L-19); anything else malformed makes the whole message undefined.
 */
export function decodeBlockBatch(bytes: Uint8Array): { blocks: Block[]; unknown: number } | undefined {
  const items = batchItems(bytes, 'blocks');
  if (items === undefined) return undefined;
  try {
    const blocks: Block[] = [];
    let unknown = 0;
    for (const item of items) {
      try {
        blocks.push(decodeBlock(item));
      } catch {
        const type = (item as Record<string, unknown> | null)?.type;
        if (typeof type !== 'string' || !/^[a-z][a-z0-9_]{0,31}$/.test(type) || isBlockType(type))
          return undefined;
        unknown += 1;
      }
    }
    return { blocks, unknown };
  } catch {
    return undefined;
  }
}

/**
 * `{"votes": [vote, …]}`, strictly: one key, 1 to MAX_BATCH_ITEMS votes, each well-formed. The
 * weight each vote travelled with is kept (receivers recompute it, but a vote passed on to a node
 * that only takes `xe/votes` goes out as the byte-identical message its sender would have sent).
 */
export function decodeVoteBatch(
  bytes: Uint8Array,
): { vote: Vote & { signature: string }; weight: bigint }[] | undefined {
  const items = batchItems(bytes, 'votes');
  if (items === undefined) return undefined;
  try {
    const out: { vote: Vote & { signature: string }; weight: bigint }[] = [];
    for (const item of items) {
      const vote = voteFromJson(item);
      if (!vote) return undefined;
      const w = (item as Record<string, unknown>).Weight;
      // Unsigned and recomputed by every receiver: only ever passed on, so never a reason to refuse.
      out.push({ vote, weight: typeof w === 'string' && /^\d{1,40}$/.test(w) ? BigInt(w) : 0n });
    }
    return out;
  } catch {
    return undefined;
  }
}

export function encodeStateMessage(block: StateBlock): Uint8Array {
  return enc.encode(stringifyJson({ block: stateBlockToJson(block) }));
}

const isStateValue = (p: JsonPath) =>
  p.length === 4 && p[0] === 'block' && p[1] === 'ops' && typeof p[2] === 'number' && p[3] === 'value';

export function decodeStateMessage(bytes: Uint8Array): StateBlock | undefined {
  const t = text(bytes);
  if (t === undefined) return undefined;
  try {
    const o = parseJson(t, { raw: isStateValue }) as Record<string, unknown>;
    if (Object.keys(o).length !== 1 || o.block === undefined) return undefined;
    return decodeStateBlock(o.block as Parameters<typeof decodeStateBlock>[0]);
  } catch {
    return undefined;
  }
}

/**
 * Certificates travel as their raw JSON, on `xe/certificates` as in `cert_request` answers
 * (reference-behavior.md 5.3). A whole certificate is about 1 KiB.
 */
export const MAX_CERTIFICATE_JSON_BYTES = 4096;

export function encodeCertificateMessage(cert: PerformanceCertificate): Uint8Array {
  return enc.encode(stringifyJson(certificateToJson(cert)));
}

/** A certificate object, strictly: exactly the specification's fields, each well-formed; else undefined. */
export function certificateFromJson(v: unknown): PerformanceCertificate | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const keys = Object.keys(v);
  if (keys.length !== CERTIFICATE_FIELDS.length) return undefined;
  if (keys.some((k) => !(CERTIFICATE_FIELDS as readonly string[]).includes(k))) return undefined;
  try {
    return decodeCertificate(v);
  } catch {
    return undefined;
  }
}

export function decodeCertificateMessage(bytes: Uint8Array): PerformanceCertificate | undefined {
  if (bytes.length > MAX_CERTIFICATE_JSON_BYTES) return undefined;
  const t = text(bytes);
  if (t === undefined) return undefined;
  try {
    return certificateFromJson(parseJson(t));
  } catch {
    return undefined;
  }
}

/** A marketplace message is a few hundred bytes; anything much larger is not one. */
export const MAX_MARKETPLACE_BYTES = 4096;

export function encodeMarketplaceMessage(msg: MarketplaceGossip): Uint8Array {
  return enc.encode(stringifyJson(msg));
}

/**
 * `{type, ad|request|offer}` (protocol/marketplace.ts), strictly: no key besides the type and its
 * message, none in the message besides its signed fields and signature; else undefined.
 */
export function decodeMarketplaceMessage(bytes: Uint8Array): MarketplaceGossip | undefined {
  if (bytes.length > MAX_MARKETPLACE_BYTES) return undefined;
  const t = text(bytes);
  if (t === undefined) return undefined;
  try {
    const o = parseJson(t) as Record<string, unknown>;
    if (Object.keys(o).length !== 2) return undefined;
    const msg = decodeMarketplaceGossip(o);
    const inner = o[msg.type] as Record<string, unknown>;
    const decoded = (msg as Record<string, unknown>)[msg.type] as Record<string, unknown>;
    return Object.keys(inner).length === Object.keys(decoded).length ? msg : undefined;
  } catch {
    return undefined;
  }
}
