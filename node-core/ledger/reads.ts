import { encodeCanonical } from '../protocol/block.ts';
import { bytesEqualHex, bytesToHex, hexToBytes } from '../protocol/hex.ts';
import type { Store } from '../store/store.ts';
import {
  accountKey,
  accountRange,
  type AccountHead,
  addRecordBalances,
  type BlockFinalFacts,
  blockRecordAccountBytes,
  blockRecordFinalFacts,
  blockRecordHeight,
  chainKey,
  decodeAccount,
  decodeAccountHead,
  decodeBlockRecord,
  decodePending,
  hashKey,
  isChainKey,
  isPendingKey,
  isRecordKey,
  parseAccountKey,
  recordFinalHeight,
  recordHeight,
  recordSigningKey,
  type SigningKey,
} from './codec.ts';
import type { AccountRecord, BlockRecord, PendingRecord } from './records.ts';
import type { SignedBlock } from './rules/index.ts';
import { decodeLease } from '../leasing/records.ts';

export interface StoredBlock {
  block: SignedBlock;
  height: number;
  finalized: boolean;
}

export interface PendingEntry extends PendingRecord {
  hash: string;
  destination: string;
}

/** Blocks whose amount leaves the account: sends, burns, a lease's or renewal's escrow, a stake. */
const OUTFLOW_TYPES = new Set(['send', 'burn', 'lease', 'lease_accept', 'lease_renew']);
/** Chain entries stepped over before a walk of the accounts table skips the rest of the run. */
const CHAIN_STEPS = 8;

/** Addresses of the account index read at a time by a walk over the accounts. */
const INDEX_CHUNK = 256;

/** The account index's first key after `address`: the address with one byte more sorts right after it. */
function indexKeyAfter(address: string): Uint8Array {
  const key = new Uint8Array(33);
  key.set(hexToBytes(address, 32));
  return key;
}

/**
 * The read side of the ledger: accounts, chains, blocks, pending entries and totals, straight from the
 * store (every key layout lives in codec.ts). Reads never write and hold no state of their own, so
 * the ledger's write path extends this class and every reader sees what the last commit left.
 */
export class LedgerReads {
  protected readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  protected blockBySeq(seq: Uint8Array): BlockRecord & { block: SignedBlock } {
    // Decoded straight from lmdb-js's shared read buffer (see accountHead): the block keeps no view of it.
    return decodeBlockRecord(this.store.blocks.getBinaryFast(seq)!) as BlockRecord & { block: SignedBlock };
  }

  /** The stored block of a hash, given as hex or, where the caller has them already, as its 32 bytes. */
  protected readBlock(hash: string | Uint8Array): (BlockRecord & { block: SignedBlock }) | undefined {
    const seq = this.store.hashes.get(typeof hash === 'string' ? hashKey(hash) : hash);
    return seq === undefined ? undefined : this.blockBySeq(seq);
  }

  /** The block at a chain height (1-based). */
  protected blockAt(address: string, height: number): (BlockRecord & { block: SignedBlock }) | undefined {
    const entry = this.store.accounts.get(chainKey(address, height));
    return entry === undefined ? undefined : this.blockBySeq(entry.subarray(0, 8));
  }

  /**
   * The balance of `asset` after the block at `height` (0 before the first block): the balance field
   * of the last block in that asset, plus the credits that blocks in other assets made to it since.
   */
  protected balanceAt(account: string, height: number, asset: string): bigint {
    let credited = 0n;
    for (let h = height; h >= 1; h--) {
      const b = this.blockAt(account, h)!.block;
      if (b.asset === asset) return b.balance + credited;
      const c = this.creditOf(b);
      if (c?.asset === asset) credited += c.amount;
    }
    return credited;
  }

  /** A credit a block makes outside its balance field: the stake a `lease_settle` returns (LS-12). */
  protected creditOf(b: SignedBlock): { asset: string; amount: bigint } | undefined {
    if (b.type !== 'lease_settle' || b.source === undefined) return undefined;
    const text = this.store.leases.get(b.source);
    const stake = text === undefined ? 0n : decodeLease(text).stake;
    return stake > 0n ? { asset: 'XUSD', amount: stake } : undefined;
  }

  /** The representative in force after the block at `height`. */
  protected representativeAt(account: string, height: number): string | undefined {
    for (let h = height; h >= 1; h--) {
      const rep = this.blockAt(account, h)!.block.representative;
      if (rep) return rep;
    }
    return undefined;
  }

