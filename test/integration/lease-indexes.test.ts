import { describe, expect, it, vi } from 'vitest';
import { ArchiveSweep } from '../../node-core/leasing/archive-sweep.ts';
import { LeaseBook } from '../../node-core/leasing/lease-book.ts';
import type { LeaseRecord } from '../../node-core/leasing/records.ts';
import { DEFAULT_LEASE_TIMING } from '../../node-core/leasing/timing.ts';
import { prefixRange } from '../../node-core/store/key-range.ts';
import { tempStores } from '../helpers/temp-stores.ts';

const SECOND = 1_000_000_000n;
const T0 = 1_790_000_000n * SECOND;
const hex = (n: number, tag: string) => `${tag}${n.toString(16)}`.padStart(64, '0');

/** A running lease (accepted at `start`, not settled) of `duration` seconds. */
function running(n: number, start: bigint, duration: bigint): LeaseRecord {
  return {
    lease_hash: hex(n, 'a'),
    state: 'accepted',
    consumer: hex(n % 7, 'c'),
    provider: hex(n % 5, 'b'),
    vcpus: 1n,
    memory_mb: 1024n,
    disk_gb: 1n,
    duration,
    cost: 517n,
    stake: 0n,
    start_time: start,
    settled: false,
    renewal_count: 0,
    renewed_cost: 0n,
    renewal_emission: 0n,
    created_at: start - SECOND,
  };
}

/**
 * The lease index's entries for the periodic questions (issue #18). By expiry: the archive sweep
 * reads the running leases whose time has come, not every running lease, every 10 s; the entries
 * follow renewals, settles, removals and rollbacks (a before-image put back). By party and state: a
 * provider's watch reads its leases in one state, not all it ever had. A store from before either
 * is indexed at open.
 */
