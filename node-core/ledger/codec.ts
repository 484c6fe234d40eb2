import { type Block, BLOCK_TYPE_BYTES, decodeCanonical, encodeCanonical } from '../protocol/block.ts';
import { bytesToHex, hexToBytes, writeHex } from '../protocol/hex.ts';
import { writeHalvesBE } from '../protocol/int.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';
import type { Keyset } from '../protocol/keys.ts';
import type { AccountRecord, BlockRecord, PendingRecord } from './records.ts';

/**
 * Compact binary forms of the ledger's stored records and keys. Binary keys and values keep the store
 * small (a block is its canonical bytes plus signature, nonce and hash: about a third of its JSON) and
 * keep every write touching as few B-tree pages as possible, which is what bounds durable throughput.
 */

/**
 * The buffer every Writer encodes into. Encoders run to completion one at a time (none is nested in
 * another), and `done()` copies out exactly the bytes written: one allocation a record. A buffer of
 * its own per Writer made three (256 bytes, a doubled one for a block, the copy), each off V8's heap
 * with a free on its sweeper thread (ingest profile).
 */
let scratch = new Uint8Array(4096);
let scratchView = new DataView(scratch.buffer);
/** Writers started so far: one started before another is done (a nested encoding) is a bug, caught by done(). */
let started = 0;

class Writer {
  private buf = scratch;
  private view = scratchView;
  len = 0;
  private readonly number = ++started;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    scratch = this.buf = next;
    scratchView = this.view = new DataView(next.buffer);
  }
  u8(v: number): this {
    this.ensure(1);
    this.buf[this.len++] = v;
    return this;
  }
  u16(v: number): this {
    this.ensure(2);
    this.view.setUint16(this.len, v);
    this.len += 2;
    return this;
  }
  u32(v: number): this {
    this.ensure(4);
    this.view.setUint32(this.len, v);
    this.len += 4;
    return this;
  }
  u64(v: bigint): this {
    this.ensure(8);
    this.view.setBigUint64(this.len, BigInt.asUintN(64, v));
    this.len += 8;
    return this;
  }
  bytes(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }
  /** `n` bytes given as hex, decoded in place (no array of its own: every record has two or three). */
  hex(h: string, n: number): this {
    this.ensure(n);
    writeHex(this.buf, this.len, h, n);
    this.len += n;
    return this;
  }
  hex32(h: string): this {
    return this.hex(h, 32);
  }
  /** A short string: 1-byte length, UTF-8 (asset names: ASCII, copied as is without an encoder's array). */
  str8(s: string): this {
    if (s.length < 256) {
      this.ensure(1 + s.length);
      const start = this.len;
      this.buf[this.len++] = s.length;
      let i = 0;
      for (; i < s.length && s.charCodeAt(i) < 0x80; i++) this.buf[this.len++] = s.charCodeAt(i);
      if (i === s.length) return this;
      this.len = start;
    }
    const b = UTF8_OUT.encode(s);
    return this.u8(b.length).bytes(b);
  }
  /** A longer blob: 4-byte length. */
  blob(b: Uint8Array): this {
    return this.u32(b.length).bytes(b);
  }
  done(out: Out = 'copy'): Uint8Array {
    if (this.number !== started) throw new Error('codec: a record was encoded inside another one');
    return out === 'shared' ? this.buf.subarray(0, this.len) : this.buf.slice(0, this.len);
  }
}

/**
 * How an encoder hands back a record's bytes: `copy` (the default), an array of their own; `shared`, a
 * view of the encoding buffer itself, valid only until the next record is encoded. `shared` is for a
 * value passed straight to lmdb-js's putSync, which copies it into the store before it returns: no
 * array is allocated (off V8's heap, freed by its sweeper), and lmdb-js knows the buffer's address
 * from the last put, where it looks up a new array's natively (1.0-1.3 µs a put saved here).
 */
export type Out = 'copy' | 'shared';

const UTF8_OUT = new TextEncoder();

const UTF8 = new TextDecoder();

