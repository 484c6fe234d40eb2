import { closeSync, fdatasync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, open, type RootDatabase } from 'lmdb';
import { parseJson } from '../protocol/json.ts';
import { isFull, StoreFullError } from './errors.ts';

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
   * LMDB then syncs each commit's data pages but not its meta page, and without lmdb-js's overlapping
   * sync (a commit waited ~0.9 ms for the previous one's syncs, ~0.5 ms this way). A crash keeps the
   * store consistent and may undo the last commit, which the journal replays; every other write
   * waits for `durable()`, a full sync.
   */
  journaled?: boolean;
}

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
  /** lease-family block hash (32 bytes) -> what undoing that block puts back (JSON) */
  readonly leaseUndo: Database<string, Uint8Array>;
  /** `address:block hash` -> what that lease-family block added to the account's reputation (JSON) */
  readonly reputation: Database<string, string>;
  /** performance certificate hash (64 hex) -> certificate JSON (protocol.md 8.6) */
  readonly certificates: Database<string, string>;
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
  /** LMDB's data file, open for `durable()` when the store is journaled (StoreOptions.journaled). */
  private dataFile: number | undefined;

  private constructor(root: RootDatabase, dataFile: number | undefined) {
    this.root = root;
    this.dataFile = dataFile;
    const text = <K extends string | number>(name: string) =>
      root.openDB<string, K>(name, { encoding: 'string' });
    const bin = (name: string) =>
      root.openDB<Uint8Array, Uint8Array>(name, { encoding: 'binary', keyEncoding: 'binary' });
    this.meta = text<string>('meta');
    this.ledgerMeta = root.openDB<Uint8Array, string>('ledger_meta', { encoding: 'binary' });
    this.blocks = bin('blocks');
    this.hashes = bin('hashes');
    this.accounts = bin('accounts');
    this.reps = text<string>('reps');
    this.unfinal = text<string>('unfinal');
    this.conflicts = text<string>('conflicts');
    this.staged = bin('staged');
    this.voteLocks = text<string>('vote_locks');
    this.leases = text<string>('leases');
    this.leaseUndo = root.openDB<string, Uint8Array>('lease_undo', {
      encoding: 'string',
      keyEncoding: 'binary',
    });
    this.reputation = text<string>('reputation');
    this.certificates = text<string>('certificates');
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
    const root = open({
      path: opts.path,
      mapSize: opts.mapSize ?? 256 * 1024 * 1024,
      maxDbs: 32,
      // Child transactions (an abortable unit per block) need no shared cache and no write map.
      // Without a write map a full disk is an error at commit (ENOSPC), not a SIGBUS on a page.
      cache: false,
      useWritemap: false,
      // Every write goes through an explicit transaction, so LMDB's batching of loose writes per
      // event turn adds nothing; and its batch keeps a promise of its own that, when a commit fails
      // (a full disk), rejects with no handler and would end the process.
      eventTurnBatching: false,
      ...(opts.journaled === true ? { overlappingSync: false, noMetaSync: true } : {}),
    });
    return new Store(root, opts.journaled === true ? openSync(dataFilePath(opts.path), 'r') : undefined);
  }

  /** Resolves once everything committed so far is on disk (meta page included). */
  durable(): Promise<unknown> {
    if (this.dataFile === undefined) return this.root.flushed;
    // The commits so far have written their pages (meta page included) to the file: one fdatasync
    // of it, through a descriptor of our own, puts them all on disk.
    const fd = this.dataFile;
    return new Promise<void>((resolve, reject) => {
      fdatasync(fd, (err) => (err ? reject(err) : resolve()));
    });
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
   * flushed). A commit that fails for want of space rejects with StoreFullError; nothing of the
   * batch was written, and later transactions commit normally once space is freed.
   */
  async childTransaction<T>(fn: () => T): Promise<T> {
    try {
      return await this.root.childTransaction(fn);
    } catch (e) {
      throw await commitFailure(e);
    }
  }

  getJson<T>(db: Database<string, string>, key: string): T | undefined {
    const text = db.get(key);
    return text === undefined ? undefined : (parseJson(text) as T);
  }

  async close(): Promise<void> {
    await this.durable();
    await this.root.close();
    // Closed once: a later durable() (a second stop) has nothing left to sync.
    const fd = this.dataFile;
    this.dataFile = undefined;
    if (fd !== undefined) closeSync(fd);
  }
}

/** LMDB's data file: the path itself when it names a file, else data.mdb in that directory. */
function dataFilePath(path: string): string {
  return statSync(path).isDirectory() ? join(path, 'data.mdb') : path;
}