describe('lease indexes', () => {
  const temp = tempStores();

  it('finds the running leases expired before a time, soonest first, and follows every change', async () => {
    const { store } = temp.open();
    const book = new LeaseBook(store);
    const [a, b, c] = [running(1, T0, 60n), running(2, T0, 120n), running(3, T0, 180n)];
    const created: LeaseRecord = { ...running(4, 0n, 30n), state: 'created' };
    await store.transaction(() => [c, a, b, created].forEach((r) => book.put(r)));
    const at = (s: bigint) => book.expiredBefore(T0 + s * SECOND);
    expect(at(60n)).toEqual([]); // expiry 60 s: not before 60 s
    expect(at(61n)).toEqual([a.lease_hash]);
    expect(at(1_000n)).toEqual([a.lease_hash, b.lease_hash, c.lease_hash]);
    expect(book.expiredBefore(T0 + 1_000n * SECOND, 2)).toEqual([a.lease_hash, b.lease_hash]);

    // A renewal moves a; b settles; c is removed (a rollback of its lease block).
    await store.transaction(() => {
      book.put({ ...a, duration: 600n, renewal_count: 1 });
      book.put({ ...b, state: 'settled', settled: true });
      book.remove(c.lease_hash);
    });
    expect(at(1_000n)).toEqual([a.lease_hash]);
    expect(at(599n)).toEqual([]);
    // A rollback of the renewal puts the before-image back, and the expiry with it.
    await store.transaction(() => book.put(a));
    expect(at(61n)).toEqual([a.lease_hash]);
  });

  it('a store from before the index is indexed at open', async () => {
    const { store } = temp.open();
    const book = new LeaseBook(store);
    await store.transaction(() => [running(1, T0, 60n), running(2, T0, 30n)].forEach((r) => book.put(r)));
    // As an older version left it: no expiry entries, no mark.
    await store.transaction(() => {
      for (const key of [...store.leaseIndex.getKeys({ start: 'x:', end: 'x;' })])
        store.leaseIndex.removeSync(key);
      store.meta.removeSync('lease_expiry_index');
    });
    expect(book.expiredBefore(T0 + 3_600n * SECOND)).toEqual([]);
    // The next open (a restart) indexes them, once.
    expect(new LeaseBook(store).expiredBefore(T0 + 3_600n * SECOND)).toEqual([hex(2, 'a'), hex(1, 'a')]);
    expect(store.meta.get('lease_expiry_index')).toBe('1');
  });

  it('the archive sweep decodes no lease that is not due: 2 due among 1,000 running', async () => {
    const { store } = temp.open();
    const book = new LeaseBook(store);
    const timing = DEFAULT_LEASE_TIMING;
    const now = T0 + 7n * 24n * 3_600n * SECOND;
    const wait = timing.escrow_expiry_ns + timing.archive_gap_ns;
    await store.transaction(() => {
      for (let n = 0; n < 1_000; n++) book.put(running(n, now, 3_600n));
      // Expired long enough ago, and one a nanosecond short of it.
      book.put(running(1_000, now - wait - 3_600n * SECOND - 1n, 3_600n));
      book.put(running(1_001, now - wait - 3_600n * SECOND - 2n, 3_600n));
      book.put(running(1_002, now - wait - 3_600n * SECOND, 3_600n));
    });
    const archived: string[][] = [];
    const sweep = new ArchiveSweep({
      leases: book,
      archive: async (hashes) => (archived.push(hashes), hashes),
      now: () => now,
      timing: () => timing,
    });
    const reads = vi.spyOn(store.leases, 'get');
    const scans = vi.spyOn(store.leases, 'getRange');
    expect(await sweep.sweep()).toEqual([hex(1_001, 'a'), hex(1_000, 'a')]);
    expect(archived).toEqual([[hex(1_001, 'a'), hex(1_000, 'a')]]);
    expect(reads).not.toHaveBeenCalled();
    expect(scans).not.toHaveBeenCalled();
  });

  it("a party's leases in one state are read from their own entries, not from all its leases", async () => {
    const { store } = temp.open();
    const book = new LeaseBook(store);
    const provider = hex(1, 'b');
    const consumer = hex(1, 'c');
    const mine = (n: number, state: LeaseRecord['state']): LeaseRecord => ({
      ...running(n, T0, 60n),
      provider,
      consumer,
      state,
      settled: state === 'settled',
    });
    await store.transaction(() => {
      for (let n = 0; n < 1_000; n++) book.put(mine(n, 'settled'));
      book.put(mine(2_000, 'created'));
      book.put(mine(2_001, 'created'));
      book.put(mine(2_002, 'accepted'));
    });
    // The index ranges read (lmdb's getKeys and getCount read through getRange).
    const ranges = vi.spyOn(store.leaseIndex, 'getRange');
    const reads = vi.spyOn(store.leases, 'get');
    const hashes = (l: { leases: LeaseRecord[] }) => l.leases.map((r) => r.lease_hash);
    expect(hashes(book.list({ provider, state: 'created' }, 0, 100))).toEqual([
      hex(2_000, 'a'),
      hex(2_001, 'a'),
    ]);
    // The provider's created entries only (its 1,003 leases' entries are not read), and the two
    // records of the page.
    expect(ranges.mock.calls.map(([o]) => (o as { start: string }).start)).toEqual(
      Array(ranges.mock.calls.length).fill(`ps:${provider}:created:`),
    );
    expect(ranges).toHaveBeenCalled();
    expect(reads).toHaveBeenCalledTimes(2);
    // Counted and paged by LMDB: the total of every match, the page from its offset.
    const page = book.list({ provider }, 1_001, 10);
    expect(page.total).toBe(1_003);
    expect(hashes(page)).toEqual([hex(2_001, 'a'), hex(2_002, 'a')]);
    expect(book.list({ consumer, state: 'accepted' }, 0, 100).total).toBe(1);
    expect(book.list({ provider, consumer, state: 'settled' }, 0, 10).total).toBe(1_000);
    vi.restoreAllMocks();

    // A state change moves the lease; a removal takes it away.
    await store.transaction(() => {
      book.put({ ...mine(2_000, 'accepted'), start_time: T0 });
      book.remove(hex(2_001, 'a'));
    });
    expect(book.list({ provider, state: 'created' }, 0, 100).total).toBe(0);
    expect(hashes(book.list({ consumer, state: 'accepted' }, 0, 100))).toEqual([
      hex(2_000, 'a'),
      hex(2_002, 'a'),
    ]);

    // A store from before these entries gets them at open.
    await store.transaction(() => {
      for (const prefix of ['ps:', 'cs:'])
        for (const key of [...store.leaseIndex.getKeys(prefixRange(prefix))])
          store.leaseIndex.removeSync(key);
      store.meta.removeSync('lease_party_state_index');
    });
    expect(book.list({ provider, state: 'accepted' }, 0, 100).total).toBe(0);
    const reopened = new LeaseBook(store);
    expect(reopened.list({ provider, state: 'accepted' }, 0, 100).total).toBe(2);
    expect(reopened.list({ consumer, state: 'settled' }, 0, 100).total).toBe(1_000);
  });
});
