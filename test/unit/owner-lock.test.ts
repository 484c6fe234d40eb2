import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootId, ownerLockPath, StoreInUseError, takeOwnerLock } from '../../node-core/store/owner-lock.ts';
import { tempDir } from '../helpers/node.ts';

/** The owner lock of a journaled store (store/owner-lock.ts), with real files and process ids. */
describe('store owner lock', () => {
  let dir: string;
  let data: string;
  beforeEach(() => {
    dir = tempDir('owner-lock-');
    data = join(dir, 'ledger.lmdb');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is taken with this process id and boot, and released', () => {
    const release = takeOwnerLock(data);
    expect(readFileSync(ownerLockPath(data), 'utf8')).toBe(`${process.pid} ${bootId()}\n`);
    release();
    expect(existsSync(ownerLockPath(data))).toBe(false);
  });

  it('is refused while a live process of this boot holds it', () => {
    // The test runner's parent process is alive for the whole test.
    writeFileSync(ownerLockPath(data), `${process.ppid} ${bootId()}\n`);
    let thrown: unknown;
    try {
      takeOwnerLock(data);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(StoreInUseError);
    expect((thrown as StoreInUseError).pid).toBe(process.ppid);
    expect((thrown as StoreInUseError).code).toBe('store_in_use');
  });

  it('takes over one left by a process that is gone, or by an earlier boot', () => {
    writeFileSync(ownerLockPath(data), `2147483646 ${bootId()}\n`); // no such process
    takeOwnerLock(data)();
    if (bootId() === '') {
      console.warn('no boot id on this system: the earlier-boot case is not checked');
      return;
    }
    // A live process id, written in another boot: that id is some other program's now.
    writeFileSync(ownerLockPath(data), `${process.ppid} 00000000-0000-0000-0000-000000000000\n`);
    const release = takeOwnerLock(data);
    expect(readFileSync(ownerLockPath(data), 'utf8')).toBe(`${process.pid} ${bootId()}\n`);
    release();
  });
});
