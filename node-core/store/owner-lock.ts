import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * One process at a time for a journaled store (issue #18): its journal files and checkpoints are
 * written by one process, and a start puts the data file's meta pages back to the last checkpoint
 * (store/checkpoint.ts), which under another live process would tear its store apart. A file next
 * to the data file holds the owner's process id and the machine's boot id (Linux); one left by a
 * process that is gone (a crash, a kill -9) or by an earlier boot (its id may now be another
 * program's) is taken over.
 */
export class StoreInUseError extends Error {
  readonly code = 'store_in_use';
  readonly pid: number;
  constructor(path: string, pid: number) {
    super(`the store ${path} is in use by process ${pid}`);
    this.name = 'StoreInUseError';
    this.pid = pid;
  }
}

export function ownerLockPath(dataFile: string): string {
  return `${dataFile}-owner`;
}

/** This boot of the machine (Linux); '' where the system does not say. */
export function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, owned by someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the store for this process; throws StoreInUseError while another live process has it. */
export function takeOwnerLock(dataFile: string): () => void {
  const path = ownerLockPath(dataFile);
  // A new store's directory may not be there yet (LMDB makes it as it opens).
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid} ${bootId()}\n`);
      } finally {
        closeSync(fd);
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(path, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let pid = Number.NaN;
    let boot = '';
    try {
      const [p, b] = readFileSync(path, 'utf8').trim().split(' ');
      pid = Number(p);
      boot = b ?? '';
    } catch {
      // removed meanwhile: try again
    }
    const sameBoot = boot === '' || bootId() === '' || boot === bootId();
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && sameBoot && alive(pid))
      throw new StoreInUseError(dataFile, pid);
    rmSync(path, { force: true }); // left by a process that is gone
  }
  throw new Error(`could not take the store ${dataFile} (${path} keeps coming back)`);
}
