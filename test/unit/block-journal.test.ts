import fs, { openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BlockJournal,
  decodeFrame,
  encodeGroup,
  JOURNAL_SEQ_KEY,
  type JournalEntry,
  readJournalState,
} from '../../node-core/ledger/block-journal.ts';
import {
  journalFileName,
  journalFiles,
  JournalWriter,
  readJournal,
} from '../../node-core/ledger/journal-file.ts';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/** The journal's files and groups against a real LMDB store (ledger/journal-file.ts, block-journal.ts). */

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fresh(): { dir: string; journalDir: string; store: Store } {
  const dir = tempDir('journal-unit-');
  dirs.push(dir);
  const store = Store.open({ path: join(dir, 'db') });
  stores.push(store);
  return { dir, journalDir: join(dir, 'journal'), store };
}

const block = (n: number): JournalEntry => ({
  kind: 'block',
  record: new Uint8Array(100).fill(n),
  finalized: n % 2 === 0,
});

/** Runs `body` with node:fs's `name` replaced (journal-file.ts calls its named exports). */
async function withFs<
  K extends 'fsyncSync' | 'fsync' | 'writeSync' | 'fdatasyncSync' | 'writev' | 'fdatasync',
>(name: K, replace: (real: (typeof fs)[K]) => (typeof fs)[K], body: () => Promise<void>): Promise<void> {
  const real = fs[name];
  fs[name] = replace(real);
  syncBuiltinESMExports();
  try {
    await body();
  } finally {
    fs[name] = real;
    syncBuiltinESMExports();
  }
}

