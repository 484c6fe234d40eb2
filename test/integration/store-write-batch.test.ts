import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { metaTxnId, readCheckpoint, restoreCheckpoint } from '../../node-core/store/checkpoint.ts';
import { StoreFailedError } from '../../node-core/store/errors.ts';
import { Store } from '../../node-core/store/store.ts';
import type { WriteBatchOptions } from '../../node-core/store/write-batch.ts';
import { tempDir, waitFor } from '../helpers/node.ts';

/**
 * A journaled store's write batches (store/write-batch.ts) on real LMDB files: writes inside an open
 * batch are seen by this thread's reads at once and reach LMDB's data file in one commit, when the
 * batch has been idle or open long enough, when something waits for a checkpoint, or at close.
 */

/** The largest commit id among the data file's meta pages (what a commit changes on disk). */
function fileTxnId(dataFile: string, page = 4096): bigint {
  const buf = new Uint8Array(2 * page);
  const fd = openSync(dataFile, 'r');
  try {
    readSync(fd, buf, 0, buf.length, 0);
  } finally {
    closeSync(fd);
  }
  return metaTxnId(buf, page);
}

describe('journaled store write batches', () => {
  let dir: string;
  let path: string;
  let store: Store | undefined;

  beforeEach(() => {
    dir = tempDir('store-batch-');
    path = join(dir, 'ledger.lmdb');
  });
  afterEach(async () => {
    await store?.close({ compact: 'never' });
    store = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const open = (batch: WriteBatchOptions, journaled = true) =>
    (store = Store.open({ path, journaled, checkpointMs: 60_000, batch }));
  // A new store is one file at its path (lmdb-js), with its lock file beside it.
  const dataFile = () => path;

  it('runs writes inside the open batch at once, visible to reads, committed in one go when it ends', async () => {
    const s = open({ maxMs: 60_000, idleMs: 60_000 });
    await s.childTransaction(() => s.meta.putSync('before', '1'));
    const committedBefore = fileTxnId(dataFile());
    expect(s.openBatch()).toBe(true);
    expect(s.batchOpen).toBe(true);
    for (let i = 0; i < 50; i++) await s.childTransaction(() => s.meta.putSync(`k${i}`, String(i)));
    // Seen by this thread's reads, not yet in the data file.
    expect(s.meta.get('k49')).toBe('49');
    expect(fileTxnId(dataFile())).toBe(committedBefore);
    // A write that throws inside the batch leaves nothing and the batch goes on.
    await expect(
      s.childTransaction(() => {
        s.meta.putSync('aborted', 'x');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(s.meta.get('aborted')).toBeUndefined();
    await s.endBatch();
    expect(s.batchOpen).toBe(false);
    // One commit for the fifty writes.
    expect(fileTxnId(dataFile())).toBe(committedBefore + 1n);
    expect(s.meta.get('k0')).toBe('0');
  });

  it('groupTransaction writes straight into the open batch; one that throws gives up the batch, reported once', async () => {
    const failures: unknown[] = [];
    const s = (store = Store.open({
      path,
      journaled: true,
      checkpointMs: 60_000,
      batch: { maxMs: 60_000, idleMs: 60_000 },
      onFailure: (e) => failures.push(e),
    }));
    await s.childTransaction(() => s.meta.putSync('before', '1'));
    const committedBefore = fileTxnId(dataFile());
    expect(s.openBatch()).toBe(true);
    const child = vi.spyOn(s.root, 'childTransaction');
    await s.groupTransaction(() => s.meta.putSync('direct', '1'));
    expect(child).not.toHaveBeenCalled();
    child.mockRestore();
    expect(s.meta.get('direct')).toBe('1');

    const defect = () => {
      s.meta.putSync('half', 'x');
      throw new Error('a defect');
    };
    await expect(s.groupTransaction(defect)).rejects.toThrow('a defect');
    expect(s.batchOpen).toBe(false);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(StoreFailedError);
    expect((failures[0] as Error).message).toMatch(/could not commit \(a defect\)/);
    // Nothing of the batch reached LMDB, not even what was written before the defect.
    await new Promise((r) => setImmediate(r)); // lmdb-js aborts it a microtask later
    expect(s.meta.get('direct')).toBeUndefined();
    expect(s.meta.get('half')).toBeUndefined();
    expect(s.meta.get('before')).toBe('1');
    expect(fileTxnId(dataFile())).toBe(committedBefore);
    // Every later write is refused, whichever kind; the failure is not reported again.
    await expect(s.childTransaction(() => s.meta.putSync('after', '1'))).rejects.toBeInstanceOf(
      StoreFailedError,
    );
    await expect(s.groupTransaction(() => s.meta.putSync('after', '1'))).rejects.toBeInstanceOf(
      StoreFailedError,
    );
    expect(s.openBatch()).toBe(false);
    expect(failures).toHaveLength(1);
  });

  it('groupTransaction without an open batch is a transaction of its own: one that throws leaves nothing, and the store goes on', async () => {
    const s = open({ maxMs: 0 });
    await expect(
      s.groupTransaction(() => {
        s.meta.putSync('x', '1');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(s.meta.get('x')).toBeUndefined();
    await s.groupTransaction(() => s.meta.putSync('y', '1'));
    expect(s.meta.get('y')).toBe('1');
  });

  it('commits once idle for idleMs, and at maxMs however busy', async () => {
    const s = open({ maxMs: 300, idleMs: 40 });
    expect(s.openBatch()).toBe(true);
    await s.childTransaction(() => s.meta.putSync('a', '1'));
    await waitFor(() => !s.batchOpen, 5_000, 'the idle batch to commit');

    expect(s.openBatch()).toBe(true);
    const opened = performance.now();
    // A write every 10 ms keeps it from being idle: it ends at maxMs.
    while (s.batchOpen && performance.now() - opened < 5_000) {
      await s.childTransaction(() => s.meta.putSync('busy', String(performance.now())));
      await new Promise((r) => setTimeout(r, 10));
    }
    const lasted = performance.now() - opened;
    expect(lasted).toBeGreaterThanOrEqual(290);
    expect(lasted).toBeLessThan(2_000);
  });

  it('durable() commits the open batch first, and the checkpoint it waits for covers it', async () => {
    const s = open({ maxMs: 60_000, idleMs: 60_000 });
    expect(s.openBatch()).toBe(true);
    await s.childTransaction(() => s.meta.putSync('kept', 'yes'));
    await s.durable();
    expect(s.batchOpen).toBe(false);
    const ckpt = readCheckpoint(dataFile());
    expect(ckpt).toBeDefined();
    expect(metaTxnId(ckpt!.metas, ckpt!.pageSize)).toBe(fileTxnId(dataFile()));
    // A power cut now: the store opens on that checkpoint, with the write.
    await s.close({ compact: 'never' });
    store = undefined;
    expect(restoreCheckpoint(dataFile(), readCheckpoint(dataFile()))).toBe('current');
    const again = open({});
    expect(again.meta.get('kept')).toBe('yes');
  });

  it('commits the open batch at close', async () => {
    const s = open({ maxMs: 60_000, idleMs: 60_000 });
    expect(s.openBatch()).toBe(true);
    await s.childTransaction(() => s.meta.putSync('at-close', '1'));
    await s.close({ compact: 'never' });
    store = undefined;
    expect(open({}).meta.get('at-close')).toBe('1');
  });

  it('opens none on a disk short of space, none with maxMs 0, none on a store that is not journaled', async () => {
    const short = open({ minFreeBytes: Number.MAX_SAFE_INTEGER });
    expect(short.openBatch()).toBe(false);
    await short.childTransaction(() => short.meta.putSync('x', '1'));
    expect(short.batchOpen).toBe(false);
    await short.close({ compact: 'never' });

    const off = open({ maxMs: 0 });
    expect(off.openBatch()).toBe(false);
    await off.close({ compact: 'never' });

    const plain = open({}, false);
    expect(plain.openBatch()).toBe(false);
  });

  it('opens none while a transaction of the writer thread is in flight (it would wait for this thread)', async () => {
    const s = open({ maxMs: 60_000, idleMs: 60_000 });
    const inFlight = s.childTransaction(() => s.meta.putSync('writer', '1'));
    expect(s.openBatch()).toBe(false);
    await inFlight;
    expect(s.openBatch()).toBe(true);
    await s.endBatch();
  });
});
