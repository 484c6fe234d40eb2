import {
  close,
  closeSync,
  constants,
  fdatasync,
  fsync,
  open,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writev,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * The append-only files of the ledger's write-ahead journal (issue #18): frames of
 * `<u32 length><u32 CRC-32 of the payload><payload>`, little-endian, in files `<index>.wal` of one
 * directory. A crash mid-append leaves a torn last frame: its length runs past the written bytes or
 * its checksum fails, and reading stops there (it was never synced, so never acknowledged).
 *
 * Files are preallocated with zeros a chunk at a time (a zero length ends a file's frames): a sync
 * then writes the appended pages only, not the file's size and extents as well, except the first
 * one after each chunk (see JournalWriter.runSync).
 */

const HEADER = 8;
/** Zeros written ahead of the frames at a time. */
const CHUNK = 256 * 1024;
const NAME = /^(\d{8})\.wal$/;

export interface JournalFrame {
  /** File index and offset of the frame. */
  file: number;
  offset: number;
  payload: Uint8Array;
}

export interface JournalRead {
  frames: JournalFrame[];
  /** The index of every journal file found, ascending. */
  files: number[];
  /** Where reading stopped early on a torn or corrupt frame (the bytes from there on are ignored). */
  torn?: { file: number; offset: number };
}

export function journalFileName(dir: string, index: number): string {
  return join(dir, `${String(index).padStart(8, '0')}.wal`);
}

/** The journal files of `dir`, by index ascending (none if the directory does not exist). */
export function journalFiles(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names
    .map((n) => NAME.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** Every intact frame of every file of `dir`, in order; stops at the first torn or corrupt frame. */
export function readJournal(dir: string): JournalRead {
  const files = journalFiles(dir);
  const frames: JournalFrame[] = [];
  for (const file of files) {
    const bytes = readFileSync(journalFileName(dir, file));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 0;
    while (at + HEADER <= bytes.length) {
      const length = view.getUint32(at, true);
      if (length === 0) break; // the preallocated zeros: the end of this file's frames
      const end = at + HEADER + length;
      const payload = end <= bytes.length ? bytes.subarray(at + HEADER, end) : undefined;
      if (payload === undefined || crc32(payload) !== view.getUint32(at + 4, true))
        return { frames, files, torn: { file, offset: at } };
      frames.push({ file, offset: at, payload });
      at = end;
    }
  }
  return { frames, files };
}

/** Makes a directory's entries durable (a new or removed file), in the pool. */
function syncDir(dir: string): Promise<void> {
  return new Promise((resolve, reject) =>
    open(dir, 'r', (err, fd) => {
      if (err) return reject(err);
      fsync(fd, (failed) => close(fd, () => (failed ? reject(failed) : resolve())));
    }),
  );
}

/** Zeros written ahead of the frames (read only; shared by every writer). */
const ZEROS = new Uint8Array(CHUNK + HEADER);

/**
 * Where the platform has it (Linux, macOS), journal files are opened O_DSYNC: a write returns once
 * its bytes (and the size and extents that reach them) are durable, so a sync is ONE call in the
 * pool. A separate fdatasync is a second hand-off to the pool and back a sync, and each costs the
 * node's thread CPU: in the network bench here (2026-12-03) submitting the writev and the fdatasync
 * took 1.3 and 1.4 % of the submitting node's thread; `npm run bench -- journal`: 50.6 against
 * 62.2 µs of the calling thread's CPU a sync. Elsewhere (Windows) an fdatasync follows each write.
 */
const DSYNC = constants.O_DSYNC ?? 0;

/** A pending sync: every frame queued before it was asked for is durable when it resolves. */
interface Waiter {
  promise: Promise<void>;
  resolve(): void;
  reject(e: Error): void;
}

function waiter(): Waiter {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise: handled(promise), resolve, reject };
}

/**
 * `p`, marked handled: a sync's waiters attach their handlers only once LMDB has committed their
 * group, and a sync that fails before then must not count as an unhandled rejection (which ends
 * the process). Every waiter still sees the rejection.
 */
function handled(p: Promise<void>): Promise<void> {
  p.catch(() => {});
  return p;
}

export interface JournalWriterOptions {
  /** Told once, when a write or sync first fails. */
  onFailure?: (e: Error) => void;
  /**
   * Open the file O_DSYNC where the platform can (default true); false: an fdatasync after each
   * write (the journal bench's baseline).
   */
  dsync?: boolean;
}

/**
 * Appends frames to one journal file and syncs them in groups. `append` only queues a frame in
 * memory; a sync writes every queued frame with one writev in the pool (durable when it returns: see
 * DSYNC), so the node's thread (the desktop app's window's too) makes no file system call of its
 * own. Until 2026-12-03 each group's frame was written with writeSync on that thread, which held it
 * 11 µs (median) to 4.1 ms at ingest here; a sync of 10 frames now takes that thread 47.8 µs of CPU
 * against 84.8 then (the loop of `npm run bench -- journal` run on both writers).
 *
 * `sync()` resolves once a write (and its fdatasync, without O_DSYNC) that began after every append
 * made before the call has completed; while one runs, every later call shares the next one (group
 * commit of the syncs themselves). A frame not yet written was never acknowledged, so losing the
 * queue in a crash loses nothing acknowledged.
 *
 * A failed write or sync (a full disk, an I/O error) stays: the writer is `failed`, every sync
 * rejects with it and `append` throws it. After a failed fdatasync the kernel may have dropped the
 * dirty pages, so nothing later in this file could be trusted; the owner goes on without it
 * (BlockJournal, GroupCommit: groups are answered after LMDB's flush instead).
 */
export class JournalWriter {
  readonly dir: string;
  readonly index: number;
  private readonly fd: number;
  /** Where the next frame goes (frames queued included). */
  private end = 0;
  /** Where the queued frames start: the bytes before are written. */
  private written = 0;
  /** Bytes of the file written so far (frames, then zeros). */
  private allocated = 0;
  /** Frames appended since the last write began, in order (header and payload each). */
  private queued: Uint8Array[] = [];
  private syncing: Promise<void> | undefined;
  private next: Waiter | undefined;
  /** The first failure of a write or sync: every later sync rejects with it. */
  private failure: Error | undefined;
  /**
   * The sync of the file's directory entry, until it is done: the first write waits for it, as a
   * frame is durable only once its file is. Made in the pool, like everything this class does:
   * a node rotates its journal every 16 MB (block-journal.ts), every ~12 s under a full ingest here.
   */
  private created: Promise<void> | undefined;

  private readonly onFailure: ((e: Error) => void) | undefined;
  /** Opened O_DSYNC: a write is durable when it returns (else an fdatasync follows it). */
  private readonly dsync: boolean;

  constructor(dir: string, index: number, opts: JournalWriterOptions = {}) {
    this.dir = dir;
    this.index = index;
    this.onFailure = opts.onFailure;
    this.dsync = (opts.dsync ?? true) && DSYNC !== 0;
    const { O_WRONLY, O_CREAT, O_EXCL } = constants;
    const flags = O_WRONLY | O_CREAT | O_EXCL | (this.dsync ? DSYNC : 0);
    this.fd = openSync(journalFileName(dir, index), flags, 0o600);
    this.created = syncDir(dir).then(() => {
      this.created = undefined;
    });
    this.created.catch(() => {}); // reported by the sync that waits for it
  }

  /** Bytes of frames appended. */
  get size(): number {
    return this.end;
  }

  /** The write or sync that failed, if one did. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Queues one frame (`sync` writes it and makes it durable). Throws if the writer has failed. */
  append(payload: Uint8Array): void {
    if (this.failure) throw this.failure;
    const header = new Uint8Array(HEADER);
    const view = new DataView(header.buffer);
    view.setUint32(0, payload.length, true);
    view.setUint32(4, crc32(payload), true);
    // Written as queued: the caller hands the payload over and does not change it.
    this.queued.push(header, payload);
    this.end += HEADER + payload.length;
  }

  /** Resolves once every frame appended before the call is durable. */
  sync(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    // Nothing queued, nothing running: every frame went in a write that completed, durable.
    if (this.syncing === undefined && this.queued.length === 0 && this.written > 0) return Promise.resolve();
    if (this.syncing === undefined) {
      this.syncing = handled(this.runSync());
      return this.syncing;
    }
    this.next ??= waiter();
    return this.next.promise;
  }

  private runSync(): Promise<void> {
    const buffers = this.queued;
    const at = this.written;
    this.queued = [];
    // A zero length word after the frames must be durable with them: zeros from the end, a chunk at
    // a time, in the same write (rewriting zeros already there is harmless). The file's new size and
    // extents are made durable with the write, as they are needed to read the frames back.
    if (this.end + HEADER > this.allocated) {
      const target = Math.max(this.allocated + CHUNK, this.end + HEADER);
      buffers.push(ZEROS.subarray(0, target - this.end));
      this.allocated = target;
    }
    this.written = this.end;
    return new Promise<void>((resolve, reject) => {
      const done = (err: Error | null) => {
        if (err && this.failure === undefined) {
          this.failure = err;
          this.onFailure?.(err);
        }
        const waiting = this.next;
        this.next = undefined;
        this.syncing = undefined;
        if (this.failure) reject(this.failure);
        else resolve();
        if (waiting === undefined) return;
        if (this.failure) waiting.reject(this.failure);
        else {
          this.syncing = handled(this.runSync());
          this.syncing.then(waiting.resolve, waiting.reject);
        }
      };
      const synced = () => (this.dsync ? done(null) : fdatasync(this.fd, done));
      const write = () => (buffers.length > 0 ? writeAll(this.fd, buffers, at, synced, done) : synced());
      if (this.created === undefined && buffers.length > 0) write();
      else (this.created ?? Promise.resolve()).then(write, done);
    });
  }

  /**
   * Resolves once every frame is durable, then closes the file (it stays for replay until removed).
   * The descriptor is closed only after the writes and syncs in flight on it have returned.
   */
  async close(): Promise<void> {
    try {
      await this.sync();
    } finally {
      closeSync(this.fd);
    }
  }
}

/** Writes `buffers` at `position` in the pool, all of them (a short write is an error: a full disk). */
function writeAll(
  fd: number,
  buffers: Uint8Array[],
  position: number,
  then: () => void,
  fail: (err: Error) => void,
): void {
  const total = buffers.reduce((n, b) => n + b.length, 0);
  writev(fd, buffers, position, (err, written) => {
    if (err) fail(err);
    else if (written !== total)
      fail(Object.assign(new Error(`journal write: ${written} of ${total} bytes written`), { code: 'EIO' }));
    else then();
  });
}

/**
 * Removes journal files whose every frame LMDB holds durably. A removal lost in a crash is harmless:
 * a start replays none of the file's groups, LMDB's recorded group being past them.
 */
export function removeJournalFiles(dir: string, indexes: number[]): Promise<void> {
  if (indexes.length === 0) return Promise.resolve();
  for (const i of indexes) rmSync(journalFileName(dir, i), { force: true });
  return syncDir(dir);
}
