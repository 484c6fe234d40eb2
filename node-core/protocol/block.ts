import { ProtocolError } from './errors.ts';
import { sha256 } from './hash.ts';
import { bytesToHex, concatBytes, utf8, writeHex } from './hex.ts';
import { readI64BE, readU64BE, u64BE, writeU64BE } from './int.ts';
import { type Keyset, normalizeKeyset } from './keys.ts';
import { memoBytes } from './memo.ts';

/**
 * The ledger block model and its canonical binary encoding (protocol.md section 3, decisions D6).
 * Pure data and byte layouts: validation against ledger state lives in the node.
 */

/** Type bytes are consensus constants. `claim` is 0x03 (decisions D6). */
export const BLOCK_TYPE_BYTES = {
  send: 0x01,
  receive: 0x02,
  claim: 0x03,
  lease: 0x04,
  lease_accept: 0x05,
  lease_settle: 0x06,
  genesis: 0x07,
  multisig_open: 0x08,
  multisig_update: 0x09,
  lease_cancel: 0x0a,
  burn: 0x0b,
  lease_force_settle: 0x0c,
  mint: 0x0d,
  lease_renew: 0x0e,
} as const;

export type BlockType = keyof typeof BLOCK_TYPE_BYTES;
export const BLOCK_TYPES = Object.keys(BLOCK_TYPE_BYTES) as BlockType[];
const TYPE_BY_BYTE = new Map<number, BlockType>(BLOCK_TYPES.map((t) => [BLOCK_TYPE_BYTES[t], t]));

export function isBlockType(s: unknown): s is BlockType {
  return typeof s === 'string' && Object.hasOwn(BLOCK_TYPE_BYTES, s);
}

export const BLOCK_VERSION = 0x02;
export const ZERO_HASH = '0'.repeat(64);
const ZERO_32 = new Uint8Array(32);

export interface Attestation {
  public_key: string;
  timestamp: bigint;
  signature: string;
}

export interface MultisigSignature {
  public_key: string;
  signature: string;
}

/** The six lease-timing fields a genesis block may pin, in tail order (protocol.md section 3.4). */
export const GENESIS_TIMING_FIELDS = [
  'lease_min_duration_secs',
  'lease_settle_grace_ns',
  'lease_force_settle_gap_ns',
  'lease_escrow_expiry_ns',
  'lease_archive_gap_ns',
  'max_attestation_skew_ns',
] as const;
export type GenesisTimingField = (typeof GENESIS_TIMING_FIELDS)[number];

/**
 * A block. Hex fields are lowercase; `previous` of an opening block is 64 zeros (ZERO_HASH).
 * 64-bit fields are bigint. Optional fields are absent rather than zero/empty.
 */
export interface Block {
  type: BlockType;
  account: string;
  previous: string;
  balance: bigint;
  timestamp: bigint;
  asset: string;
  representative?: string;
  destination?: string;
  source?: string;
  amount?: bigint;
  memo?: string;
  vcpus?: bigint;
  memory_mb?: bigint;
  disk_gb?: bigint;
  duration?: bigint;
  access_pub_key?: string;
  certificate_hash?: string;
  attestations?: Attestation[];
  locked_r?: bigint;
  locked_payout_cap?: bigint;
  locked_twap_milli?: bigint;
  keyset?: Keyset;
  lease_min_duration_secs?: bigint;
  lease_settle_grace_ns?: bigint;
  lease_force_settle_gap_ns?: bigint;
  lease_escrow_expiry_ns?: bigint;
  lease_archive_gap_ns?: bigint;
  max_attestation_skew_ns?: bigint;
  pub_key?: string;
  signature?: string;
  signatures?: MultisigSignature[];
  hash?: string;
  pow_nonce?: bigint;
}

/** One field of a type-specific tail: its name and how it is laid out. */
export type TailField =
  | { name: 'destination' | 'source'; kind: 'hash32'; required: true }
  | { name: 'access_pub_key'; kind: 'hash32'; required: false }
  | {
      name:
        | 'amount'
        | 'vcpus'
        | 'memory_mb'
        | 'disk_gb'
        | 'duration'
        | 'locked_r'
        | 'locked_payout_cap'
        | 'locked_twap_milli';
      kind: 'u64';
      required: boolean;
    }
  | { name: 'keyset'; kind: 'keyset'; required: true };

