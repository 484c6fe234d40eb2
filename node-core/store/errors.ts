/**
 * Store failures the rest of the node answers on their own terms. Kept apart from store.ts so that
 * the API can recognise them without loading LMDB.
 */

/** LMDB's code for a full map (MDB_MAP_FULL); the file system's is ENOSPC (28 on Linux and macOS). */
const MDB_MAP_FULL = -30792;
const ENOSPC = 28;

/**
 * A write the store cannot take now, but may later (space freed, the node restarted): callers answer
 * it as a transient failure (HTTP 503, retryable), whichever of the two below it is.
 */
export abstract class StoreUnavailableError extends Error {
  abstract readonly code: string;
}

/**
 * A write the store could not commit because the disk (or the store's map) is full. Nothing of the
 * transaction was written; the same write can succeed once space is freed.
 */
export class StoreFullError extends StoreUnavailableError {
  readonly code = 'disk_full';
  constructor(cause: unknown) {
    super("the node's disk is full; retry later", { cause });
    this.name = 'StoreFullError';
  }
}

/** Whether an error from LMDB or the file system means that no space is left. */
export function isFull(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === ENOSPC || code === 'ENOSPC' || code === MDB_MAP_FULL || code === 'MDB_MAP_FULL';
}

/**
 * A write refused because a write batch (store/write-batch.ts) failed to commit: LMDB lacks groups
 * that were answered. They are in the ledger's journal, which the next start replays; until then the
 * node takes no write, so nothing builds on what LMDB does not hold.
 */
export class StoreFailedError extends StoreUnavailableError {
  readonly code = 'store_failed';
  constructor(cause: unknown) {
    super(
      `the node's store could not commit (${(cause as Error | undefined)?.message ?? String(cause)}); ` +
        'restart the node: nothing acknowledged is lost',
      { cause },
    );
    this.name = 'StoreFailedError';
  }
}