class Reader {
  private readonly b: Uint8Array;
  private readonly view: DataView;
  off = 0;
  constructor(b: Uint8Array) {
    this.b = b;
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  u8(): number {
    return this.b[this.off++]!;
  }
  u16(): number {
    const v = this.view.getUint16(this.off);
    this.off += 2;
    return v;
  }
  u32(): number {
    const v = this.view.getUint32(this.off);
    this.off += 4;
    return v;
  }
  u64(): bigint {
    const v = this.view.getBigUint64(this.off);
    this.off += 8;
    return v;
  }
  i64(): bigint {
    return BigInt.asIntN(64, this.u64());
  }
  bytes(n: number): Uint8Array {
    const v = this.b.subarray(this.off, this.off + n);
    this.off += n;
    return v;
  }
  hex32(): string {
    return bytesToHex(this.bytes(32));
  }
  str8(): string {
    return UTF8.decode(this.bytes(this.u8()));
  }
  blob(): Uint8Array {
    return this.bytes(this.u32());
  }
}

// ---- keys -------------------------------------------------------------------------------------------

/** Sub-keys inside an account's key range: its record, its chain entries, the sends pending to it. */
const ACCT_RECORD = 0x00;
const ACCT_CHAIN = 0x01;
const ACCT_PENDING = 0x02;

// Keys are built in place (writeHex, no intermediate array): consensus builds several per vote.
export function accountKey(address: string): Uint8Array {
  const k = new Uint8Array(33);
  writeHex(k, 0, address, 32);
  k[32] = ACCT_RECORD;
  return k;
}

export function chainKey(address: string, height: number): Uint8Array {
  const k = new Uint8Array(37);
  writeHex(k, 0, address, 32);
  k[32] = ACCT_CHAIN;
  k[33] = height >>> 24;
  k[34] = (height >>> 16) & 0xff;
  k[35] = (height >>> 8) & 0xff;
  k[36] = height & 0xff;
  return k;
}

export function pendingKey(destination: string, sendHash: string): Uint8Array {
  const k = new Uint8Array(65);
  writeHex(k, 0, destination, 32);
  k[32] = ACCT_PENDING;
  writeHex(k, 33, sendHash, 32);
  return k;
}

/** Range bounds of one kind of sub-key of an account (start inclusive, end exclusive). */
export function accountRange(
  address: string,
  kind: 'chain' | 'pending',
): { start: Uint8Array; end: Uint8Array } {
  const tag = kind === 'chain' ? ACCT_CHAIN : ACCT_PENDING;
  const start = new Uint8Array(33);
  start.set(hexToBytes(address, 32));
  start[32] = tag;
  const end = Uint8Array.from(start);
  end[32] = tag + 1;
  return { start, end };
}

export type AccountKeyKind =
  | { kind: 'record'; address: string }
  | { kind: 'chain'; address: string; height: number }
  | { kind: 'pending'; destination: string; hash: string };

export function parseAccountKey(k: Uint8Array): AccountKeyKind {
  const address = bytesToHex(k.subarray(0, 32));
  if (k[32] === ACCT_RECORD) return { kind: 'record', address };
  if (k[32] === ACCT_CHAIN)
    return { kind: 'chain', address, height: new DataView(k.buffer, k.byteOffset).getUint32(33) };
  return { kind: 'pending', destination: address, hash: bytesToHex(k.subarray(33, 65)) };
}

export function isPendingKey(k: Uint8Array): boolean {
  return k.length === 65 && k[32] === ACCT_PENDING;
}

export function isChainKey(k: Uint8Array): boolean {
  return k.length === 37 && k[32] === ACCT_CHAIN;
}

export function isRecordKey(k: Uint8Array): boolean {
  return k.length === 33 && k[32] === ACCT_RECORD;
}

export function seqKey(seq: number): Uint8Array {
  const k = new Uint8Array(8);
  writeSeq(k, 0, seq);
  return k;
}

/**
 * A sequence number (a whole number below 2^53) as 8 bytes big-endian at `off`, from its two halves
 * as numbers: a DataView over a new small array would move its bytes off V8's heap, an allocation per
 * block, and writeU64BE takes a bigint (a conversion and BigInt operations, each a new BigInt).
 */
export function writeSeq(out: Uint8Array, off: number, seq: number): void {
  writeHalvesBE(out, off, Math.floor(seq / 2 ** 32), seq >>> 0);
}

export function hashKey(hash: string): Uint8Array {
  return hexToBytes(hash, 32);
}

// ---- values -----------------------------------------------------------------------------------------

const F_SIG = 1;
const F_PUBKEY = 2;
const F_NONCE = 4;
const F_EXTRA = 8;

/**
 * A stored block: height, hash, canonical bytes, then signature, declared key, nonce and the aux
 * data that is not in the canonical bytes (certificate hash, attestations, multisig signatures).
 * `canonical`, when given, must be the block's own canonical bytes (the hashing step made them).
 */
export function encodeBlockRecord(r: BlockRecord, canonical?: Uint8Array): Uint8Array {
  const b = r.block;
  const extra: Record<string, unknown> = {};
  if (b.certificate_hash) extra.certificate_hash = b.certificate_hash;
  if (b.attestations) extra.attestations = b.attestations;
  if (b.signatures) extra.signatures = b.signatures;
  const hasExtra = Object.keys(extra).length > 0;
  const flags =
    (b.signature ? F_SIG : 0) |
    (b.pub_key ? F_PUBKEY : 0) |
    (b.pow_nonce !== undefined ? F_NONCE : 0) |
    (hasExtra ? F_EXTRA : 0);
  const w = new Writer()
    .u32(r.height)
    .hex32(b.hash!)
    .blob(canonical ?? encodeCanonical(b))
    .u8(flags);
  if (b.signature) w.hex(b.signature, 64);
  if (b.pub_key) w.hex32(b.pub_key);
  if (b.pow_nonce !== undefined) w.u64(b.pow_nonce);
  if (hasExtra) w.blob(UTF8_OUT.encode(stringifyJson(extra)));
  return w.done();
}

export function decodeBlockRecord(bytes: Uint8Array): BlockRecord {
  const r = new Reader(bytes);
  const height = r.u32();
  const hash = r.hex32();
  const block: Block = decodeCanonical(r.blob());
  const flags = r.u8();
  if (flags & F_SIG) block.signature = bytesToHex(r.bytes(64));
  if (flags & F_PUBKEY) block.pub_key = r.hex32();
  if (flags & F_NONCE) block.pow_nonce = r.u64();
  if (flags & F_EXTRA) {
    const extra = parseJson(UTF8.decode(r.blob())) as Record<string, unknown>;
    if (extra.certificate_hash) block.certificate_hash = extra.certificate_hash as string;
    if (extra.attestations) {
      block.attestations = (
        extra.attestations as { public_key: string; timestamp: bigint | number; signature: string }[]
      ).map((a) => ({ ...a, timestamp: BigInt(a.timestamp) }));
    }
    if (extra.signatures) block.signatures = extra.signatures as Block['signatures'];
  }
  block.hash = hash;
  return { block, height };
}

/** Height of a stored block without decoding the rest. */
export function blockRecordHeight(bytes: Uint8Array): number {
  return new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0);
}