const dest = { name: 'destination', kind: 'hash32', required: true } as const;
const src = { name: 'source', kind: 'hash32', required: true } as const;
const amountReq = { name: 'amount', kind: 'u64', required: true } as const;
// The lease family's amounts and dimensions default to 0 when absent (protocol.md section 3.3 notes).
const u64Opt = <
  N extends
    | 'amount'
    | 'vcpus'
    | 'memory_mb'
    | 'disk_gb'
    | 'duration'
    | 'locked_r'
    | 'locked_payout_cap'
    | 'locked_twap_milli',
>(
  name: N,
) => ({ name, kind: 'u64', required: false }) as const;

/** Type-specific tails, in byte order (protocol.md section 3.3; claim from decisions D6). */
export const TAIL_LAYOUT: Record<BlockType, readonly TailField[]> = {
  send: [dest, amountReq],
  receive: [src],
  claim: [amountReq],
  burn: [amountReq],
  mint: [amountReq],
  genesis: [],
  lease: [
    dest,
    u64Opt('amount'),
    u64Opt('vcpus'),
    u64Opt('memory_mb'),
    u64Opt('disk_gb'),
    u64Opt('duration'),
    { name: 'access_pub_key', kind: 'hash32', required: false },
  ],
  lease_accept: [
    src,
    u64Opt('amount'),
    u64Opt('locked_r'),
    u64Opt('locked_payout_cap'),
    u64Opt('locked_twap_milli'),
  ],
  lease_settle: [src, u64Opt('amount')],
  lease_cancel: [src],
  lease_force_settle: [src],
  lease_renew: [
    src,
    u64Opt('amount'),
    u64Opt('duration'),
    u64Opt('locked_r'),
    u64Opt('locked_payout_cap'),
    u64Opt('locked_twap_milli'),
  ],
  multisig_open: [{ name: 'keyset', kind: 'keyset', required: true }],
  multisig_update: [{ name: 'keyset', kind: 'keyset', required: true }],
};

/** Types with the 1-byte-length memo trailer. */
export const MEMO_TYPES: ReadonlySet<BlockType> = new Set(['send', 'burn']);
/** Types whose aux binds the certificate hash and attestation set (not lease_cancel). */
export const LEASE_AUX_TYPES: ReadonlySet<BlockType> = new Set([
  'lease',
  'lease_accept',
  'lease_settle',
  'lease_force_settle',
  'lease_renew',
]);
/** Types that may carry attestations; the reference node strips them from `lease` before hashing. */
export const ATTESTED_TYPES: ReadonlySet<BlockType> = new Set([
  'lease_accept',
  'lease_settle',
  'lease_force_settle',
  'lease_renew',
]);
/** Types that may carry a certificate hash. */
export const CERTIFIED_TYPES: ReadonlySet<BlockType> = new Set(['lease', 'lease_accept', 'lease_renew']);
export const MULTISIG_KEYSET_TYPES: ReadonlySet<BlockType> = new Set(['multisig_open', 'multisig_update']);

export const HEADER_SIZE = 90;
export const GENESIS_TIMING_SIZE = 48;

export function isOpening(block: Pick<Block, 'previous'>): boolean {
  return block.previous === ZERO_HASH;
}

function tailSize(type: BlockType, keyset?: Keyset): number {
  let n = 0;
  for (const f of TAIL_LAYOUT[type]) {
    if (f.kind === 'hash32') n += 32;
    else if (f.kind === 'u64') n += 8;
    else n += 8 + 32 * (keyset?.keys.length ?? 0);
  }
  return n;
}

/**
 * Checked bytes of recent asset names: every block names one of a few, and its hash encodes it each
 * time. Read-only: encodeCanonical copies them into its output.
 */
const assetCache = new Map<string, Uint8Array>();

/** An asset name's bytes in the canonical encoding (shared: read them only), or ERR_ASSET. */
function assetBytes(asset: string): Uint8Array {
  let b = assetCache.get(asset);
  if (b !== undefined) return b;
  b = utf8(asset);
  if (b.length === 0 || b.length > 8)
    throw new ProtocolError('ERR_ASSET', 'asset must be 1 to 8 bytes', 'asset');
  if (b.includes(0)) throw new ProtocolError('ERR_ASSET', 'asset must not contain NUL', 'asset');
  if (assetCache.size >= 16) assetCache.clear();
  assetCache.set(asset, b);
  return b;
}

/** Refuses (ERR_ASSET) an asset name that is not 1 to 8 UTF-8 bytes without NUL. */
export function checkAsset(asset: string): void {
  assetBytes(asset);
}

function hasGenesisTiming(block: Block): boolean {
  return GENESIS_TIMING_FIELDS.some((f) => (block[f] ?? 0n) !== 0n);
}

