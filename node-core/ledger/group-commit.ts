import type { Store } from '../store/store.ts';
import type { Journaled } from './block-journal.ts';
import type { LedgerError } from './errors.ts';

/** A queued write: answered once its group is durable (or has failed). */
export interface GroupOp {
  resolve(value: never): void;
  reject(err: Error): void;
}

/** Each op's result: a value to answer it with, or the rejection of that op alone. */
export type Outcome = { value: unknown } | { error: LedgerError };

export interface GroupCommitHooks<Op extends GroupOp> {
  /** Applies a whole group inside one write transaction, in arrival order. */
  apply(ops: Op[]): Outcome[];
  /** The group's transaction committed (readers outside it now see it), in commit order; not durable yet. */
  applied?(ops: Op[]): void;
  /**
   * Inside the transaction, after `apply`: journals the group (ledger/block-journal.ts) and returns
   * its handles, or undefined when the group is not journaled; then it is answered after LMDB's flush.
   */
  journal?(ops: Op[], outcomes: Outcome[]): Journaled | undefined;
  /** After the commit is durable, before anyone is answered (reload what the commit changed). */
  committed(): void;
  /** After every op of a committed group is answered: announce what it did. */
  delivered(ops: Op[], outcomes: Outcome[]): void;
  /** The group's transaction failed as a whole: nothing of it was written. */
  failed(): void;
  /**
   * Whether `apply` refuses each of these ops before its first write and throws nothing else but
   * for a defect: then an open write batch takes the group without a child transaction of its own
   * (Store.groupTransaction), and a defect gives up the whole batch instead of this group alone.
   */
  direct?(ops: Op[]): boolean;
}

/**
 * Group commit: every write that arrives before LMDB starts its next batch (or, in an open write
 * batch, before this event-loop turn ends) is applied in ONE transaction callback, in arrival order:
 * one hand-off to the writer thread, one commit and flush for the whole group. An op is answered only
 * once its group is durable (LMDB flushed it, or it is journaled: committed, or applied to the open
 * write batch, and synced in the journal); an error thrown by `apply` (anything but an op's own
 * LedgerError) fails the whole group, never half of it (a direct group: the whole write batch).
 */
export class GroupCommit<Op extends GroupOp> {
  private readonly store: Store;
  private readonly hooks: GroupCommitHooks<Op>;
  private queue: Op[] = [];
  private scheduled = false;
  /** Groups committed or committing whose answers are not delivered yet (awaited by idle()). */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(store: Store, hooks: GroupCommitHooks<Op>) {
    this.store = store;
    this.hooks = hooks;
  }

  enqueue(op: Op): void {
    this.queue.push(op);
    if (this.scheduled) return;
    this.scheduled = true;
    // In a write batch (store/write-batch.ts) a transaction runs as soon as it is asked for, so the
    // group waits for the end of this event-loop turn: the turn's other requests join it. A group
    // that waits for LMDB's flush opens none (it would only end it again).
    if (this.store.flushWaiters === 0 && this.store.openBatch()) setImmediate(() => this.run());
    else this.run();
  }

  private run(): void {
    let taken: Op[] = [];
    let journaled: Journaled | undefined;
    let flushDone: (() => void) | undefined;
    // In a write batch the callback runs at once: the ops asked about are the ones it takes.
    const transact = this.hooks.direct?.(this.queue) === true ? 'groupTransaction' : 'childTransaction';
    const committed = this.store[transact](() => {
      this.scheduled = false;
      taken = this.queue;
      this.queue = [];
      const outcomes = this.hooks.apply(taken);
      // Another write waiting for LMDB's flush may be what this group built on: then this one too.
      if (this.store.flushWaiters === 0) journaled = this.hooks.journal?.(taken, outcomes);
      if (journaled === undefined) flushDone = this.store.awaitingFlush();
      return outcomes;
    });
    const done: Promise<void> = committed.then(
      async (outcomes) => {
        this.hooks.applied?.(taken);
        try {
          if (journaled !== undefined) {
            journaled.committed();
            // A journal that failed (a full disk, an I/O error) takes no more groups; those it held
            // are made durable by LMDB's flush instead, and answered as any other.
            await journaled.durable.catch(() => this.store.durable());
          } else await this.store.durable();
          this.hooks.committed();
        } catch (err) {
          for (const op of taken) op.reject(err as Error);
          return;
        } finally {
          flushDone?.();
        }
        taken.forEach((op, i) => {
          const o = outcomes[i]!;
          if ('error' in o) op.reject(o.error);
          else op.resolve(o.value as never);
        });
        this.hooks.delivered(taken, outcomes);
      },
      (err: Error) => {
        flushDone?.();
        journaled?.abort();
        this.hooks.failed();
        // The transaction never ran its callback: the ops are still queued.
        if (taken.length === 0) {
          this.scheduled = false;
          taken = this.queue;
          this.queue = [];
        }
        for (const op of taken) op.reject(err);
      },
    );
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  /** Resolves once every write queued so far is committed and answered (before the store closes). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.queue.length > 0) {
      if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      else await new Promise((r) => setImmediate(r));
    }
  }
}