  getAccount(address: string): AccountRecord | undefined {
    // The shared read buffer (see below): decodeAccount copies every field out and keeps no view.
    const bytes = this.store.accounts.getBinaryFast(accountKey(address));
    return bytes === undefined ? undefined : decodeAccount(bytes);
  }

  /*
   * The readers below read fields at fixed places of a record (codec.ts) straight from lmdb-js's
   * shared read buffer (getBinaryFast: no copy, valid until the next read, so each is used at once).
   * They see what `get` would: the write transaction's state inside one, the last commit outside.
   * Consensus asks for an account's heights several times per vote; decoding the whole record
   * each time was most of a catch-up's garbage (issue #18, target 6).
   */

  /** An account's height, final height and frontier, or undefined for an unknown account. */
  accountHead(address: string): AccountHead | undefined {
    const bytes = this.store.accounts.getBinaryFast(accountKey(address));
    return bytes === undefined ? undefined : decodeAccountHead(bytes);
  }

  /** An account's signing key (codec.ts recordSigningKey), or undefined for an unknown account. */
  signingKeyOf(address: string): SigningKey | undefined {
    const bytes = this.store.accounts.getBinaryFast(accountKey(address));
    return bytes === undefined ? undefined : recordSigningKey(bytes);
  }

  /** An account's height (0 for an unknown account). */
  heightOf(address: string): number {
    const bytes = this.store.accounts.getBinaryFast(accountKey(address));
    return bytes === undefined ? 0 : recordHeight(bytes);
  }

  /** An account's final height (0 for an unknown account). */
  finalHeightOf(address: string): number {
    return this.finalHeightOfKey(accountKey(address));
  }

  /** True when the block is stored and final; nothing of it or its account is decoded. */
  isFinal(hash: string): boolean {
    const seq = this.store.hashes.get(hashKey(hash));
    if (seq === undefined) return false;
    const rec = this.store.blocks.getBinaryFast(seq);
    if (rec === undefined) return false;
    const height = blockRecordHeight(rec);
    const key = new Uint8Array(33); // accountKey: the address, then the record tag (0)
    key.set(blockRecordAccountBytes(rec));
    return height <= this.finalHeightOfKey(key);
  }

  private finalHeightOfKey(key: Uint8Array): number {
    const bytes = this.store.accounts.getBinaryFast(key);
    return bytes === undefined ? 0 : recordFinalHeight(bytes);
  }

  /** What finalizing the block at a chain height reads of it (ledger.applyFinalize). */
  protected finalFactsAt(address: string, height: number): BlockFinalFacts | undefined {
    const entry = this.store.accounts.get(chainKey(address, height));
    if (entry === undefined) return undefined;
    const rec = this.store.blocks.getBinaryFast(entry.subarray(0, 8));
    return rec === undefined ? undefined : blockRecordFinalFacts(rec);
  }

  /** Whether the store holds a block with this hash: an index lookup, its record neither read nor decoded. */
  hasBlock(hash: string): boolean {
    return this.store.hashes.doesExist(hashKey(hash));
  }

  getBlock(hash: string): StoredBlock | undefined {
    const rec = this.readBlock(hash);
    if (!rec) return undefined;
    return { ...rec, finalized: rec.height <= this.finalHeightOf(rec.block.account) };
  }

  /** Blocks of a chain, oldest first, from 0-based `offset`. Undefined for an unknown account. */
  getChain(
    address: string,
    offset: number,
    limit: number,
  ): { total: number; blocks: StoredBlock[] } | undefined {
    const acct = this.getAccount(address);
    if (!acct) return undefined;
    const blocks: StoredBlock[] = [];
    const { end } = accountRange(address, 'chain');
    for (const { value } of this.store.accounts.getRange({
      start: chainKey(address, offset + 1),
      end,
      limit,
    })) {
      const rec = this.blockBySeq(value.subarray(0, 8));
      blocks.push({ ...rec, finalized: rec.height <= acct.final_height });
    }
    return { total: acct.height, blocks };
  }

  /** Block hash at a chain height (1-based). */
  /** True when the chain's block at `height` is `hash` (hashAt's answer without making its string). */
  hashIsAt(address: string, height: number, hash: string): boolean {
    const entry = this.store.accounts.getBinaryFast(chainKey(address, height));
    return entry !== undefined && bytesEqualHex(entry.subarray(8, 40), hash);
  }

  hashAt(address: string, height: number): string | undefined {
    const entry = this.store.accounts.getBinaryFast(chainKey(address, height));
    return entry === undefined ? undefined : bytesToHex(entry.subarray(8, 40));
  }

