import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointPaths, readCheckpoint } from '../../node-core/store/checkpoint.ts';
import { COMPACT_MIN_BYTES, Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * Compaction at close (store/store.ts, store/compaction.ts): the data file is replaced by a
 * compacted copy only when that is safe, the copy holds every record of every database as it was,
 * and it takes writes afterwards. LMDB's own compacting copy, used before, wrote files whose next
 * writes abort the process; a store it wrote is rewritten at open.
 */
describe('store compaction at close', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = tempDir('store-compaction-');
    path = join(dir, 'ledger.lmdb');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Opens the store at `path` again for `check`, then closes it as it was (no compaction). */
  async function reopened(check: (store: Store) => unknown): Promise<void> {
    const store = Store.open({ path });
    try {
      await check(store);
    } finally {
      await store.close({ compact: 'never' });
    }
  }

  const key = (i: number, tag: number) => {
    const k = new Uint8Array(33);
    new DataView(k.buffer).setUint32(0, Math.imul(i, 2654435761) >>> 0);
    k[32] = tag;
    return k;
  };

  /** Interleaved commits to three databases, then half the blocks deleted: free pages among used. */
  async function fill(store: Store): Promise<void> {
    for (let t = 0; t < 20; t++) {
      await store.transaction(() => {
        for (let i = t * 200; i < (t + 1) * 200; i++) {
          void store.blocks.put(key(i, 9), new Uint8Array(300).fill(i & 0xff));
          void store.accounts.put(key(i, 0), new Uint8Array(120).fill((i * 7) & 0xff));
          void store.accounts.put(key(i, 1), new Uint8Array(40).fill((i * 3) & 0xff));
          void store.meta.put(`m${i}`, `value ${i}`);
        }
      });
    }
    await store.transaction(() => {
      for (let i = 0; i < 4000; i += 2) void store.blocks.remove(key(i, 9));
    });
  }

  /** Every record of the databases fill() writes, as hex text. */
  function contents(store: Store): string[] {
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    const out: string[] = [];
    for (const { key: k, value } of store.blocks.getRange({})) out.push(`b ${hex(k)} ${hex(value)}`);
    for (const { key: k, value } of store.accounts.getRange({})) out.push(`a ${hex(k)} ${hex(value)}`);
    for (const { key: k, value } of store.meta.getRange({})) out.push(`m ${k} ${value}`);
    return out;
  }

  it('replaces the data file with a smaller copy holding every record, and says so', async () => {
    const store = Store.open({ path });
    await fill(store);
    const before = contents(store);
    expect(before.length).toBe(2000 + 8000 + 4000);
    const inode = statSync(path).ino;
    await store.close({ compact: 'always' });
    const result = store.compaction;
    expect(result?.compacted).toBe(true);
    if (!result?.compacted) return;
    expect(result.bytesAfter).toBeLessThan(result.bytesBefore);
    expect(statSync(path).size).toBe(result.bytesAfter);
    expect(statSync(path).ino).not.toBe(inode);
    expect(readFileSync(`${path}.compacted`, 'utf8').trim()).toBe(`${result.bytesAfter} copy`);
    expect(existsSync(`${path}.compact-tmp`)).toBe(false);

    await reopened(async (again) => {
      expect(contents(again)).toEqual(before);
      // Still a working store: a write after compaction commits and reads back.
      await again.transaction(() => void again.meta.put('after', 'yes'));
      expect(again.meta.get('after')).toBe('yes');
    });
  });

  /**
   * About 210,000 records, 70 MB: LMDB's compacting copy of a store this size aborts the next writes
   * (below about 40 MB it did not, so the store above is too small to show it).
   */
  async function fillLarge(store: Store): Promise<void> {
    for (let t = 0; t < 70; t++)
      await store.transaction(() => {
        for (let i = 0; i < 1000; i++)
          for (const db of [store.blocks, store.accounts, store.hashes])
            void db.put(randomBytes(32), randomBytes(100));
      });
  }

  /**
   * 60 write transactions of 1,000 records on the store at `path`, in another process (an abort
   * there would end the test run): its exit code or signal, and whether it got to the end.
   */
  function writeInChild(at: string): Promise<{ code: number | null; signal: string | null; ok: boolean }> {
    const script =
      `import { open } from 'lmdb'; import { randomBytes } from 'node:crypto';` +
      `const r = open({ path: ${JSON.stringify(at)}, maxDbs: 32, cache: false, useWritemap: false, eventTurnBatching: false });` +
      `const db = r.openDB('blocks', { encoding: 'binary', keyEncoding: 'binary' });` +
      `for (let t = 0; t < 60; t++) r.transactionSync(() => { for (let i = 0; i < 1000; i++) db.putSync(randomBytes(32), randomBytes(100)); });` +
      `await r.close(); console.log('wrote');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', () => {}); // LMDB's assertion message, when it aborts
    return new Promise((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal, ok: out.includes('wrote') })),
    );
  }

  it('a large compacted store takes heavy writes when opened again', async () => {
    const store = Store.open({ path });
    await fillLarge(store);
    await store.close({ compact: 'always' });
    expect(store.compaction?.compacted).toBe(true);
    expect(await writeInChild(path)).toEqual({ code: 0, signal: null, ok: true });
  }, 60_000);

  it("rewrites at open a store LMDB's compacting copy wrote, once, and it then takes writes", async () => {
    const store = Store.open({ path });
    await fillLarge(store);
    await store.transaction(() => void store.meta.put('kept', 'yes'));
    const records = (s: Store) => [s.blocks, s.accounts, s.hashes].map((db) => db.getCount());
    const counts = records(store);
    // What the store did before 2026-11-30: LMDB's compacting copy, and a marker holding its size.
    const lmdbCopy = `${path}.lmdb-copy`;
    await (store.root as unknown as { backup(to: string, compact: boolean): Promise<void> }).backup(
      lmdbCopy,
      true,
    );
    await store.close({ compact: 'never' });
    renameSync(lmdbCopy, path);
    writeFileSync(`${path}.compacted`, `${statSync(path).size}\n`);

    // The defect the rewrite is for: such a file aborts the next writes (on a copy of it).
    const probe = join(dir, 'probe.lmdb');
    copyFileSync(path, probe);
    const broken = await writeInChild(probe);
    expect(broken.ok).toBe(false);
    expect(broken.signal ?? broken.code).not.toBe(0);

    const inode = statSync(path).ino;
    const again = Store.open({ path });
    try {
      expect(again.rewrite?.rewritten).toBe(true);
      expect(records(again)).toEqual(counts);
      expect(again.meta.get('kept')).toBe('yes');
    } finally {
      await again.close({ compact: 'never' });
    }
    expect(statSync(path).ino).not.toBe(inode);
    expect(readFileSync(`${path}.compacted`, 'utf8')).toMatch(/^\d+ copy\n$/);
    expect(existsSync(`${path}.compact-tmp`)).toBe(false);
    expect(await writeInChild(path)).toEqual({ code: 0, signal: null, ok: true });
    // Once: the next open leaves the file alone.
    const third = Store.open({ path });
    expect(third.rewrite).toBeUndefined();
    await third.close({ compact: 'never' });
  }, 90_000);

  it('leaves a small store and one barely grown since its last compaction alone', async () => {
    const small = Store.open({ path });
    await fill(small);
    const inode = statSync(path).ino;
    await small.close();
    expect(small.compaction).toEqual({ compacted: false, reason: 'small' });
    expect(statSync(path).ino).toBe(inode);
    expect(statSync(path).size).toBeLessThan(COMPACT_MIN_BYTES);

    // A marker saying the file was compacted at about its size now: not worth another copy.
    const big = Store.open({ path, mapSize: 256 * 1024 * 1024 });
    await big.transaction(() => {
      for (let i = 0; i < 1000; i++) void big.blocks.put(key(i, 5), new Uint8Array(40_000));
    });
    const size = statSync(path).size;
    expect(size).toBeGreaterThanOrEqual(COMPACT_MIN_BYTES);
    writeFileSync(`${path}.compacted`, `${size - 1024}\n`);
    await big.close();
    expect(big.compaction).toEqual({ compacted: false, reason: 'grew little since last compacted' });
    expect(statSync(path).ino).toBe(inode);
  });

  it('compacts a journaled store too, after its last checkpoint, and drops its checkpoints', async () => {
    const store = Store.open({ path, journaled: true });
    await fill(store);
    const expected = contents(store);
    expect(readCheckpoint(path)).toBeDefined();
    await store.close({ compact: 'always' });
    expect(store.compaction?.compacted).toBe(true);
    // They described the old file; the copy replacing it is synced whole.
    expect(checkpointPaths(path).some((p) => existsSync(p))).toBe(false);
    const again = Store.open({ path, journaled: true });
    try {
      expect(again.restored).toBe('none');
      expect(contents(again)).toEqual(expected);
    } finally {
      await again.close({ compact: 'never' });
    }
  });

  it('does not replace a file another process has open', async () => {
    const store = Store.open({ path });
    await fill(store);
    const inode = statSync(path).ino;
    // Another process reading the same store (LMDB allows it): it holds a reader slot until killed.
    const script =
      `import { open } from 'lmdb'; const r = open({ path: ${JSON.stringify(path)}, maxDbs: 32 });` +
      `r.openDB('meta', { encoding: 'string' }).get('m1'); console.log('open'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => d.toString().includes('open') && resolve());
        child.once('exit', (code) => reject(new Error(`reader exited ${code}`)));
      });
      await store.close({ compact: 'always' });
      expect(store.compaction).toEqual({ compacted: false, reason: `open in process ${child.pid}` });
      expect(statSync(path).ino).toBe(inode);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('keeps the old file when a write commits during the copy, and loses nothing', async () => {
    const store = Store.open({ path });
    await fill(store);
    const inode = statSync(path).ino;
    // A write that commits after the copy was taken, before the store closes: only the old file
    // holds it, so replacing that file would lose it.
    const inner = store as unknown as { writeCopy(to: string, mapSize: number): void };
    const writeCopy = inner.writeCopy.bind(store);
    inner.writeCopy = (to, mapSize) => {
      writeCopy(to, mapSize);
      store.meta.putSync('late', 'kept');
    };
    await store.close({ compact: 'always' });
    expect(store.compaction).toEqual({
      compacted: false,
      reason: 'failed: the store was written during the copy',
    });
    expect(statSync(path).ino).toBe(inode);
    expect(existsSync(`${path}.compact-tmp`)).toBe(false);
    await reopened((again) => expect(again.meta.get('late')).toBe('kept'));
  });

  it('removes the copy of a compaction cut short, and the store is as it was', async () => {
    const store = Store.open({ path });
    await fill(store);
    const before = contents(store);
    await store.close({ compact: 'never' });
    // A kill during the copy leaves a partial copy beside the untouched file.
    writeFileSync(`${path}.compact-tmp`, 'partial');
    await reopened((again) => {
      expect(existsSync(`${path}.compact-tmp`)).toBe(false);
      expect(contents(again)).toEqual(before);
    });
  });
});
