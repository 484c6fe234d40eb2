import { statfsSync } from 'node:fs';
import type { RootDatabase } from 'lmdb';

/**
 * A long write transaction on the node's thread (issue #18): the ledger's journaled groups are
 * applied into it as child transactions and answered once their journal frame is synced, and LMDB
 * commits the whole batch when it is `maxMs` old or `idleMs` passed without a write.
 *
 * Why: a store whose checkpoints hold a snapshot (store/checkpoint.ts) reuses no page freed after it,
 * so every page a commit copies is a new page the disk must take. Committing each group of ~15
 * blocks wrote about 7 pages a block (19-32 KB); one commit for a batch of a thousand groups copies
 * each hot page once, 2.6-7.4 KB a block, and the journal's syncs stop waiting behind that write-back.
 *
 * While the batch is open, lmdb-js runs every read and write of this thread inside it: readers see
 * what the groups applied (as they saw each commit before), and a write issued by any other part of
 * the node joins it. The commit runs on this thread (a few milliseconds for a batch's pages), so no
 * reader ever sees the store without a batch whose groups were answered.
 *
 * Nothing acknowledged depends on the batch's commit: each answered group is in the journal, which a
 * start replays past the group LMDB records (ledger/block-journal.ts). A commit that fails anyway (the
 * disk filled during the batch) leaves LMDB without groups already answered; the store then refuses
 * every write until a restart replays them (StoreFailedError). A batch opens only while the disk has
 * `minFreeBytes` free, so a filling disk goes back to a commit per group, whose failure loses nothing.
 * A group written straight into the batch (Store.groupTransaction) that throws gives up the batch
 * (`abort`), with the same outcome as a failed commit: it cannot be undone alone.
 */
export interface WriteBatchOptions {
  /** Longest a batch stays open (default 500 ms). */
  maxMs?: number;
  /** A batch commits once no write joined it for this long (default 20 ms). */
  idleMs?: number;
  /** No batch opens while the store's file system has less free space than this (default 64 MiB). */
  minFreeBytes?: number;
}

/** An open batch: its transaction ends (commits) or fails (aborts) when its callback's promise settles. */
interface Batch {
  end(): void;
  fail(e: unknown): void;
  committed: Promise<unknown>;
  openedAt: number;
  /** Given up by `abort`: its failure was reported then. */
  aborted: boolean;
}

export class WriteBatch {
  private readonly root: RootDatabase;
  private readonly dir: string;
  private readonly maxMs: number;
  private readonly idleMs: number;
  private readonly minFreeBytes: number;
  private readonly onFailure: (e: unknown) => void;
  private current: Batch | undefined;
  private lastWriteAt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(root: RootDatabase, dir: string, opts: WriteBatchOptions, onFailure: (e: unknown) => void) {
    this.root = root;
    this.dir = dir;
    this.maxMs = opts.maxMs ?? 500;
    this.idleMs = opts.idleMs ?? 20;
    this.minFreeBytes = opts.minFreeBytes ?? 64 * 1024 * 1024;
    this.onFailure = onFailure;
  }

  get open(): boolean {
    return this.current !== undefined;
  }

  /**
   * Opens a batch unless the disk is short of space. The caller makes sure that no transaction of
   * lmdb-js's writer thread is in flight: its callbacks would wait for this thread, which would wait
   * for LMDB's write lock.
   */
  tryOpen(): boolean {
    if (this.current !== undefined) return true;
    if (this.maxMs <= 0 || !this.hasRoom()) return false;
    let end!: () => void;
    let fail!: (e: unknown) => void;
    const ended = new Promise<void>((resolve, reject) => {
      end = resolve;
      fail = reject;
    });
    let open: unknown;
    try {
      // A synchronous transaction whose callback returns a promise stays open until it settles, and
      // then commits on this thread (lmdb-js); meanwhile it is the thread's current transaction.
      open = this.root.transactionSync(() => ended);
    } catch {
      return false; // LMDB could not begin one: commit per group
    }
    const now = performance.now();
    const batch: Batch = { end, fail, committed: Promise.resolve(), openedAt: now, aborted: false };
    batch.committed = Promise.resolve(open).then(
      () => undefined,
      (e: unknown) => (batch.aborted ? undefined : this.onFailure(e)),
    );
    this.current = batch;
    this.lastWriteAt = now;
    this.arm(this.idleMs);
    return true;
  }

  /** A write joined the open batch: it stays open for another idleMs. */
  touch(): void {
    this.lastWriteAt = performance.now();
  }

  /** Commits the open batch, if any; resolves once it is committed (or failed). */
  async end(): Promise<void> {
    const b = this.take();
    if (b === undefined) return;
    b.end();
    await b.committed;
  }

  /**
   * Gives up the open batch: LMDB aborts its transaction (nothing of it reaches the data file), and
   * the failure is reported now, so that no write joins it meanwhile.
   */
  abort(e: unknown): void {
    const b = this.take();
    if (b === undefined) return;
    b.aborted = true;
    // lmdb-js aborts a transaction whose callback's promise rejects (a microtask from now).
    b.fail(e);
    this.onFailure(e);
  }

  /** The open batch, no longer open to writes (its timer stopped). */
  private take(): Batch | undefined {
    const b = this.current;
    this.current = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    return b;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), Math.max(1, ms));
  }

  private check(): void {
    const b = this.current;
    if (b === undefined) return;
    const now = performance.now();
    const idleLeft = this.lastWriteAt + this.idleMs - now;
    const ageLeft = b.openedAt + this.maxMs - now;
    if (idleLeft <= 0 || ageLeft <= 0) void this.end();
    else this.arm(Math.min(idleLeft, ageLeft));
  }

  private hasRoom(): boolean {
    if (this.minFreeBytes <= 0) return true;
    try {
      const s = statfsSync(this.dir);
      return s.bavail * s.bsize >= this.minFreeBytes;
    } catch {
      return false; // unknown: commit per group, as without batches
    }
  }
}
