import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRecordKey } from '../../node-core/ledger/codec.ts';
import { decodeCounters } from '../../node-core/ledger/counters.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { randomSeed } from '../../node-core/protocol/keys.ts';
import { Store } from '../../node-core/store/store.ts';
import { Account, http, kitOf, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/** The addresses in the account index, in order. */
function indexed(store: Store): string[] {
  return [...store.accountIndex.getKeys()].map((k) => bytesToHex(k));
}

/** The addresses that have an account record, read from the accounts table itself. */
function records(store: Store): string[] {
  return [...store.accounts.getKeys()]
    .filter((k) => isRecordKey(k))
    .map((k) => bytesToHex(k.subarray(0, 32)));
}

/**
 * The account index (store.ts accountIndex) beside the accounts table: what walks over the accounts
 * read instead of stepping over every address that was ever sent to. Built at start for a store
 * from before it, or one a version without it wrote to; kept by every block that opens an account.
 */
describe('account index', () => {
  let t: TestNode | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('holds every account a block opened, and no address that only has sends pending to it', async () => {
    t = await startTestNode();
    const kit = await kitOf(t);
    const a = new Account(kit);
    const b = new Account(kit);
    await a.claim(10n * XE);
    const s = await a.send(b.address, XE);
    await b.receive(s);
    const stranger = bytesToHex(randomSeed());
    await a.send(stranger, XE);
    const store = t.node.store;
    await store.durable();
    expect(indexed(store)).toEqual(records(store));
    expect(indexed(store)).toEqual(expect.arrayContaining([a.address, b.address]));
    expect(indexed(store)).not.toContain(stranger);
    expect((store.accountIndex.getStats() as { entryCount: number }).entryCount).toBe(
      t.node.ledger.counters.current.accounts,
    );
  });

  it('is built at start for a store a version without it wrote, and kept as it is at a later start', async () => {
    dir = tempDir();
    t = await startTestNode({ dataDir: dir });
    const kit = await kitOf(t);
    const accounts = [new Account(kit), new Account(kit), new Account(kit)];
    for (const acct of accounts) await acct.claim(XE);
    await accounts[0]!.send(bytesToHex(randomSeed()), 1n); // an address with a pending send only
    await t.stop({ keepData: true });
    t = undefined;

    // What an older version leaves: an index missing accounts it opened and holding one it undid,
    // and a counters record without the index's flag (it rewrote the record in its own format).
    const path = join(dir, 'ledger.lmdb');
    let store = Store.open({ path, journaled: true });
    const want = records(store);
    expect(want).toEqual(expect.arrayContaining(accounts.map((x) => x.address)));
    const undone = bytesToHex(randomSeed());
    await store.root.transaction(() => {
      store.accountIndex.removeSync(hexToBytes(accounts[1]!.address));
      store.accountIndex.putSync(hexToBytes(undone), new Uint8Array(0));
      const bytes = store.ledgerMeta.get('counters')!;
      store.ledgerMeta.putSync('counters', bytes.subarray(0, bytes.length - 1));
    });
    expect(decodeCounters(store.ledgerMeta.get('counters')).indexed).toBe(false);
    await store.close();

    t = await startTestNode({ dataDir: dir });
    expect(indexed(t.node.store)).toEqual(want);
    expect(t.node.ledger.counters.current.indexed).toBe(true);
    const listed = await http(t.node.url, 'GET', '/accounts?limit=100');
    expect((listed.body as { address: string }[]).map((x) => x.address)).toEqual(want);
    // A frontiers walk (what a peer catching up asks for) finds them all through the index.
    expect([...t.node.ledger.allAccountHeads()].map(([address]) => address)).toEqual(want);
    await t.stop({ keepData: true });
    t = undefined;

    // With the flag in place the index is trusted as it is: a start does not walk the table again.
    store = Store.open({ path, journaled: true });
    expect(decodeCounters(store.ledgerMeta.get('counters')).indexed).toBe(true);
    await store.root.transaction(() => store.accountIndex.putSync(hexToBytes(undone), new Uint8Array(0)));
    await store.close();
    t = await startTestNode({ dataDir: dir });
    expect(indexed(t.node.store)).toEqual([...want, undone].sort());
  });
});