  listAccounts(offset: number, limit: number): { address: string; account: AccountRecord }[] {
    // The offset is stepped over in the account index: nothing is read for the accounts skipped.
    const out: { address: string; account: AccountRecord }[] = [];
    for (const key of this.store.accountIndex.getKeys({ offset, limit })) {
      const address = bytesToHex(key);
      const account = this.getAccount(address);
      if (account) out.push({ address, account });
    }
    return out;
  }

  /**
   * The account records and pending sends, in key order, without the chain entries between them: a
   * long run of an account's chain entries (one per block) is skipped by starting a new range past
   * them, a short one is stepped over (a new range costs more than a few steps). Listings and the
   * supply report walked every key: with 50 blocks an account, 50 entries for each record they
   * wanted (issue #18).
   */
  private recordsAndPending(from?: Uint8Array): Generator<{ key: Uint8Array; value: Uint8Array }> {
    const range = (start?: Uint8Array) => this.store.accounts.getRange(start === undefined ? {} : { start });
    return this.skipChainRuns(from, range, (e) => e.key);
  }

  /**
   * Every account record's key, read from the accounts' own key ranges (not the account index): what
   * the index is built from (Ledger.start). No value is read.
   */
  protected *recordKeys(): Generator<Uint8Array> {
    const range = (start?: Uint8Array) => this.store.accounts.getKeys(start === undefined ? {} : { start });
    for (const key of this.skipChainRuns(undefined, range, (k) => k)) if (isRecordKey(key)) yield key;
  }

  private *skipChainRuns<E>(
    from: Uint8Array | undefined,
    range: (start?: Uint8Array) => Iterable<E>,
    keyOf: (e: E) => Uint8Array,
  ): Generator<E> {
    let start = from;
    for (;;) {
      let run = 0;
      let resume: Uint8Array | undefined;
      for (const e of range(start)) {
        const key = keyOf(e);
        if (!isChainKey(key)) {
          run = 0;
          yield e;
        } else if (++run > CHAIN_STEPS) {
          resume = accountRange(bytesToHex(key.subarray(0, 32)), 'chain').end;
          break;
        }
      }
      if (resume === undefined) return;
      start = resume;
    }
  }

  pendingFor(address: string, offset: number, limit: number): PendingEntry[] {
    const out: PendingEntry[] = [];
    for (const { key, value } of this.store.accounts.getRange({
      ...accountRange(address, 'pending'),
      offset,
      limit,
    })) {
      const k = parseAccountKey(key);
      if (k.kind === 'pending')
        out.push({ ...decodePending(value), destination: k.destination, hash: k.hash });
    }
    return out;
  }

