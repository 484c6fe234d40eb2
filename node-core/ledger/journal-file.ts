import {
  close,
  closeSync,
  fdatasync,
  fsync,
  open,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * The append-only files of the ledger's write-ahead journal (issue #18): frames of
 * `<u32 length><u32 CRC-32 of the payload><payload>`, little-endian, in files `<index>.wal` of one
 * directory. A crash mid-append leaves a torn last frame: its length runs past the written bytes or
 * its checksum fails, and reading stops there (it was never synced, so never acknowledged).
 *
 * Files are preallocated with zeros a chunk at a time (a zero length ends a file's frames): an
 * fdatasync then writes the appended pages only, not the file's size and extents as well, except the
 * first one after each chunk (see JournalWriter.extend).
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

/**
 * Appends frames to one journal file and syncs them in groups: `sync()` resolves once an fdatasync
 * that started after every append made before the call has completed. While one sync runs, every
 * later call shares the next one (group commit of the syncs themselves).
 */
export class JournalWriter {
  readonly dir: string;
  readonly index: number;
  private fd: number;
  /** Where the next frame goes. */
  private end = 0;
  /** Bytes of the file written so far (frames, then zeros). */
  private allocated = 0;
  private syncing: Promise<void> | undefined;
  private next: { promise: Promise<void>; resolve(): void; reject(e: Error): void } | undefined;
  /**
   * The sync of the file's directory entry, until it is done: every fdatasync waits for it, as a
   * frame is durable only once its file is. Made in the pool, like everything this class syncs:
   * a node rotates its journal every 16 MB (block-journal.ts), every ~12 s under a full ingest here.
   */
  private created: Promise<void> | undefined;

  constructor(dir: string, index: number) {
    this.dir = dir;
    this.index = index;
    this.fd = openSync(journalFileName(dir, index), 'wx', 0o600);
    try {
      this.extend(HEADER);
    } catch (e) {
      closeSync(this.fd);
      rmSync(journalFileName(dir, index), { force: true });
      throw e;
    }
    // A failure stays: every sync rejects with it (no frame of this file can be made durable).
    this.created = syncDir(dir).then(() => {
      this.created = undefined;
    });
    this.created.catch(() => {}); // reported by the syncs that wait for it
  }

  /** Bytes of frames appended. */
  get size(): number {
    return this.end;
  }

  /**
   * Writes one frame (to the page cache; `sync` makes it durable). A failed write (a full disk)
   * throws and leaves the end where it was: the next frame overwrites the partial one.
   */
  append(payload: Uint8Array): void {
    const frame = new Uint8Array(HEADER + payload.length);
    const view = new DataView(frame.buffer);
    view.setUint32(0, payload.length, true);
    view.setUint32(4, crc32(payload), true);
    frame.set(payload, HEADER);
    // A zero length word after the frame must already be on disk-to-be: keep one header of zeros.
    if (this.end + frame.length + HEADER > this.allocated) this.extend(frame.length + HEADER);
    let done = 0;
    while (done < frame.length) done += writeSync(this.fd, frame, done, frame.length - done, this.end + done);
    this.end += frame.length;
  }

  /**
   * Zeros past the end, at least `need` bytes beyond the frames, to the page cache only. The file's
   * new size and extents reach the disk with the next sync's fdatasync, in the pool, which writes
   * them before it returns (they are needed to read the frames back), zero pages included, so a
   * frame it makes durable is followed by a durable zero length or by the file's end. Until
   * 2026-12-02 an fsync here made them durable at once, on the node's thread: 37 times in an ingest
   * of 32,000 blocks, each holding the thread 1.5 ms (median) to 5.7 ms, the same thread as the
   * desktop app's window (and a new file's first chunk and directory entry the same way).
   */
  private extend(need: number): void {
    const target = Math.max(this.allocated + CHUNK, this.end + need);
    const zeros = new Uint8Array(Math.min(CHUNK, target - this.allocated));
    while (this.allocated < target) {
      const n = Math.min(zeros.length, target - this.allocated);
      this.allocated += writeSync(this.fd, zeros, 0, n, this.allocated);
    }
  }

  /** Resolves once every frame appended before the call is durable. */
  sync(): Promise<void> {
    if (this.syncing === undefined) {
      this.syncing = this.runSync();
      return this.syncing;
    }
    if (this.next === undefined) {
      let resolve!: () => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.next = { promise, resolve, reject };
    }
    return this.next.promise;
  }

  private runSync(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (err: Error | null) => {
        const waiting = this.next;
        this.next = undefined;
        this.syncing = undefined;
        if (err) reject(err);
        else resolve();
        if (waiting !== undefined) {
          this.syncing = this.runSync();
          this.syncing.then(waiting.resolve, waiting.reject);
        }
      };
      if (this.created === undefined) fdatasync(this.fd, done);
      else this.created.then(() => fdatasync(this.fd, done), done);
    });
  }

  /**
   * Resolves once every frame is durable, then closes the file (it stays for replay until removed).
   * The descriptor is closed only after the syncs in flight on it have returned.
   */
  async close(): Promise<void> {
    try {
      await this.sync();
    } finally {
      closeSync(this.fd);
    }
  }
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