/**
 * Offsets into a stored block record: u32 height, 32-byte hash, u32 length, then the canonical bytes
 * (protocol/block.ts: version, type, 8-byte asset, account, previous, u64 balance, ...).
 */
const REC_HASH = 4;
const REC_CANONICAL = 4 + 32 + 4;

/** The account of a stored block (its canonical bytes' account field) without decoding the rest. */
export function blockRecordAccountBytes(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(REC_CANONICAL + 10, REC_CANONICAL + 42);
}

/** What finalizing a block reads of it (ledger.applyFinalize). */
export interface BlockFinalFacts {
  /** A `lease_settle`: its credit (LedgerReads.creditOf) needs the whole block. */
  settle: boolean;
  asset: string;
  balance: bigint;
  previous: string;
  hash: string;
}

/**
 * The fields finalization needs from a stored block, read from their fixed places in its canonical
 * bytes: decoding whole blocks to finalize them made ~450 MB of garbage in a 30,000-block catch-up.
 */
export function blockRecordFinalFacts(bytes: Uint8Array): BlockFinalFacts {
  const c = REC_CANONICAL;
  let assetEnd = c + 10;
  while (assetEnd > c + 2 && bytes[assetEnd - 1] === 0) assetEnd--;
  return {
    settle: bytes[c + 1] === BLOCK_TYPE_BYTES.lease_settle,
    asset: UTF8.decode(bytes.subarray(c + 2, assetEnd)),
    balance: new DataView(bytes.buffer, bytes.byteOffset + c + 74, 8).getBigUint64(0),
    previous: bytesToHex(bytes.subarray(c + 42, c + 74)),
    hash: bytesToHex(bytes.subarray(REC_HASH, REC_HASH + 32)),
  };
}

function writeBalances(w: Writer, b: Record<string, bigint>): void {
  const entries = Object.entries(b);
  w.u8(entries.length);
  for (const [asset, v] of entries) w.str8(asset).u64(v);
}

/**
 * Adds an account record's balances to `totals`, reading nothing else of it: the supply walk visits
 * every account, and decoding each whole record would make garbage in proportion.
 */
export function addRecordBalances(bytes: Uint8Array, totals: Record<string, bigint>): void {
  const r = new Reader(bytes);
  r.off = 4 + 4 + 32 + 8 + 1; // height, final height, frontier, last timestamp, flags
  for (let n = r.u8(); n > 0; n--) {
    const asset = r.str8();
    totals[asset] = (totals[asset] ?? 0n) + r.u64();
  }
}

function readBalances(r: Reader): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (let n = r.u8(); n > 0; n--) {
    const asset = r.str8();
    out[asset] = r.u64();
  }
  return out;
}

