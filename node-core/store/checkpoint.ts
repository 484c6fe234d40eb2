import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import type { RootDatabase } from 'lmdb';

/**
 * Checkpoints of a store whose LMDB commits are not synced (a journaled store, issue #18). LMDB then
 * writes each commit's pages and meta page to the page cache only: a kill -9 loses nothing (the
 * kernel still writes them), but a power cut could leave a meta page on disk whose pages are not,
 * a corrupt store. The ledger's acknowledged blocks are in its write-ahead journal, synced before
 * each answer; what the journal needs of LMDB is a consistent snapshot to replay onto. A checkpoint
 * makes one:
 *
 * 1. A read transaction is pinned first, on a snapshot W: LMDB reuses no page freed after W while
 *    it is open, so every snapshot from W on stays whole on disk.
 * 2. Inside a write transaction (no commit can run meanwhile), both meta pages are read: they
 *    describe the last commit X (X >= W) and the one before.
 * 3. The data file is fdatasync-ed: X's pages and meta pages are on disk.
 * 4. The meta pages are written, with a CRC, to the next of two slot files, which is synced.
 * 5. The previous checkpoint's pin is released: its snapshot is no longer needed.
 *
 * At open (`restoreCheckpoint`), meta pages in the data file that differ from the newest valid
 * checkpoint's are put back to it: LMDB opens on X, whose pages the pin kept, and the journal
 * replays the groups after the one X recorded. After a clean close the two are the same. Every
 * other write (not journaled) waits for a checkpoint that covers it (`Store.durable`).
 */

/** The bytes of an LMDB meta page this module reads (lmdb-js's LMDB: a 24-byte page header). */
const META_MAGIC_AT = 24;
const META_TXNID_AT = 152;
const META_MAGIC = 0xbeefc0de;

const SLOT_MAGIC = 0x4c4e434b; // 'LNCK'
/** magic u32, version u32, sequence u64, data file inode u64, its birth time ns u64, page size u32, reserved u32 */
const SLOT_HEADER = 40;
const SLOT_VERSION = 1;

export interface CheckpointRecord {
  /** Increases with every checkpoint; the slot with the larger one is the newer. */
  seq: number;
  /**
   * The data file's identity, its inode and birth time: a record of another file (replaced by a
   * copy, compacted) is ignored. The inode alone is not enough: a file deleted and created again
   * often gets the same one.
   */
  fileId: FileId;
  pageSize: number;
  /** Meta pages 0 and 1 as the checkpoint found them. */
  metas: Uint8Array;
}

export interface FileId {
  inode: bigint;
  birthNs: bigint;
}

export function fileIdOf(path: string): FileId {
  const st = statSync(path, { bigint: true });
  return { inode: st.ino, birthNs: st.birthtimeNs };
}

/** What `restoreCheckpoint` did. */
export type RestoreOutcome = 'none' | 'current' | 'restored' | 'other-file';

/** The two slot files of a data file's checkpoints. */
export function checkpointPaths(dataFile: string): [string, string] {
  return [`${dataFile}-ckpt-0`, `${dataFile}-ckpt-1`];
}

/** The largest commit id among meta pages (0 where a page is not an LMDB meta page). */
export function metaTxnId(metas: Uint8Array, pageSize: number): bigint {
  const view = new DataView(metas.buffer, metas.byteOffset, metas.byteLength);
  let max = 0n;
  for (let p = 0; p < 2; p++) {
    const at = p * pageSize;
    if (view.getUint32(at + META_MAGIC_AT, true) !== META_MAGIC) continue;
    const id = view.getBigUint64(at + META_TXNID_AT, true);
    if (id > max) max = id;
  }
  return max;
}

export function encodeCheckpoint(r: CheckpointRecord): Uint8Array {
  const out = new Uint8Array(SLOT_HEADER + r.metas.length + 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, SLOT_MAGIC, true);
  view.setUint32(4, SLOT_VERSION, true);
  view.setBigUint64(8, BigInt(r.seq), true);
  view.setBigUint64(16, r.fileId.inode, true);
  view.setBigUint64(24, r.fileId.birthNs, true);
  view.setUint32(32, r.pageSize, true);
  out.set(r.metas, SLOT_HEADER);
  view.setUint32(out.length - 4, crc32(out.subarray(0, out.length - 4)), true);
  return out;
}

/** A slot's record, or undefined when it is missing, torn or not a checkpoint. */
export function decodeCheckpoint(bytes: Uint8Array): CheckpointRecord | undefined {
  if (bytes.length < SLOT_HEADER + 4) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== SLOT_MAGIC || view.getUint32(4, true) !== SLOT_VERSION) return undefined;
  const pageSize = view.getUint32(32, true);
  if (pageSize < 512 || bytes.length !== SLOT_HEADER + 2 * pageSize + 4) return undefined;
  if (view.getUint32(bytes.length - 4, true) !== crc32(bytes.subarray(0, bytes.length - 4))) return undefined;
  const metas = bytes.slice(SLOT_HEADER, SLOT_HEADER + 2 * pageSize);
  if (metaTxnId(metas, pageSize) === 0n) return undefined;
  return {
    seq: Number(view.getBigUint64(8, true)),
    fileId: { inode: view.getBigUint64(16, true), birthNs: view.getBigUint64(24, true) },
    pageSize,
    metas,
  };
}