/**
 * Canonical bytes of a block: 90-byte header, type tail, representative, genesis timing tail
 * (genesis only, when any field is non-zero), memo trailer (send and burn only).
 */
export function encodeCanonical(block: Block): Uint8Array {
  const type = block.type;
  const memo = MEMO_TYPES.has(type) ? memoBytes(block.memo ?? '') : undefined;
  if (!MEMO_TYPES.has(type) && block.memo) {
    throw new ProtocolError('ERR_FIELD_FORBIDDEN', `a ${type} block cannot carry a memo`, 'memo');
  }
  const timing = type === 'genesis' && hasGenesisTiming(block);
  if (type !== 'genesis' && hasGenesisTiming(block)) {
    throw new ProtocolError('ERR_FIELD_FORBIDDEN', 'genesis timing fields on a non-genesis block', 'type');
  }
  const keyset = MULTISIG_KEYSET_TYPES.has(type) ? normalizeKeyset(block.keyset) : undefined;
  const size =
    HEADER_SIZE +
    tailSize(type, keyset) +
    32 +
    (timing ? GENESIS_TIMING_SIZE : 0) +
    (memo ? 1 + memo.length : 0);
  const out = new Uint8Array(size);
  out[0] = BLOCK_VERSION;
  out[1] = BLOCK_TYPE_BYTES[type];
  out.set(assetBytes(block.asset), 2);
  writeHex(out, 10, block.account, 32, 'account');
  writeHex(out, 42, block.previous, 32, 'previous');
  writeU64BE(out, 74, block.balance);
  writeU64BE(out, 82, block.timestamp);
  let off = HEADER_SIZE;
  for (const f of TAIL_LAYOUT[type]) {
    if (f.kind === 'hash32') {
      const v = block[f.name];
      if (v === undefined || v === '') {
        if (f.required) throw new ProtocolError('ERR_FIELD_MISSING', `required on ${type}`, f.name);
        out.set(ZERO_32, off);
      } else writeHex(out, off, v, 32, f.name);
      off += 32;
    } else if (f.kind === 'u64') {
      const v = block[f.name];
      if (v === undefined && f.required)
        throw new ProtocolError('ERR_FIELD_MISSING', `required on ${type}`, f.name);
      writeU64BE(out, off, v ?? 0n);
      off += 8;
    } else {
      const ks = keyset!;
      new DataView(out.buffer).setUint32(off, ks.threshold, false);
      new DataView(out.buffer).setUint32(off + 4, ks.keys.length, false);
      off += 8;
      for (const k of ks.keys) {
        writeHex(out, off, k, 32);
        off += 32;
      }
    }
  }
  if (block.representative) writeHex(out, off, block.representative, 32, 'representative');
  off += 32;
  if (timing) {
    for (const f of GENESIS_TIMING_FIELDS) {
      writeU64BE(out, off, block[f] ?? 0n);
      off += 8;
    }
  }
  if (memo) {
    out[off] = memo.length;
    out.set(memo, off + 1);
  }
  return out;
}

/** LP(x): 8-byte big-endian length, then the bytes. */
function lp(bytes: Uint8Array): Uint8Array {
  return concatBytes(u64BE(BigInt(bytes.length)), bytes);
}

const PUBKEY_TAG = utf8('xe/block/pubkey/v1');

/**
 * Aux section (protocol.md section 3.5): hashed but not canonical. Key declaration (when pub_key is
 * set), then for the lease family the certificate hash and the attestation set sorted by key.
 */
export function encodeAux(block: Block): Uint8Array {
  const parts: Uint8Array[] = [];
  if (block.pub_key) parts.push(lp(PUBKEY_TAG), lp(utf8(block.pub_key)));
  if (LEASE_AUX_TYPES.has(block.type)) {
    parts.push(lp(utf8(block.certificate_hash ?? '')));
    // `lease` never binds attestations: the reference node strips them before hashing.
    const atts = ATTESTED_TYPES.has(block.type) ? (block.attestations ?? []) : [];
    parts.push(u64BE(BigInt(atts.length)));
    const sorted = [...atts].sort((a, b) =>
      a.public_key < b.public_key ? -1 : a.public_key > b.public_key ? 1 : 0,
    );
    for (const a of sorted) parts.push(lp(utf8(a.public_key)), u64BE(a.timestamp), lp(utf8(a.signature)));
  }
  return concatBytes(...parts);
}

/**
 * Block hash bytes: SHA-256(network id || canonical || aux). Genesis blocks are always hashed with an
 * empty network id (protocol.md section 3.6); every other block needs a non-empty one.
 */
