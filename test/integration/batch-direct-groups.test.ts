import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import { Account, http, kitOf, submit } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Groups of plain blocks go straight into an open write batch, without an LMDB child transaction of
 * their own (Store.groupTransaction, issue #18). A refused block changes nothing; a defect thrown
 * after a group's first write cannot be undone alone, so it gives up the whole batch: the node then
 * takes no write, saying why, and a restart replays every acknowledged block from the journal.
 */
describe('plain block groups in an open write batch', () => {
  let t: TestNode | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  // A batch that ends only when something waits for a checkpoint; no certificate of the node's own
  // (its store write, at a time of its own, would wait for one).
  const opts = {
    writeBatch: { minFreeBytes: 0, maxMs: 3_600_000, idleMs: 3_600_000 },
    ownCertificate: false,
  } as const;

  it('are applied without a child transaction; a refused block in one changes nothing', async () => {
    t = await startTestNode(opts);
    const store = t.node.store;
    const kit = await kitOf(t);
    const a = new Account(kit);
    await a.claim(100n);
    await store.durable();
    // Where each block's hash entry was written: inside an LMDB child transaction or not, with a
    // batch open or not.
    let inChild = 0;
    const realChild = store.root.childTransaction.bind(store.root) as <T>(fn: () => T) => Promise<T>;
    const child = vi.spyOn(store.root, 'childTransaction').mockImplementation(<T>(fn: () => T) =>
      realChild(() => {
        inChild += 1;
        try {
          return fn();
        } finally {
          inChild -= 1;
        }
      }),
    );
    const writes: { inChild: boolean; batchOpen: boolean }[] = [];
    const hashes = store.hashes;
    const put = hashes.putSync.bind(hashes);
    const hashPut = vi.spyOn(hashes, 'putSync').mockImplementation((k, v) => {
      writes.push({ inChild: inChild > 0, batchOpen: store.batchOpen });
      return put(k, v);
    });
    try {
      for (let i = 0; i < 5; i++) await a.claim(1n);
      expect(writes).toHaveLength(5);
      expect(writes).toEqual(Array(5).fill({ inChild: false, batchOpen: true }));
      // A block whose balance is wrong is refused by its checks, before any write.
      const refused = await submit(kit, a.claimBlock(1n, a.bal('XE') + 8n));
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ retryable: false });
      expect(t.node.store.batchOpen).toBe(true);
      const balance = await http(kit.url, 'GET', `/accounts/${a.address}/balance`);
      expect(balance.body).toEqual({ XE: '105' });
      await a.claim(1n); // the batch goes on
      expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '106' });
      expect(writes).toHaveLength(6);
    } finally {
      hashPut.mockRestore();
      child.mockRestore();
    }
  }, 60_000);

  it('a defect after a group’s first write gives up the batch; a restart replays every acknowledged block', async () => {
    t = await startTestNode(opts);
    const kit = await kitOf(t);
    const accounts = [0, 1].map(() => new Account(kit));
    const acknowledged: Block[] = [];
    for (const a of accounts) acknowledged.push(await a.claim(100n));
    await t.node.store.durable(); // the accounts are in LMDB; what follows is in one open batch
    for (const a of accounts) for (let i = 0; i < 10; i++) acknowledged.push(await a.claim(1n));
    expect(t.node.store.batchOpen).toBe(true);

    // A defect: the hash index's write throws, after the block's account record was written.
    const hashes = t.node.store.hashes;
    const put = hashes.putSync.bind(hashes);
    const spy = vi.spyOn(hashes, 'putSync').mockImplementationOnce(() => {
      throw new Error('injected defect');
    });
    const lost = accounts[0]!.claimBlock(1n);
    const failed = await submit(kit, lost);
    expect(failed.status).toBe(500);
    spy.mockImplementation(put);

    // LMDB gave the batch up: the node takes no write now, saying why.
    expect(t.node.store.batchOpen).toBe(false);
    const r = await submit(kit, accounts[1]!.claimBlock(1n));
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ retryable: true });
    expect((r.body as { error: string }).error).toMatch(
      /could not commit \(injected defect\).*restart the node: nothing acknowledged is lost/,
    );
    spy.mockRestore();

    // A restart: the journal puts every acknowledged block back, and nothing of the failed one.
    const dataDir = t.dataDir;
    await t.stop({ keepData: true });
    t = await startTestNode({ dataDir });
    for (const b of acknowledged)
      expect((await http(t.node.url, 'GET', `/blocks/${b.hash}`)).status, b.hash).toBe(200);
    expect((await http(t.node.url, 'GET', `/blocks/${lost.hash!}`)).status).toBe(404);
    for (const a of accounts)
      expect((await http(t.node.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '110' });
  }, 60_000);
});