/** The newest valid checkpoint of a data file, if any. */
export function readCheckpoint(dataFile: string): CheckpointRecord | undefined {
  let best: CheckpointRecord | undefined;
  for (const path of checkpointPaths(dataFile)) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(path);
    } catch {
      continue; // no such slot (yet)
    }
    const r = decodeCheckpoint(bytes);
    if (r !== undefined && (best === undefined || r.seq > best.seq)) best = r;
  }
  return best;
}

export function removeCheckpoints(dataFile: string): void {
  for (const path of checkpointPaths(dataFile)) rmSync(path, { force: true });
}

function readMetas(fd: number, pageSize: number): Uint8Array {
  const out = new Uint8Array(2 * pageSize);
  let at = 0;
  while (at < out.length) {
    const n = readSync(fd, out, at, out.length - at, at);
    if (n === 0) throw new Error('the data file is shorter than its meta pages');
    at += n;
  }
  return out;
}

/**
 * Before LMDB opens the file: puts back the meta pages of `r`, the data file's newest checkpoint
 * (readCheckpoint), where the file's differ (a stop that was not clean). 'other-file' when the
 * checkpoint was taken of another file (the data file was replaced): it is left alone, and the
 * caller removes the stale checkpoint.
 */
export function restoreCheckpoint(dataFile: string, r: CheckpointRecord | undefined): RestoreOutcome {
  if (r === undefined || !existsSync(dataFile)) return 'none';
  const id = fileIdOf(dataFile);
  if (id.inode !== r.fileId.inode || id.birthNs !== r.fileId.birthNs) return 'other-file';
  const fd = openSync(dataFile, 'r+');
  try {
    const now = readMetas(fd, r.pageSize);
    if (Buffer.compare(now, r.metas) === 0) return 'current';
    writeSync(fd, r.metas, 0, r.metas.length, 0);
    fdatasyncSync(fd);
    return 'restored';
  } finally {
    closeSync(fd);
  }
}

const fdatasyncAsync = promisify(fdatasync);

export interface CheckpointerOptions {
  /** A checkpoint runs this often while commits happen (the longest a pin holds freed pages). */
  intervalMs?: number;
  /** The sequence number of the newest checkpoint already there (the next one follows it). */
  lastSeq?: number;
  /**
   * Runs the meta pages' read inside a write transaction: the store's own write path, which knows
   * whether a write batch is open.
   */
  transact: (fn: () => void) => Promise<unknown>;
}

/** Pinned read transaction of lmdb-js (useReadTransaction). */
interface Pin {
  done(): void;
}

/**
 * Takes the checkpoints of one open journaled store: periodically while it is written, and on
 * request (`request`, for a write that waits to be durable).
 */
export class Checkpointer {
  private readonly root: RootDatabase;
  private readonly fd: number;
  private readonly dataFile: string;
  private readonly fileId: FileId;
  private readonly pageSize: number;
  private readonly intervalMs: number;
  private seq: number;
  private pin: Pin | undefined;
  /** The commit id the last checkpoint recorded. */
  private recorded = 0n;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly transact: (fn: () => void) => Promise<unknown>;

  constructor(root: RootDatabase, fd: number, dataFile: string, opts: CheckpointerOptions) {
    this.root = root;
    this.fd = fd;
    this.dataFile = dataFile;
    this.fileId = fileIdOf(dataFile);
    this.pageSize = (root.getStats() as { pageSize: number }).pageSize;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.seq = opts.lastSeq ?? 0;
    this.transact = opts.transact;
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running !== undefined || this.queued !== undefined) return;
      // Only when something was committed since: read the meta pages' commit ids (two small reads).
      let now: bigint;
      try {
        now = metaTxnId(readMetas(this.fd, this.pageSize), this.pageSize);
      } catch {
        return;
      }
      if (now !== this.recorded) this.request().catch(() => undefined);
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Resolves once a checkpoint that began after this call is recorded: every commit before it is safe. */
  request(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the store is closed'));
    if (this.running === undefined) return this.begin();
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.begin();
      });
    return this.queued;
  }

  private begin(): Promise<void> {
    const p = this.take().finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }

  private async take(): Promise<void> {
    const pin = this.root.useReadTransaction() as Pin;
    try {
      let metas: Uint8Array | undefined;
      // Inside a write transaction: no commit writes a meta page while they are read. Inside an open
      // write batch they describe the last commit before it, which is what this checkpoint records.
      await this.transact(() => {
        metas = readMetas(this.fd, this.pageSize);
      });
      await fdatasyncAsync(this.fd);
      const seq = this.seq + 1;
      const bytes = encodeCheckpoint({ seq, fileId: this.fileId, pageSize: this.pageSize, metas: metas! });
      const file = await openFile(checkpointPaths(this.dataFile)[seq % 2]!, 'w', 0o600);
      try {
        await file.write(bytes, 0, bytes.length, 0);
        await file.datasync();
      } finally {
        await file.close();
      }
      this.seq = seq;
      this.recorded = metaTxnId(metas!, this.pageSize);
    } catch (e) {
      pin.done();
      throw e;
    }
    const old = this.pin;
    this.pin = pin;
    old?.done();
  }

  /** A last checkpoint (everything committed is then safe), then the pin is released. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (!this.stopped) {
      try {
        await this.request();
      } finally {
        this.stopped = true;
        await this.queued?.catch(() => undefined);
        await this.running?.catch(() => undefined);
        this.pin?.done();
        this.pin = undefined;
      }
    }
  }
}