  listPending(offset: number, limit: number): PendingEntry[] {
    const out: PendingEntry[] = [];
    let skipped = 0;
    for (const p of this.allPending()) {
      if (skipped++ < offset) continue;
      out.push(p);
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Newest blocks first by timestamp, among the most recently stored ones (commit order follows
   * time closely); `since` keeps only strictly later blocks.
   */
  recentBlocks(limit: number, since?: bigint): StoredBlock[] {
    const window: (BlockRecord & { block: SignedBlock })[] = [];
    for (const { value } of this.store.blocks.getRange({
      reverse: true,
      limit: Math.min(limit * 2 + 100, 3000),
    })) {
      window.push(decodeBlockRecord(value) as BlockRecord & { block: SignedBlock });
    }
    const picked = window
      .filter((r) => since === undefined || r.block.timestamp > since)
      .sort((a, b) =>
        a.block.timestamp > b.block.timestamp ? -1 : a.block.timestamp < b.block.timestamp ? 1 : 0,
      )
      .slice(0, limit);
    const finals = new Map<string, number>();
    return picked.map((r) => {
      let f = finals.get(r.block.account);
      if (f === undefined)
        finals.set(r.block.account, (f = this.getAccount(r.block.account)?.final_height ?? 0));
      return { ...r, finalized: r.height <= f };
    });
  }

  /**
   * Spendable funds (reference-behavior.md section 2.4): the balance at the final height, minus every
   * committed but unfinalized outflow above it; unfinalized inflows are left out.
   */
  spendable(address: string): Record<string, bigint> {
    const acct = this.getAccount(address);
    if (!acct) return {};
    const out: Record<string, bigint> = { ...acct.final_balances };
    for (let h = acct.final_height + 1; h <= acct.height; h++) {
      const b = this.blockAt(address, h)!.block;
      if (OUTFLOW_TYPES.has(b.type)) out[b.asset] = (out[b.asset] ?? 0n) - (b.amount ?? 0n);
    }
    for (const [k, v] of Object.entries(out)) if (v <= 0n) delete out[k];
    return out;
  }

  /** Delegated XE weight per representative. */
  repWeights(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const { key, value } of this.store.reps.getRange({})) out.set(key, BigInt(value));
    return out;
  }

  /** Accounts with blocks above their final height. */
  unfinalizedAccounts(): string[] {
    return [...this.store.unfinal.getKeys({})];
  }

  /**
   * How many accounts have blocks above their final height, counted without listing them (`/ready`,
   * which the window asks every 5 s: with 30,000 elections open, a list took 15-33 ms, a count 1).
   */
  unfinalizedCount(): number {
    return this.store.unfinal.getKeysCount();
  }

  /**
   * Iterates every account in address order, after `after` if given, through the account index
   * (store.ts accountIndex): an account's chain entries and pending sends, and the addresses that
   * have pending sends only, are not stepped over at all.
   */
  allAccounts(after?: string): Generator<[string, AccountRecord]> {
    return this.indexedAfter(decodeAccount, after);
  }

  /** allAccounts with each record's prefix only (height, final height, frontier): a frontiers answer. */
  allAccountHeads(after?: string): Generator<[string, AccountHead]> {
    return this.indexedAfter(decodeAccountHead, after);
  }

  /** The account heads whose address begins with the byte `bucket`, in address order (frontier-digests.ts). */
  accountHeadsInBucket(bucket: number): Generator<[string, AccountHead]> {
    const start = new Uint8Array(32);
    start[0] = bucket;
    let end: Uint8Array | undefined;
    if (bucket < 255) {
      end = new Uint8Array(32);
      end[0] = bucket + 1;
    }
    return this.indexedAccounts(decodeAccountHead, start, end);
  }

  private indexedAfter<T>(decode: (bytes: Uint8Array) => T, after?: string): Generator<[string, T]> {
    return this.indexedAccounts(decode, after === undefined ? undefined : indexKeyAfter(after));
  }

  /**
   * Account records from the account index's key `start` on (to `end`, exclusive), in address order.
   * The index is read a chunk of addresses at a time and each record as it is reached, so that no
   * cursor is held while the caller yields to the event loop between accounts (frontier pages and
   * digests are sliced): each account is as it is when reached.
   */
  private *indexedAccounts<T>(
    decode: (bytes: Uint8Array) => T,
    start?: Uint8Array,
    end?: Uint8Array,
  ): Generator<[string, T]> {
    let from = start;
    for (;;) {
      const chunk = [...this.store.accountIndex.getKeys({ start: from, end, limit: INDEX_CHUNK })].map((k) =>
        bytesToHex(k),
      );
      for (const address of chunk) {
        const bytes = this.store.accounts.getBinaryFast(accountKey(address));
        // Removed since the chunk was read (its opening block undone): no account any more.
        if (bytes !== undefined) yield [address, decode(bytes)];
      }
      if (chunk.length < INDEX_CHUNK) return;
      from = indexKeyAfter(chunk.at(-1)!);
    }
  }

  /**
   * One pass over the account records and pending sends, for the supply report: totals only, with
   * nothing decoded beyond the amounts.
   */
  sumHoldings(): {
    accounts: number;
    balances: Record<string, bigint>;
    pending: number;
    inFlight: Record<string, bigint>;
  } {
    const out = {
      accounts: 0,
      balances: {} as Record<string, bigint>,
      pending: 0,
      inFlight: {} as Record<string, bigint>,
    };
    for (const { key, value } of this.recordsAndPending()) {
      if (isRecordKey(key)) {
        out.accounts++;
        addRecordBalances(value, out.balances);
      } else if (isPendingKey(key)) {
        out.pending++;
        const p = decodePending(value);
        out.inFlight[p.asset] = (out.inFlight[p.asset] ?? 0n) + p.amount;
      }
    }
    return out;
  }

  *allPending(): Generator<PendingEntry> {
    for (const { key, value } of this.recordsAndPending()) {
      if (!isPendingKey(key)) continue;
      const k = parseAccountKey(key) as { destination: string; hash: string };
      yield { ...decodePending(value), destination: k.destination, hash: k.hash };
    }
  }

  /** The canonical bytes of a stored block (for sync and diagnostics). */
  canonicalOf(hash: string): Uint8Array | undefined {
    const b = this.readBlock(hash);
    return b ? encodeCanonical(b.block) : undefined;
  }
}
