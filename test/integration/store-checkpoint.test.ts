import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointPaths, readCheckpoint } from '../../node-core/store/checkpoint.ts';
import { StoreInUseError } from '../../node-core/store/owner-lock.ts';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * A journaled store's checkpoints (store/checkpoint.ts): LMDB syncs nothing at commit, so a power
 * cut may leave meta pages on disk whose pages are not. Made here with real processes and files: a
 * store takes a checkpoint, then rewrites every record many times in commits nobody waits for and
 * is killed with kill -9; the power cut is then played on its file: every page written after the
 * checkpoint is lost (zeros) while the newest meta pages reached the disk. The store must open on
 * the checkpoint, whole. If the checkpoint's pages had been reused by the rewrites (no pinned
 * snapshot), they would be among the lost pages and the store would read zeros.
 */
const CHILD = fileURLToPath(new URL('../fixtures/store-churn-child.ts', import.meta.url));
const COUNT = 2000;
const key = (i: number) => `k${String(i).padStart(6, '0')}`;

function waitLine(child: ChildProcess, want: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.split('\n').includes(want)) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before '${want}'`)));
  });
}

describe('journaled store checkpoints', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = tempDir('store-checkpoint-');
    path = join(dir, 'ledger.lmdb');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Runs the child to its kill -9 after the churn and plays a power cut on the file left: returns
   * how many pages were lost.
   */
  async function crashAndCut(): Promise<number> {
    const child = spawn(process.execPath, [CHILD, path, String(COUNT)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      await waitLine(child, 'checkpointed');
      const image = readFileSync(path);
      child.stdin!.write('churn\n');
      await waitLine(child, 'churned');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      const after = readFileSync(path);
      const ckpt = readCheckpoint(path);
      expect(ckpt, 'a checkpoint was recorded').toBeDefined();
      const ps = ckpt!.pageSize;
      // The churn committed: the meta pages in the file are newer than the checkpoint's.
      expect(Buffer.compare(after.subarray(0, 2 * ps), ckpt!.metas)).not.toBe(0);
      const torn = Buffer.from(after);
      let lost = 0;
      for (let at = 2 * ps; at < after.length; at += ps) {
        const now = after.subarray(at, at + ps);
        const then = image.subarray(at, at + ps);
        if (then.length !== ps || Buffer.compare(now, then) !== 0) {
          torn.fill(0, at, at + ps);
          lost += 1;
        }
      }
      // In place: the same file (its inode is what the checkpoint names).
      const fd = openSync(path, 'r+');
      try {
        writeSync(fd, torn, 0, torn.length, 0);
      } finally {
        closeSync(fd);
      }
      return lost;
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  function expectCheckpointed(store: Store): void {
    for (let i = 0; i < COUNT; i++)
      expect(store.meta.get(key(i))?.startsWith(`first ${i} `), key(i)).toBe(true);
    expect([...store.meta.getKeys({ start: 'new', end: 'new~' })]).toEqual([]);
  }

  it('opens on its last checkpoint, whole, after a power cut that kept only newer meta pages', async () => {
    const lost = await crashAndCut();
    expect(lost).toBeGreaterThan(50);
    const store = Store.open({ path, journaled: true });
    try {
      expect(store.restored).toBe('restored');
      expectCheckpointed(store);
      // It goes on: a write, durable, survives a clean close.
      await store.transaction(() => void store.meta.put('after', 'yes'));
      await store.childTransaction(() => void store.meta.put('undurable', 'kept by the last checkpoint'));
    } finally {
      await store.close({ compact: 'never' });
    }
    const again = Store.open({ path, journaled: true });
    try {
      expect(again.restored).toBe('current');
      expect(again.meta.get('after')).toBe('yes');
      expect(again.meta.get('undurable')).toBe('kept by the last checkpoint');
      expectCheckpointed(again);
    } finally {
      await again.close({ compact: 'never' });
    }
  }, 60_000);

  it('opened without the journal, goes back to the checkpoint once and drops it', async () => {
    await crashAndCut();
    const store = Store.open({ path });
    try {
      expect(store.restored).toBe('restored');
      expect(checkpointPaths(path).some((p) => existsSync(p))).toBe(false);
      expectCheckpointed(store);
    } finally {
      await store.close({ compact: 'never' });
    }
  }, 60_000);

  it('is taken by one process at a time; one gone (kill -9) leaves it to the next', async () => {
    const child = spawn(process.execPath, [CHILD, path, '10'], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      await waitLine(child, 'checkpointed');
      let thrown: unknown;
      try {
        Store.open({ path, journaled: true });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(StoreInUseError);
      expect((thrown as StoreInUseError).pid).toBe(child.pid);
      // Its checkpoints were left alone (a non-journaled open is refused as well while they exist).
      expect(() => Store.open({ path })).toThrow(StoreInUseError);
      expect(readCheckpoint(path)).toBeDefined();
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    const store = Store.open({ path, journaled: true });
    try {
      expect(store.meta.get(key(9))?.startsWith('first 9 ')).toBe(true);
    } finally {
      await store.close({ compact: 'never' });
    }
  }, 60_000);

  it('ignores and drops a checkpoint of another file (the data file was replaced)', async () => {
    const first = Store.open({ path, journaled: true });
    await first.transaction(() => void first.meta.put('a', '1'));
    await first.close({ compact: 'never' });
    expect(readCheckpoint(path)).toBeDefined();
    // A copy put in its place (a restored backup). Deleted first: the new file often gets the old
    // one's inode number, which alone would not tell them apart.
    copyFileSync(path, `${path}.copy`);
    rmSync(path);
    copyFileSync(`${path}.copy`, path);
    const store = Store.open({ path, journaled: true });
    try {
      expect(store.restored).toBe('other-file');
      expect(store.meta.get('a')).toBe('1');
      await store.transaction(() => void store.meta.put('b', '2'));
      // The new checkpoint names this file.
      expect(readCheckpoint(path)).toBeDefined();
    } finally {
      await store.close({ compact: 'never' });
    }
    const again = Store.open({ path, journaled: true });
    expect(again.restored).toBe('current');
    expect(again.meta.get('b')).toBe('2');
    await again.close({ compact: 'never' });
  });
});
