import { closeSync, existsSync, openSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';
import { open } from './lmdb-package.ts';
import { parseJson } from '../protocol/json.ts';
import {
  type CheckpointRecord,
  Checkpointer,
  readCheckpoint,
  type RestoreOutcome,
  removeCheckpoints,
  restoreCheckpoint,
} from './checkpoint.ts';
import {
  compactCopyPath,
  readCompactionMarker,
  readerPids,
  rewriteLmdbCopy,
  type RewriteResult,
  writeCompactCopy,
  installCompactCopy,
} from './compaction.ts';
import { isFull, StoreFailedError, StoreFullError } from './errors.ts';
import { takeOwnerLock } from './owner-lock.ts';
import { WriteBatch, type WriteBatchOptions } from './write-batch.ts';

/**
 * The node's durable store: one LMDB environment with named databases. Ledger records are compact
 * binary (ledger/codec.ts); state-chain records are JSON text kept verbatim, as their hashes demand.
 *
 * Writes go through `transaction`: the callback runs inside LMDB's batched write transaction (it
 * sees every earlier write of the batch), aborts alone if it throws, and the returned promise
 * resolves only once the batch is committed AND flushed to disk. That is the point at which the node
 * may acknowledge a block: nothing acknowledged can be lost by a crash, nothing half-applied survives.
 */
export interface StoreOptions {
  path: string;
  /** Initial map size in bytes; LMDB grows it as needed. */
  mapSize?: number;
  /**
   * The ledger's block groups are made durable by its write-ahead journal (ledger/block-journal.ts):
   * LMDB then syncs nothing at commit (a commit waited for the previous one's syncs, 1.2-1.4 ms of
   * a 3 ms request), and checkpoints (store/checkpoint.ts) record a synced snapshot that a start
   * after a crash goes back to before the journal replays onto it. Every other write waits for
   * `durable()`, a checkpoint.
   */
  journaled?: boolean;
  /** How often a journaled store takes a checkpoint while it is written (default 1 s). */
  checkpointMs?: number;
  /** A journaled store's write batches (store/write-batch.ts); `maxMs: 0` commits every group. */
  batch?: WriteBatchOptions;
  /** Told once when a write batch fails to commit (the store then refuses every write). */
  onFailure?: (e: StoreFailedError) => void;
}

/**
 * What `Store.close` did about compaction (see `compactOnClose`): `compacted` with the data file's
 * size before and after and the time taken, or the reason it was left as it was.
 */
export type CompactionResult =
  | { compacted: true; bytesBefore: number; bytesAfter: number; ms: number }
  | { compacted: false; reason: string };

/** LMDB's map to begin with (lmdb-js grows it when the file needs more). */
const DEFAULT_MAP_SIZE = 256 * 1024 * 1024;

/** A data file smaller than this is never compacted at close (tests, new nodes: nothing to gain). */
export const COMPACT_MIN_BYTES = 32 * 1024 * 1024;
/** ... nor one that grew by less than this factor since it was last compacted. */
export const COMPACT_GROWTH = 1.25;

/**
 * The error behind a failed LMDB write: lmdb-js rejects every write of a failed commit with a
 * generic "Commit failed" whose `commitError` promise holds the cause (ENOSPC, an I/O error). That
 * promise must be awaited, or its rejection goes unhandled and ends the process.
 */
async function commitFailure(e: unknown): Promise<unknown> {
  const pending = (e as { commitError?: Promise<unknown> } | undefined)?.commitError;
  let cause = e;
  if (pending !== undefined && typeof pending.then === 'function') {
    try {
      await pending;
    } catch (inner) {
      cause = inner;
    }
  }
  return isFull(cause) ? new StoreFullError(cause) : cause;
}

/** Puts (or, with `undefined`, removes) one record and resolves once it is durable (Store.durablePut). */
export type DurablePut = (key: string, value: string | undefined) => Promise<void>;

export class Store {
  readonly root: RootDatabase;
  /** Small named records: genesis, counters, state-chain tip. */
  readonly meta: Database<string, string>;
  /** Binary ledger records: the running counters. */
  readonly ledgerMeta: Database<Uint8Array, string>;
  /** block sequence number (8 bytes BE, in commit order) -> block record (ledger/codec.ts) */
  readonly blocks: Database<Uint8Array, Uint8Array>;
  /** block hash (32 bytes) -> sequence number (8 bytes) */
  readonly hashes: Database<Uint8Array, Uint8Array>;
  /**
   * One key range per account (32-byte address, then a tag): its record, its chain entries
   * (height -> sequence number) and the sends pending to it. Everything a block changes on its own
   * account sits together, so a block dirties few pages.
   */
  readonly accounts: Database<Uint8Array, Uint8Array>;
  /**
   * account address (32 bytes) -> nothing: one entry per account record, so that walks over the
   * accounts (frontier pages and digests for sync, account listings) step over accounts only. In
   * `accounts` every address that was sent to has a key range, and an address with sends pending and
   * no record of its own (never opened, or not yet on a node catching up) cost such a walk a range of
   * its own: 98 % of the addresses of the catch-up benchmark's ledger, 9,800-12,750 of them in a row
   * between two accounts a node was asked for (issue #18).
   */
  readonly accountIndex: Database<Uint8Array, Uint8Array>;
  /** representative address -> delegated XE weight (digits) */
  readonly reps: Database<string, string>;
  /** accounts whose final height is below their height -> '' (re-driven at start) */
  readonly unfinal: Database<string, string>;
  /**
   * Open conflicts: position `account:height` -> {previous, candidates, detected_at} JSON. Kept with
   * the blocks they concern, so a restart resumes the vote instead of forgetting the fork.
   */
  readonly conflicts: Database<string, string>;
  /** Staged conflict candidates: block hash (32 bytes) -> block record (ledger/codec.ts) */
  readonly staged: Database<Uint8Array, Uint8Array>;
  /**
   * The node representative's commit-locks: position `account:previous` -> the one hash it cast a
   * final vote for there (write-once; reference-behavior.md 2.2). Dropped once the position is final.
   */
  readonly voteLocks: Database<string, string>;
  /** lease hash (64 hex) -> lease record JSON (leasing/records.ts) */
  readonly leases: Database<string, string>;
  /**
   * The leases by party and by state (leasing/lease-book.ts): `p:<provider>:<lease hash>` and
   * `c:<consumer>:<lease hash>` -> its state, `s:<state>:<lease hash>` -> ''
   */
  readonly leaseIndex: Database<string, string>;
  /** `<lease hash>:<index, 10 digits>` -> that renewal of the lease (JSON; leasing/lease-book.ts) */
  readonly leaseRenewals: Database<string, string>;
  /** lease-family block hash (32 bytes) -> what undoing that block puts back (JSON) */
  readonly leaseUndo: Database<string, Uint8Array>;
  /** `address:block hash` -> what that lease-family block added to the account's reputation (JSON) */
  readonly reputation: Database<string, string>;
  /** performance certificate hash (64 hex) -> certificate JSON (protocol.md 8.6) */
  readonly certificates: Database<string, string>;
  /** `<provider>:<issued_at, 20 digits>:<certificate hash>` -> '' (leasing/certificate-book.ts) */
  readonly certificateIndex: Database<string, string>;
  /** state-chain index -> state block JSON (op values verbatim) */
  readonly stateBlocks: Database<string, number>;
  /** state-chain key -> value JSON text, verbatim */
  readonly kv: Database<string, string>;
  /** lease hash (64 hex) -> this provider's VM for it (leasing/provider/vm-book.ts), JSON */
  readonly vms: Database<string, string>;
  /** chat envelope id (64 hex) -> stored message JSON (chat/chat-store.ts) */
  readonly chatMessages: Database<string, string>;
  /** `<party key>:<timestamp, 20 digits>:<id>` -> '' : each party's messages in time order */
  readonly chatIndex: Database<string, string>;
  /**
   * `<seq, 20 digits>` -> chat envelope id, in storage order (the chat event stream's ids), and
   * `last` -> the last seq assigned (kept even when that message is pruned, so none is reused)
   */
  readonly chatSeq: Database<string, string>;
  /**
   * chat envelope id -> its delivery to the recipient's node (chat/chat-outbox.ts), JSON: the outbox
   * (state `pending`) and the record of what was delivered or failed, dropped with the message
   */
  readonly chatDelivery: Database<string, string>;
  /** lease hash (64 hex) -> the node account's hold on it (leasing/consumer/hold.ts), JSON */
  readonly leaseHolds: Database<string, string>;
  /**
   * Idempotency-Key records of the HTTP API (api/idempotency.ts): SHA-256 hex of the client scope and
   * the key -> `<created ms>` newline the first answer's JSON (fingerprint, status, headers, body)
   */
  readonly idempotency: Database<string, string>;
  /** The agent audit log (api/audit-log.ts): `<time ns, 20 digits>` -> entry JSON, oldest first */
  readonly agentAudit: Database<string, string>;
  /**
   * Agent checkpoints of the node's local state (agent/checkpoints.ts): `meta:<id>` -> {id, name,
   * created_at, counts} JSON, `data:<id>` -> the captured areas JSON
   */
  readonly agentCheckpoints: Database<string, string>;
  /**
   * The window's own state (app-store/app-store.ts): `doc:<name>` -> `<version>` newline the
   * document's JSON (vault, settings, address book, wallet labels, ...), `revision` -> the last one
   */
  readonly appStore: Database<string, string>;

  /** See flushWaiters. */
  private unflushed = 0;
  /** A journaled store's write batches (undefined: not journaled). */
  private readonly batch: WriteBatch | undefined;
  /** Transactions handed to lmdb-js's writer thread and not yet resolved (no batch opens meanwhile). */
  private writerTxns = 0;
  /** Set when a write batch failed to commit: every later write is refused until a restart. */
  private failure: StoreFailedError | undefined;
  /** LMDB's data file, open for checkpoints when the store is journaled (StoreOptions.journaled). */
  private dataFile: number | undefined;
  private readonly path: string;
  /** A journaled store's checkpoints (undefined: not journaled). */
  private readonly checkpoints: Checkpointer | undefined;
  /** What the open did about the last checkpoint (a journaled store, or one that was). */
  readonly restored: RestoreOutcome;
  private closed = false;
  /** Gives up the store's owner lock (a journaled store's), at close. */
  private releaseOwner: (() => void) | undefined;
  /** What the close did about compaction (undefined while open, or closed with compact 'never'). */
  compaction: CompactionResult | undefined;
  /** Whether the open rewrote a file LMDB's compacting copy had written (compaction.ts). */
  rewrite: RewriteResult | undefined;

  private constructor(
    root: RootDatabase,
    dataFile: number | undefined,
    path: string,
    opts: Pick<StoreOptions, 'checkpointMs' | 'batch' | 'onFailure'> & {
      journaled: boolean;
      restored: RestoreOutcome;
      lastSeq?: number;
    },
  ) {
    this.root = root;
    this.dataFile = dataFile;
    this.path = path;
    this.restored = opts.restored;
    if (opts.journaled && dataFile !== undefined) {
      this.checkpoints = new Checkpointer(root, dataFile, dataFilePath(path), {
        intervalMs: opts.checkpointMs,
        lastSeq: opts.lastSeq,
        // Also after a failed batch: a checkpoint of LMDB's last good commit is still right.
        transact: (fn) => this.write(fn),
      });
      this.checkpoints.start();
      this.batch = new WriteBatch(root, path, opts.batch ?? {}, (e) => {
        this.failure = new StoreFailedError(e);
        opts.onFailure?.(this.failure);
      });
    }
    const text = <K extends string | number>(name: string) =>
      root.openDB<string, K>(name, { encoding: 'string' });
    const bin = (name: string) =>
      root.openDB<Uint8Array, Uint8Array>(name, { encoding: 'binary', keyEncoding: 'binary' });
    this.meta = text<string>('meta');
    this.ledgerMeta = root.openDB<Uint8Array, string>('ledger_meta', { encoding: 'binary' });
    this.blocks = bin('blocks');
    this.hashes = bin('hashes');
    this.accounts = bin('accounts');
    this.accountIndex = bin('account_index');
    this.reps = text<string>('reps');
    this.unfinal = text<string>('unfinal');
    this.conflicts = text<string>('conflicts');
    this.staged = bin('staged');
    this.voteLocks = text<string>('vote_locks');
    this.leases = text<string>('leases');
    this.leaseIndex = text<string>('lease_index');
    this.leaseRenewals = text<string>('lease_renewals');
    this.leaseUndo = root.openDB<string, Uint8Array>('lease_undo', {
      encoding: 'string',
      keyEncoding: 'binary',
    });
    this.reputation = text<string>('reputation');
    this.certificates = text<string>('certificates');
    this.certificateIndex = text<string>('certificate_index');
    this.stateBlocks = text<number>('state_blocks');
    this.kv = text<string>('kv');
    this.vms = text<string>('vms');
    this.chatMessages = text<string>('chat_messages');
    this.chatIndex = text<string>('chat_index');
    this.chatSeq = text<string>('chat_seq');
    this.chatDelivery = text<string>('chat_delivery');
    this.leaseHolds = text<string>('lease_holds');
    this.idempotency = text<string>('idempotency');
    this.agentAudit = text<string>('agent_audit');
    this.agentCheckpoints = text<string>('agent_checkpoints');
    this.appStore = text<string>('app_store');
  }

  static open(opts: StoreOptions): Store {
    // A compaction cut short (a crash or kill during a stop) leaves its copy; the store itself was
    // not touched, as the copy replaces it only once complete and on disk.
    const leftover = compactCopyPath(opts.path);
    if (existsSync(leftover)) unlinkSync(leftover);
    // A journaled store's last stop may not have been clean: its meta pages go back to its last
    // checkpoint, onto which the ledger's journal replays. A store no longer journaled does the same
    // once, then syncs its commits itself and needs no checkpoint.
    const file = existsSync(opts.path) ? dataFilePath(opts.path) : undefined;
    const checkpoint = file === undefined ? undefined : readCheckpoint(file);
    // Only the process that owns the store puts meta pages back (owner-lock.ts).
    const release =
      opts.journaled === true || checkpoint !== undefined ? takeOwnerLock(opts.path) : undefined;
    try {
      return Store.openOwned(opts, file, checkpoint, release);
    } catch (e) {
      release?.();
      throw e;
    }
  }

  private static openOwned(
    opts: StoreOptions,
    file: string | undefined,
    checkpoint: CheckpointRecord | undefined,
    release: (() => void) | undefined,
  ): Store {
    const restored = file === undefined ? 'none' : restoreCheckpoint(file, checkpoint);
    if (file !== undefined && (opts.journaled !== true || restored === 'other-file')) removeCheckpoints(file);
    // A file LMDB's compacting copy wrote takes no write (compaction.ts): rewritten before any.
    const rewrite = file === undefined ? undefined : rewriteLmdbCopy(file, opts.mapSize ?? DEFAULT_MAP_SIZE);
    const root = open({
      path: opts.path,
      mapSize: opts.mapSize ?? DEFAULT_MAP_SIZE,
      maxDbs: 32,
      // Child transactions (an abortable unit per block) need no shared cache and no write map.
      // Without a write map a full disk is an error at commit (ENOSPC), not a SIGBUS on a page.
      cache: false,
      useWritemap: false,
      // Every write goes through an explicit transaction, so LMDB's batching of loose writes per
      // event turn adds nothing; and its batch keeps a promise of its own that, when a commit fails
      // (a full disk), rejects with no handler and would end the process.
      eventTurnBatching: false,
      ...(opts.journaled === true ? { overlappingSync: false, noSync: true } : {}),
    });
    const store = new Store(
      root,
      // Read-write: Windows flushes a file (fdatasync) only through a handle that may write it.
      opts.journaled === true ? openSync(dataFilePath(opts.path), 'r+') : undefined,
      opts.path,
      {
        journaled: opts.journaled === true,
        restored,
        checkpointMs: opts.checkpointMs,
        // A replaced file's checkpoints were removed: numbering starts again.
        lastSeq: restored === 'other-file' || rewrite?.rewritten ? undefined : checkpoint?.seq,
        batch: opts.batch,
        onFailure: opts.onFailure,
      },
    );
    store.rewrite = rewrite;
    // A store that was journaled and no longer is needs no owner once its checkpoints are gone.
    if (opts.journaled === true) store.releaseOwner = release;
    else release?.();
    return store;
  }

  /**
   * Resolves once everything committed so far is on disk and a crash cannot undo it: LMDB's flush,
   * or a journaled store's checkpoint.
   */
  async durable(): Promise<unknown> {
    if (this.checkpoints === undefined) return this.root.flushed;
    // What an open batch holds is not committed yet: it commits first.
    await this.endBatch();
    if (this.failure !== undefined) throw this.failure;
    // A checkpoint that finds no room for its record is a full disk, like a commit that finds none.
    return this.checkpoints.request().catch((e: unknown) => {
      throw isFull(e) ? new StoreFullError(e) : e;
    });
  }

  /**
   * Opens a write batch (store/write-batch.ts) for the ledger's journaled groups, if this store is
   * journaled, none is open and none can deadlock against lmdb-js's writer thread. True when one is
   * open: the next childTransaction runs inside it, now.
   */
  openBatch(): boolean {
    if (this.batch === undefined || this.failure !== undefined) return false;
    if (this.batch.open) return true;
    return this.writerTxns === 0 && this.batch.tryOpen();
  }

  /** Whether a write batch is open (a childTransaction then runs inside it at once). */
  get batchOpen(): boolean {
    return this.batch?.open === true;
  }

  /** Commits the open write batch, if any. */
  endBatch(): Promise<void> {
    return this.batch?.end() ?? Promise.resolve();
  }

  /**
   * Runs `fn` as one atomic unit inside the next batched write transaction and resolves with its
   * result once durable. If `fn` throws, its writes are rolled back and the promise rejects with
   * that error; other units of the batch are unaffected.
   */
  async transaction<T>(fn: () => T): Promise<T> {
    let counted = false;
    try {
      const result = await this.childTransaction(() => {
        this.unflushed += 1;
        counted = true;
        return fn();
      });
      await this.durable();
      return result;
    } finally {
      if (counted) this.unflushed -= 1;
    }
  }

  /**
   * Writes inside a transaction now whose callers wait for LMDB's flush (Store.transaction, and
   * ledger groups not journaled). A journaled ledger group written while any is pending is answered
   * after LMDB's flush as well: it may depend on them, and the journal would replay it without them.
   */
  get flushWaiters(): number {
    return this.unflushed;
  }

  /** Counts a write (inside its transaction callback) until `done` runs after its flush or failure. */
  awaitingFlush(): () => void {
    this.unflushed += 1;
    let once = false;
    return () => {
      if (once) return;
      once = true;
      this.unflushed -= 1;
    };
  }

  /**
   * `fn` as one unit of the next batched write transaction, resolved once committed (not yet
   * flushed); in an open write batch, resolved once applied to it (this thread's reads see it, LMDB
   * commits it with the batch). A commit that fails for want of space rejects with StoreFullError;
   * nothing of the batch was written, and later transactions commit normally once space is freed.
   * After a write batch failed to commit, rejects with StoreFailedError.
   */
  async childTransaction<T>(fn: () => T): Promise<T> {
    if (this.failure !== undefined) throw this.failure;
    return this.write(fn);
  }

  /**
   * As childTransaction, but in an open write batch `fn` runs straight in the batch's transaction,
   * without a child transaction of its own. Why: LMDB copies into a child every page it touches
   * that the batch already holds, and a group of blocks touches many (measured at ingest: 73-142 µs
   * a group). The price: a child's writes can be undone alone, these cannot, so anything `fn`
   * throws gives up the whole batch as a failed commit would (StoreFailedError; the ledger's
   * journal holds every group answered in it). Only for writers that refuse before their first
   * write and whose writes cannot fail for want of space (LMDB writes the disk at commit).
   */
  async groupTransaction<T>(fn: () => T): Promise<T> {
    if (this.failure !== undefined) throw this.failure;
    return this.write(fn, true);
  }

  private async write<T>(fn: () => T, direct = false): Promise<T> {
    // In an open batch `fn` runs now, as a child of it (lmdb-js nests it in the thread's current
    // transaction) or, direct, in it; otherwise lmdb-js's writer thread runs it in its next
    // transaction.
    const inBatch = this.batch?.open === true;
    if (inBatch) this.batch!.touch();
    else this.writerTxns += 1;
    try {
      if (inBatch && direct) return this.applyInBatch(fn);
      return await this.root.childTransaction(fn);
    } catch (e) {
      throw await commitFailure(e);
    } finally {
      if (!inBatch) this.writerTxns -= 1;
    }
  }

  private applyInBatch<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      this.batch!.abort(e);
      throw e;
    }
  }

  /**
   * A writer of `db`'s records (or, with `undefined`, removals) that resolves once each is durable,
   * as `transaction` does. Why not lmdb-js's own `put`: while a write batch is open it joins the
   * batch and resolves before the batch commits, and a record whose writer went on (a VM that now
   * exists) must be there after a crash.
   */
  durablePut(db: Database<string, string>): DurablePut {
    return async (key, value) => {
      await this.transaction(() => (value === undefined ? db.removeSync(key) : db.putSync(key, value)));
    };
  }

  getJson<T>(db: Database<string, string>, key: string): T | undefined {
    const text = db.get(key);
    return text === undefined ? undefined : (parseJson(text) as T);
  }

  /**
   * Closes the store. With `compact` 'auto' (the default) the data file is first rewritten compacted
   * when that is worth it and safe (see `compactOnClose`); 'always' skips the size checks (tests),
   * 'never' skips compaction.
   */
  async close(opts: { compact?: 'auto' | 'always' | 'never' } = {}): Promise<void> {
    if (!this.closed) {
      await this.endBatch();
      // The last checkpoint: the meta pages at the next open are the ones it recorded.
      if (this.checkpoints !== undefined) await this.checkpoints.stop();
      else await this.durable();
      this.closed = true;
      if (opts.compact === 'never') await this.root.close();
      else this.compaction = await this.compactOnClose(opts.compact === 'always');
    }
    // Closed once: a later durable() (a second stop) has nothing left to sync.
    const fd = this.dataFile;
    this.dataFile = undefined;
    if (fd !== undefined) closeSync(fd);
    this.releaseOwner?.();
  }

  /**
   * Closes LMDB, and first writes a compacted copy of the data file that then replaces it. Why: LMDB
   * takes the pages of every commit from wherever free space is, so a ledger's account pages end up
   * spread among its block and hash pages. A walk of every account (/supply, listings) then maps
   * nearly the whole file, as the kernel maps the 64-128 KB around each page read: with 100,000
   * accounts 84 MB of an 85 MB file resident. The copy (compaction.ts: each database read in key
   * order and appended to a new file) writes each database's pages together, full, and drops free
   * pages (the format is unchanged); the same walk then maps far less of it.
   *
   * Only at close, and only when safe: no other process has the store open (LMDB's reader table;
   * the copy would lose what it wrote after), the data file is at least COMPACT_MIN_BYTES and grew
   * COMPACT_GROWTH-fold since the last compaction (the copy rewrites the whole file: about 1 s for
   * 100,000 accounts here). A journaled store is compacted after its last checkpoint.
   * The copy is synced before it is renamed over the file, so a crash at any point leaves either
   * file whole; a failure leaves the store as it was. Never throws for compaction's sake.
   */
  private async compactOnClose(always: boolean): Promise<CompactionResult> {
    const file = this.path;
    const skip = async (reason: string): Promise<CompactionResult> => {
      await this.root.close();
      return { compacted: false, reason };
    };
    let bytesBefore: number;
    try {
      const st = statSync(file);
      if (!st.isFile()) return skip('directory store');
      bytesBefore = st.size;
    } catch {
      return skip('no data file');
    }
    if (!always) {
      if (bytesBefore < COMPACT_MIN_BYTES) return skip('small');
      const last = readCompactionMarker(file)?.bytes ?? 0;
      if (last > 0 && bytesBefore < last * COMPACT_GROWTH) return skip('grew little since last compacted');
    }
    this.root.readerCheck();
    const others = readerPids(this.root.readerList()).filter((pid) => pid !== process.pid);
    if (others.length > 0) return skip(`open in process ${others.join(', ')}`);
    const copy = compactCopyPath(file);
    const started = performance.now();
    // A commit during the copy (a write issued while the store closes) would land in the old file
    // only: any change to the file from here to its close keeps the old file.
    const written = (st: { mtimeMs: number; size: number }) => `${st.mtimeMs}:${st.size}`;
    const before = written(statSync(file));
    const lastTxn = () => (this.root.getStats() as { lastTxnId?: number }).lastTxnId;
    const txnBefore = lastTxn();
    let rootClosed = false;
    try {
      this.writeCopy(copy, Math.max(DEFAULT_MAP_SIZE, 2 * bytesBefore));
      if (lastTxn() !== txnBefore) throw new Error('the store was written during the copy');
      rootClosed = true;
      await this.root.close();
      if (written(statSync(file)) !== before) throw new Error('the store was written during the copy');
      const bytesAfter = installCompactCopy(copy, file);
      return { compacted: true, bytesBefore, bytesAfter, ms: performance.now() - started };
    } catch (e) {
      if (!rootClosed) await this.root.close();
      if (existsSync(copy)) unlinkSync(copy);
      return { compacted: false, reason: `failed: ${(e as Error).message}` };
    }
  }

  /** The compacted copy of the open store (a method of its own: a test writes during it). */
  private writeCopy(to: string, mapSize: number): void {
    writeCompactCopy(this.root, to, mapSize);
  }
}

/** LMDB's data file: the path itself when it names a file, else data.mdb in that directory. */
function dataFilePath(path: string): string {
  return statSync(path).isDirectory() ? join(path, 'data.mdb') : path;
}