describe('journal frames', () => {
  it('round-trips groups of blocks, finalizations and commit-locks', () => {
    const entries: JournalEntry[] = [
      block(1),
      { kind: 'finalize', items: [{ account: 'xe_a', height: 3 }] },
      { kind: 'lock', position: 'xe_a:' + 'ab'.repeat(32), hash: 'cd'.repeat(32) },
      block(2),
    ];
    expect(decodeFrame(encodeGroup(2 ** 40, entries))).toEqual({ seq: 2 ** 40, entries });
  });

  it('stops at a torn frame and at a corrupt one, keeping the frames before', async () => {
    const { journalDir } = fresh();
    fs.mkdirSync(journalDir);
    const w = new JournalWriter(journalDir, 1);
    for (let i = 1; i <= 3; i++) w.append(encodeGroup(i, [block(i)]));
    await w.close();
    const read = readJournal(journalDir);
    expect(read.frames.map((f) => (decodeFrame(f.payload) as { seq: number }).seq)).toEqual([1, 2, 3]);
    expect(read.torn).toBeUndefined();

    // One flipped byte in the second frame's payload: its checksum fails, the third is not read.
    const second = read.frames[1]!;
    const fd = openSync(journalFileName(journalDir, 1), 'r+');
    writeSync(fd, Buffer.from([second.payload[20]! ^ 0xff]), 0, 1, second.offset + 8 + 20);
    closeSync(fd);
    const again = readJournal(journalDir);
    expect(again.frames).toHaveLength(1);
    expect(again.torn).toEqual({ file: 1, offset: second.offset });

    // A length running past the file's end (a frame cut short).
    const bytes = readFileSync(journalFileName(journalDir, 1));
    const fd2 = openSync(journalFileName(journalDir, 1), 'r+');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(bytes.length, 0);
    writeSync(fd2, len, 0, 4, second.offset);
    closeSync(fd2);
    expect(readJournal(journalDir).torn).toEqual({ file: 1, offset: second.offset });
  });

  it.each([
    ['opened O_DSYNC', true],
    ['an fdatasync after each write', false],
  ])(
    'writes and syncs nothing on the calling thread, and 1 MB of frames read back whole (%s)',
    async (_, dsync) => {
      const { journalDir } = fresh();
      fs.mkdirSync(journalDir);
      const calls: string[] = [];
      const counted =
        <K extends 'fsyncSync' | 'writeSync' | 'fdatasyncSync'>(name: K) =>
        (real: (typeof fs)[K]): (typeof fs)[K] =>
          ((...args: unknown[]) => {
            calls.push(name);
            return (real as (...a: unknown[]) => unknown)(...args);
          }) as (typeof fs)[K];
      await withFs('fsyncSync', counted('fsyncSync'), () =>
        withFs('fdatasyncSync', counted('fdatasyncSync'), () =>
          withFs('writeSync', counted('writeSync'), async () => {
            const w = new JournalWriter(journalDir, 1, { dsync });
            // 1 MB of frames of 1 KB: four times the zeros written ahead at a time.
            const payload = (i: number) => new Uint8Array(1016).fill(i & 0xff);
            for (let i = 0; i < 1024; i++) {
              w.append(payload(i));
              // Every 100th frame a sync, as groups come: later frames queue while one runs.
              if (i % 100 === 0) void w.sync();
            }
            await w.sync();
            expect(calls).toEqual([]);
            await w.close();
            const frames = readJournal(journalDir).frames;
            expect(frames).toHaveLength(1024);
            frames.forEach((f, i) => expect(new Uint8Array(f.payload)).toEqual(payload(i)));
            // The zeros ahead: the file ends past its last frame.
            const last = frames.at(-1)!;
            expect(fs.statSync(journalFileName(journalDir, 1)).size).toBeGreaterThan(last.offset + 8 + 1016);
          }),
        ),
      );
    },
  );

  it('a failed write stays: its sync and every later one reject, appends throw, frames before it read back', async () => {
    const { journalDir } = fresh();
    fs.mkdirSync(journalDir);
    let failing = false;
    const full = (real: typeof fs.writev) =>
      ((fd: number, buffers: NodeJS.ArrayBufferView[], position: number, cb: never) => {
        if (!failing) return real(fd, buffers, position, cb);
        const err = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        setImmediate(() => (cb as (e: Error) => void)(err));
      }) as typeof fs.writev;
    await withFs('writev', full, async () => {
      const w = new JournalWriter(journalDir, 1);
      w.append(encodeGroup(1, [block(1)]));
      await w.sync();
      failing = true;
      w.append(encodeGroup(2, [block(2)]));
      const second = w.sync();
      w.append(encodeGroup(3, [block(3)]));
      const third = w.sync(); // queued behind the failing one: it never writes
      await expect(second).rejects.toThrow('ENOSPC');
      await expect(third).rejects.toThrow('ENOSPC');
      failing = false;
      expect(w.failed?.message).toMatch('ENOSPC');
      expect(() => w.append(encodeGroup(4, [block(4)]))).toThrow('ENOSPC');
      await expect(w.sync()).rejects.toThrow('ENOSPC');
      await expect(w.close()).rejects.toThrow('ENOSPC');
    });
    const read = readJournal(journalDir);
    expect(read.frames.map((f) => (decodeFrame(f.payload) as { seq: number }).seq)).toEqual([1]);
    expect(read.torn).toBeUndefined();
  });

  it('a failed fdatasync stays too (a file opened without O_DSYNC)', async () => {
    const { journalDir } = fresh();
    fs.mkdirSync(journalDir);
    const eio = (() => (_fd: number, cb: (e: Error) => void) => {
      setImmediate(() => cb(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
    }) as unknown as (real: typeof fs.fdatasync) => typeof fs.fdatasync;
    const told: Error[] = [];
    const w = new JournalWriter(journalDir, 1, { dsync: false, onFailure: (e) => told.push(e) });
    w.append(encodeGroup(1, [block(1)]));
    await w.sync();
    await withFs('fdatasync', eio, async () => {
      w.append(encodeGroup(2, [block(2)]));
      await expect(w.sync()).rejects.toThrow('EIO');
    });
    // The kernel may have dropped the pages it could not write: nothing more goes to this file.
    expect(() => w.append(encodeGroup(3, [block(3)]))).toThrow('EIO');
    await expect(w.sync()).rejects.toThrow('EIO');
    expect(told.map((e) => e.message)).toEqual(['EIO: i/o error, fdatasync']);
    await expect(w.close()).rejects.toThrow('EIO');
  });

  it("resolves a new file's first sync only once its directory entry is durable", async () => {
    const { journalDir } = fresh();
    fs.mkdirSync(journalDir);
    // The directory's fsync (the only fsync the writer asks for) is held until released.
    let release: (() => void) | undefined;
    const held = (real: typeof fs.fsync) =>
      ((fd: number, cb: fs.NoParamCallback) => {
        release = () => real(fd, cb);
      }) as typeof fs.fsync;
    await withFs('fsync', held, async () => {
      const w = new JournalWriter(journalDir, 1);
      w.append(encodeGroup(1, [block(1)]));
      let synced = false;
      const sync = w.sync().then(() => (synced = true));
      await new Promise((r) => setTimeout(r, 50));
      expect(release).toBeDefined();
      expect(synced).toBe(false);
      release!();
      await sync;
      expect(synced).toBe(true);
      await w.close();
    });
  });

  it('shares one sync among appends made while a sync runs', async () => {
    const { journalDir } = fresh();
    fs.mkdirSync(journalDir);
    const w = new JournalWriter(journalDir, 1);
    w.append(encodeGroup(1, [block(1)]));
    const first = w.sync();
    w.append(encodeGroup(2, [block(2)]));
    const second = w.sync();
    w.append(encodeGroup(3, [block(3)]));
    const third = w.sync();
    expect(third).toBe(second); // both wait for the one sync after the running one
    await Promise.all([first, second, third]);
    await w.close();
    expect(readJournal(journalDir).frames).toHaveLength(3);
  });
});

describe('BlockJournal against LMDB', () => {
  /** One group the way the ledger's group commit writes it: appended inside its transaction. */
  async function group(store: Store, j: BlockJournal, entries: JournalEntry[], fail = false) {
    let handle: ReturnType<BlockJournal['append']> | undefined;
    try {
      await store.childTransaction(() => {
        handle = j.append(entries);
        if (fail) throw new Error('the group fails');
      });
    } catch {
      handle?.abort();
      return;
    }
    handle!.committed();
    await handle!.durable;
  }

  it('replays only groups past the one LMDB recorded, never an aborted one', async () => {
    const { journalDir, store } = fresh();
    const j = BlockJournal.create(journalDir, store, 1);
    await group(store, j, [block(1)]);
    await group(store, j, [block(2)]);
    await group(store, j, [block(3)], true); // its transaction failed: LMDB does not record it
    await group(store, j, [block(4)]);
    await j.close();
    expect(store.meta.get(JOURNAL_SEQ_KEY)).toBe('4');

    // As LMDB would have it had it lost the last group: recorded position 2.
    await store.transaction(() => store.meta.putSync(JOURNAL_SEQ_KEY, '2'));
    const state = readJournalState(journalDir, store);
    expect(state.pending.map((g) => g.seq)).toEqual([4]);
    expect(state.pending[0]!.entries).toEqual([block(4)]);
    expect(state.nextSeq).toBe(5);

    await store.transaction(() => store.meta.putSync(JOURNAL_SEQ_KEY, '4'));
    expect(readJournalState(journalDir, store).pending).toEqual([]);
  });

  it('takes no more groups once a write failed: the group waiting rejects, the owner is told once, the next cannot append', async () => {
    const { journalDir, store } = fresh();
    const told: string[] = [];
    const j = BlockJournal.create(journalDir, store, 1, { onFailure: (e) => told.push(e.message) });
    await group(store, j, [block(1)]);
    expect(j.failed).toBeUndefined();
    // The write fails at once, before LMDB has committed the group that waits for it.
    const eio = (() => (_fd: number, _buffers: unknown, _position: number, cb: (e: Error) => void) => {
      setImmediate(() => cb(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' })));
    }) as unknown as (real: typeof fs.writev) => typeof fs.writev;
    await withFs('writev', eio, async () => {
      await expect(group(store, j, [block(2)])).rejects.toThrow('EIO');
    });
    expect(j.failed?.message).toMatch('EIO');
    expect(told).toEqual(['EIO: i/o error, write']);
    // The ledger asks `failed` first (it then waits for LMDB's flush); an append anyway throws
    // before it writes anything.
    expect(() => j.append([block(3)])).toThrow('EIO');
    expect(store.meta.get(JOURNAL_SEQ_KEY)).toBe('2');
    await expect(j.close()).rejects.toThrow('EIO');
    // The group synced before the failure reads back, and nothing after it.
    expect(
      readJournal(journalDir).frames.map((f) => (decodeFrame(f.payload) as { seq: number }).seq),
    ).toEqual([1]);
  });

  it('starts a new file past its size and removes the old one once LMDB has flushed past it', async () => {
    const { journalDir, store } = fresh();
    const j = BlockJournal.create(journalDir, store, 1, { rotateBytes: 1000 });
    for (let i = 1; i <= 30; i++) await group(store, j, [block(i)]);
    await store.root.flushed;
    await new Promise((r) => setTimeout(r, 50)); // removal runs after the flush it waits for
    const files = journalFiles(journalDir);
    expect(files.length).toBeLessThanOrEqual(2);
    expect(files[0]).toBeGreaterThan(1);
    await j.close();
    // What is left covers the last groups; every group is in LMDB, so nothing is pending.
    expect(readJournalState(journalDir, store).pending).toEqual([]);
    expect(store.meta.get(JOURNAL_SEQ_KEY)).toBe('30');
  });
});
