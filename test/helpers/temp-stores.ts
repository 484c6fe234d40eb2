import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from './node.ts';

/**
 * Real stores in temporary folders for the tests of one file: `open()` makes a new one, `open(dir)`
 * opens one again (a restart), `close(store)` closes one within a test; whatever is still open is
 * closed, and every folder removed, after each test.
 */
export function tempStores(): {
  open(dir?: string): { dir: string; store: Store };
  close(store: Store): Promise<void>;
} {
  const dirs: string[] = [];
  const open = new Set<Store>();
  afterEach(async () => {
    for (const s of open) await s.close();
    open.clear();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    open(dir) {
      const d = dir ?? tempDir();
      if (!dir) dirs.push(d);
      const store = Store.open({ path: join(d, 'store.lmdb') });
      open.add(store);
      return { dir: d, store };
    },
    async close(store) {
      open.delete(store);
      await store.close();
    },
  };
}
