import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GroupCommit, type GroupOp, type Outcome } from '../../node-core/ledger/group-commit.ts';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * The group commit's choice of transaction in an open write batch (issue #18): a group its hooks call
 * direct is applied straight into the batch (Store.groupTransaction), any other in an LMDB child
 * transaction of its own. Real LMDB files.
 */

interface Op extends GroupOp {
  key: string;
  direct: boolean;
}

describe('GroupCommit in a write batch', () => {
  let dir: string | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close({ compact: 'never' });
    store = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('applies a group its hooks call direct without a child transaction, any other in one', async () => {
    dir = tempDir('group-commit-');
    const s = (store = Store.open({
      path: join(dir, 'db'),
      journaled: true,
      checkpointMs: 60_000,
      batch: { maxMs: 60_000, idleMs: 60_000, minFreeBytes: 0 },
    }));
    const applied: string[][] = [];
    const group = new GroupCommit<Op>(s, {
      apply(ops): Outcome[] {
        applied.push(ops.map((o) => o.key));
        return ops.map((o) => {
          s.meta.putSync(o.key, 'v');
          return { value: o.key };
        });
      },
      // Journaled as the ledger's block groups are, so that no group waits for a checkpoint (whose
      // record is written in a child transaction of its own).
      journal: () => ({ durable: Promise.resolve(), committed() {}, abort() {} }),
      direct: (ops) => ops.every((o) => o.direct),
      committed() {},
      delivered() {},
      failed() {},
    });
    const child = vi.spyOn(s.root, 'childTransaction');
    const submit = (key: string, direct: boolean) =>
      new Promise<unknown>((resolve, reject) => group.enqueue({ key, direct, resolve, reject }));
    try {
      // One event-loop turn: one group, all direct.
      expect(await Promise.all([submit('a', true), submit('b', true)])).toEqual(['a', 'b']);
      expect(child).not.toHaveBeenCalled();
      // A group with one op that is not direct takes a child transaction.
      expect(await Promise.all([submit('c', true), submit('d', false)])).toEqual(['c', 'd']);
      expect(child).toHaveBeenCalledTimes(1);
      expect(applied).toEqual([
        ['a', 'b'],
        ['c', 'd'],
      ]);
      for (const k of ['a', 'b', 'c', 'd']) expect(s.meta.get(k)).toBe('v');
      expect(s.batchOpen).toBe(true); // all in the one batch
    } finally {
      child.mockRestore();
    }
  });
});