export function blockHashBytes(block: Block, networkId: string): Uint8Array {
  const id = block.type === 'genesis' ? '' : networkId;
  if (block.type !== 'genesis' && id === '') {
    throw new ProtocolError('ERR_NETWORK_ID', 'a network id is required to hash a non-genesis block');
  }
  return sha256(concatBytes(utf8(id), encodeCanonical(block), encodeAux(block)));
}

export function blockHash(block: Block, networkId: string): string {
  return bytesToHex(blockHashBytes(block, networkId));
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array, code: 'ERR_ASSET' | 'ERR_MEMO', field: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new ProtocolError(code, 'not valid UTF-8', field);
  }
}

/**
 * Decodes canonical bytes back into the block fields they carry (protocol.md section 3.8). Aux
 * fields (pub_key, certificate hash, attestations) and signatures are not part of these bytes.
 * All-zero representative and access key decode as absent; trailing NULs of the asset are stripped.
 */
export function decodeCanonical(bytes: Uint8Array): Block {
  if (bytes.length < HEADER_SIZE + 32) throw new ProtocolError('ERR_LENGTH', 'too short for a block');
  if (bytes[0] !== BLOCK_VERSION)
    throw new ProtocolError('ERR_VERSION', `unsupported version ${bytes[0]}`, 'version');
  const type = TYPE_BY_BYTE.get(bytes[1]!);
  if (!type)
    throw new ProtocolError('ERR_UNKNOWN_TYPE', `unknown type byte 0x${bytes[1]!.toString(16)}`, 'type');
  let assetEnd = 10;
  while (assetEnd > 2 && bytes[assetEnd - 1] === 0) assetEnd--;
  const asset = decodeUtf8(bytes.subarray(2, assetEnd), 'ERR_ASSET', 'asset');
  const block: Block = {
    type,
    account: bytesToHex(bytes.subarray(10, 42)),
    previous: bytesToHex(bytes.subarray(42, 74)),
    balance: readU64BE(bytes, 74),
    timestamp: readI64BE(bytes, 82),
    asset,
  };
  let off = HEADER_SIZE;
  const need = (n: number, field: string) => {
    if (off + n > bytes.length) throw new ProtocolError('ERR_LENGTH', 'block ends inside this field', field);
  };
  for (const f of TAIL_LAYOUT[type]) {
    if (f.kind === 'hash32') {
      need(32, f.name);
      const raw = bytes.subarray(off, off + 32);
      if (f.required || raw.some((b) => b !== 0)) block[f.name] = bytesToHex(raw);
      off += 32;
    } else if (f.kind === 'u64') {
      need(8, f.name);
      const v = readU64BE(bytes, off);
      if (f.required || v !== 0n) block[f.name] = v;
      off += 8;
    } else {
      need(8, 'keyset');
      const dv = new DataView(bytes.buffer, bytes.byteOffset + off, 8);
      const threshold = dv.getUint32(0, false);
      const count = dv.getUint32(4, false);
      off += 8;
      if (count > 256) throw new ProtocolError('ERR_KEYSET', 'more than 256 keys', 'keyset.keys');
      need(32 * count, 'keyset.keys');
      const keys: string[] = [];
      for (let i = 0; i < count; i++, off += 32) keys.push(bytesToHex(bytes.subarray(off, off + 32)));
      block.keyset = normalizeKeyset({ keys, threshold });
      if (block.keyset.keys.some((k, i) => k !== keys[i])) {
        throw new ProtocolError('ERR_KEYSET', 'keys are not in ascending order', 'keyset.keys');
      }
    }
  }
  need(32, 'representative');
  const rep = bytes.subarray(off, off + 32);
  if (rep.some((b) => b !== 0)) block.representative = bytesToHex(rep);
  off += 32;
  if (type === 'genesis' && bytes.length === off + GENESIS_TIMING_SIZE) {
    for (const f of GENESIS_TIMING_FIELDS) {
      block[f] = f === 'lease_min_duration_secs' ? readU64BE(bytes, off) : readI64BE(bytes, off);
      off += 8;
    }
  }
  if (MEMO_TYPES.has(type)) {
    need(1, 'memo');
    const len = bytes[off]!;
    off += 1;
    need(len, 'memo');
    const memo = decodeUtf8(bytes.subarray(off, off + len), 'ERR_MEMO', 'memo');
    memoBytes(memo);
    if (memo !== '') block.memo = memo;
    off += len;
  }
  if (off !== bytes.length)
    throw new ProtocolError('ERR_LENGTH', `${bytes.length - off} unexpected trailing bytes`);
  return block;
}