const A_REP = 1;
const A_PUBKEY = 2;
const A_KEYSET = 4;
const A_CLAIMS = 8;

export function encodeAccount(a: AccountRecord, out: Out = 'copy'): Uint8Array {
  const flags =
    (a.representative ? A_REP : 0) |
    (a.pub_key ? A_PUBKEY : 0) |
    (a.keyset ? A_KEYSET : 0) |
    (a.claims?.length ? A_CLAIMS : 0);
  const w = new Writer().u32(a.height).u32(a.final_height).hex32(a.frontier).u64(a.last_timestamp).u8(flags);
  writeBalances(w, a.balances);
  writeBalances(w, a.final_balances);
  if (a.representative) w.hex32(a.representative);
  if (a.pub_key) w.hex32(a.pub_key);
  if (a.keyset) {
    w.u32(a.keyset.threshold).u16(a.keyset.keys.length);
    for (const k of a.keyset.keys) w.hex32(k);
  }
  if (a.claims?.length) {
    w.u16(a.claims.length);
    for (const [t, v] of a.claims) w.u64(t).u64(v);
  }
  return w.done(out);
}

/**
 * An account record's fixed prefix: u32 height, u32 final height, the 32-byte frontier. Most readers
 * (consensus counting a vote, the block's finality flag, sync's frontier comparison) need only
 * these; decoding the whole record (balances, keys, claims) made ~640 MB of garbage in a
 * 30,000-block catch-up (issue #18, target 6).
 */
export function recordHeight(bytes: Uint8Array): number {
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

export function recordFinalHeight(bytes: Uint8Array): number {
  return ((bytes[4]! << 24) | (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!) >>> 0;
}

export function recordFrontier(bytes: Uint8Array): string {
  return bytesToHex(bytes.subarray(8, 40));
}

/** What an account record's prefix holds (see recordHeight). */
export interface AccountHead {
  height: number;
  final_height: number;
  frontier: string;
}

export function decodeAccountHead(bytes: Uint8Array): AccountHead {
  return {
    height: recordHeight(bytes),
    final_height: recordFinalHeight(bytes),
    frontier: recordFrontier(bytes),
  };
}

/** What a block's signature check needs of its account: the single key, and whether a keyset rules it. */
export interface SigningKey {
  pub_key: string | undefined;
  multisig: boolean;
}

/**
 * An account record's signing key, read past its balances without decoding them: every block's
 * signature check reads it (twice for a gossiped block), and decoding the whole record each time was
 * a tenth of what a receiving node allocated per block (issue #18).
 */
export function recordSigningKey(bytes: Uint8Array): SigningKey {
  let off = 4 + 4 + 32 + 8; // height, final height, frontier, last timestamp
  const flags = bytes[off++]!;
  for (let list = 0; list < 2; list++) {
    // balances, then final balances: a count, then (1-byte length, asset name, u64) each
    for (let n = bytes[off++]!; n > 0; n--) off += 1 + bytes[off]! + 8;
  }
  if (flags & A_REP) off += 32;
  return {
    pub_key: flags & A_PUBKEY ? bytesToHex(bytes.subarray(off, off + 32)) : undefined,
    multisig: (flags & A_KEYSET) !== 0,
  };
}

export function decodeAccount(bytes: Uint8Array): AccountRecord {
  const r = new Reader(bytes);
  const height = r.u32();
  const final_height = r.u32();
  const frontier = r.hex32();
  const last_timestamp = r.i64();
  const flags = r.u8();
  const a: AccountRecord = {
    height,
    final_height,
    frontier,
    last_timestamp,
    balances: readBalances(r),
    final_balances: readBalances(r),
  };
  if (flags & A_REP) a.representative = r.hex32();
  if (flags & A_PUBKEY) a.pub_key = r.hex32();
  if (flags & A_KEYSET) {
    const threshold = r.u32();
    const keys: string[] = [];
    for (let n = r.u16(); n > 0; n--) keys.push(r.hex32());
    a.keyset = { keys, threshold } satisfies Keyset;
  }
  if (flags & A_CLAIMS) {
    a.claims = [];
    for (let n = r.u16(); n > 0; n--) a.claims.push([r.i64(), r.u64()]);
  }
  return a;
}

export function encodePending(p: PendingRecord, out: Out = 'copy'): Uint8Array {
  return new Writer().hex32(p.from).u64(p.amount).str8(p.asset).u64(p.timestamp).done(out);
}

export function decodePending(bytes: Uint8Array): PendingRecord {
  const r = new Reader(bytes);
  return { from: r.hex32(), amount: r.u64(), asset: r.str8(), timestamp: r.i64() };
}
