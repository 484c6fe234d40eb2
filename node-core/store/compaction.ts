import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { open } from './lmdb-package.ts';
import { removeCheckpoints } from './checkpoint.ts';

/**
 * A compacted copy of an LMDB file, written through LMDB's ordinary write path: every named
 * database read in key order and appended (MDB_APPEND) to a new file, so each database's pages are
 * full and together, and the file holds no free page.
 *
 * Not LMDB's own compacting copy (lmdb-js `backup(path, true)`, mdb_env_copy2 with MDB_CP_COMPACT),
 * which the store used until 2026-11-30: with lmdb-js 3.5.6, a file it wrote of more than about
 * 40 MB aborts the process in the first write transactions after it is opened again (mdb_page_alloc:
 * "Assertion 'key.mv_size > 0' failed", or a segmentation fault; lmdb-js's own allocator). A node
 * stopped with such a store could not write again. Reads of such a file are sound, so this copy can
 * also rewrite one (Store.open does, once: `rewriteLmdbCopy`).
 */

/** Entries written per write transaction of the copy. */
const CHUNK = 20_000;
const APPEND = { append: true } as const;

export interface CompactCopyResult {
  databases: number;
  entries: number;
}

/**
 * Writes every named database of `source` into a new LMDB file at `to` (replacing any there) and
 * syncs it. Throws if the main database holds anything but database names, or if a database's copy
 * does not hold as many entries as LMDB counts in the original; the caller keeps its file then.
 */
export function writeCompactCopy(source: RootDatabase, to: string, mapSize: number): CompactCopyResult {
  const lock = `${to}-lock`;
  for (const p of [to, lock]) if (existsSync(p)) unlinkSync(p);
  const names = [...source.getKeys()];
  const copy = open({
    path: to,
    maxDbs: 32,
    mapSize,
    cache: false,
    useWritemap: false,
    eventTurnBatching: false,
    overlappingSync: false,
    // Synced once, whole, below: a copy cut short is never used (Store.open removes it).
    noSync: true,
  });
  let entries = 0;
  try {
    for (const name of names) {
      if (typeof name !== 'string') throw new Error('the main database holds a key that names no database');
      const from = source.openDB<Uint8Array, Uint8Array>(name, { encoding: 'binary', keyEncoding: 'binary' });
      const into = copy.openDB<Uint8Array, Uint8Array>(name, { encoding: 'binary', keyEncoding: 'binary' });
      const expected = (from.getStats() as { entryCount: number }).entryCount;
      const it = from.getRange()[Symbol.iterator]();
      let copied = 0;
      for (let done = false; !done;)
        copy.transactionSync(() => {
          for (let i = 0; i < CHUNK; i++) {
            const r = it.next();
            if (r.done) {
              done = true;
              return;
            }
            into.putSync(r.value.key, r.value.value, APPEND);
            copied++;
          }
        });
      if (copied !== expected) throw new Error(`database ${name}: ${copied} entries copied of ${expected}`);
      entries += copied;
    }
  } finally {
    void copy.close();
  }
  // Only synchronous transactions were written, so the environment closes at once; a copy still
  // open could not be renamed over the store's file on every platform.
  if ((copy as { status?: string }).status !== 'closed') throw new Error('the copy did not close');
  if (existsSync(lock)) unlinkSync(lock);
  const fd = openSync(to, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { databases: names.length, entries };
}

/** Where the compacted copy of the data file at `path` is written before it replaces the file. */
export function compactCopyPath(path: string): string {
  return `${path}.compact-tmp`;
}

/**
 * The marker beside a compacted data file: its size right after, and how it was written. A bare size
 * is what the store wrote after LMDB's own compacting copy; this copy's marker says `copy`.
 */
const markerPath = (file: string) => `${file}.compacted`;
const COPY_TAG = 'copy';

export interface CompactionMarker {
  bytes: number;
  /** Written by LMDB's compacting copy (see above): the file is rewritten once at open. */
  byLmdbCopy: boolean;
}

export function readCompactionMarker(file: string): CompactionMarker | undefined {
  if (!existsSync(markerPath(file))) return undefined;
  const [bytes, tag] = readFileSync(markerPath(file), 'utf8').trim().split(/\s+/);
  return { bytes: Number(bytes), byLmdbCopy: tag !== COPY_TAG };
}

/** Best effort: without it the next close compacts again once the file is large enough. */
function writeCompactionMarker(file: string, bytes: number): void {
  try {
    writeFileSync(markerPath(file), `${bytes} ${COPY_TAG}\n`);
  } catch {
    /* the file is compacted either way */
  }
}

/** fsyncs a directory, so a rename in it is on disk (not supported on every platform: then skipped). */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    /* Windows cannot open a directory for syncing; its rename is durable on its own */
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The process ids in LMDB's reader table as lmdb-js's readerList() prints it (a header, then rows). */
export function readerPids(list: string): number[] {
  return list
    .split('\n')
    .slice(1)
    .map((row) => Number(row.trim().split(/\s+/)[0]))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** What `rewriteLmdbCopy` did. */
export type RewriteResult =
  | { rewritten: true; bytesBefore: number; bytesAfter: number; entries: number; ms: number }
  | { rewritten: false; reason: string };

/**
 * Replaces a data file that LMDB's compacting copy wrote (its marker says so) by this module's copy
 * of it, before the store opens it for writing (see above). Runs once: the new marker says `copy`.
 * A failure leaves the file as it was. The caller holds the store's owner lock, and any checkpoint
 * has been put back: the file is whole. Its checkpoints describe the old file and are removed.
 */
export function rewriteLmdbCopy(file: string, mapSize: number): RewriteResult | undefined {
  if (!readCompactionMarker(file)?.byLmdbCopy) return undefined;
  const started = performance.now();
  const bytesBefore = statSync(file).size;
  const copy = compactCopyPath(file);
  let entries: number;
  try {
    const source = open({ path: file, readOnly: true, maxDbs: 32, cache: false });
    try {
      // Another process with the file open would keep writing to the old one.
      source.readerCheck();
      const others = readerPids(source.readerList()).filter((pid) => pid !== process.pid);
      if (others.length > 0) throw new Error(`open in process ${others.join(', ')}`);
      entries = writeCompactCopy(source, copy, Math.max(mapSize, 2 * bytesBefore)).entries;
    } finally {
      void source.close();
    }
    const bytesAfter = installCompactCopy(copy, file);
    return { rewritten: true, bytesBefore, bytesAfter, entries, ms: performance.now() - started };
  } catch (e) {
    if (existsSync(copy)) unlinkSync(copy);
    return { rewritten: false, reason: (e as Error).message };
  }
}

/**
 * Puts a synced compacted copy in the data file's place (durably), drops the checkpoints that
 * described the old file (its inode) and writes the marker; returns the new file's size. Both
 * compaction at close and the rewrite at open end this way.
 */
export function installCompactCopy(copy: string, file: string): number {
  renameSync(copy, file);
  syncDir(dirname(file));
  removeCheckpoints(file);
  const bytes = statSync(file).size;
  writeCompactionMarker(file, bytes);
  return bytes;
}
