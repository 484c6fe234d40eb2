import { describe, expect, it } from 'vitest';
import { hashKey } from '../../node-core/ledger/codec.ts';
import { LeaseBook } from '../../node-core/leasing/lease-book.ts';
import { type LeaseRecord, type LeaseRenewal, renewalEmission } from '../../node-core/leasing/records.ts';
import { leaseTotalEmission } from '../../node-core/leasing/rules/settle.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { tempStores } from '../helpers/temp-stores.ts';

/**
 * A lease held by a renewal every minute has thousands of renewals. They were kept in the lease
 * record (read and rewritten whole with every lease block, read by every listing) and copied into
 * every renewal's undo entry (a quadratic amount of disk: about 10 GB in a week). Now each is an
 * entry of its own beside the record, which carries their count and the sums a settle needs; a
 * rollback puts the record back and the renewals past its count go with it. Checked in real stores,
 * stores written the old way included.
 */
describe('lease renewals', () => {
  const stores = tempStores();
  const hex = (n: number, tag: number) =>
    (tag.toString(16).padStart(8, '0') + n.toString(16).padStart(8, '0')).padEnd(64, '0');
  const renewal = (k: number): LeaseRenewal => ({
    renew_hash: hex(k, 0xfeed),
    duration: 60n,
    cost: 1_000n + BigInt(k),
    start_time: 1_700_000_000_000_000_000n + BigInt(k) * 60_000_000_000n,
    locked_r: 5n + BigInt(k % 3),
    locked_payout_cap: 9n,
    locked_twap_milli: 1_000n,
  });
  const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
  /** The record after `k` renewals, as the renew rule leaves it. */
  const lease = (hash: string, k: number): LeaseRecord => {
    const rs = Array.from({ length: k }, (_, i) => renewal(i));
    return {
      lease_hash: hash,
      state: 'accepted',
      consumer: 'c'.repeat(64),
      provider: 'b'.repeat(64),
      vcpus: 2n,
      memory_mb: 2048n,
      disk_gb: 10n,
      duration: 60n * BigInt(k + 1),
      cost: 1_000n + sum(rs.map((r) => r.cost)),
      stake: 100n,
      start_time: 1_700_000_000_000_000_000n,
      settled: false,
      locked_r: 5n,
      locked_payout_cap: 9n,
      locked_twap_milli: 1_000n,
      renewal_count: k,
      renewed_cost: sum(rs.map((r) => r.cost)),
      renewal_emission: sum(rs.map(renewalEmission)),
      created_at: 1_699_999_999_000_000_000n,
    };
  };

  it('keeps the record and each undo entry the same size however many renewals, and a rollback takes them back one by one', () => {
    const { store } = stores.open();
    const book = new LeaseBook(store);
    const hash = hex(1, 0xaaaa);
    const R = 300;
    book.put(lease(hash, 0));
    // Renewal k's block, as ledger-leasing writes it: the record, the renewal, the undo entry.
    for (let k = 0; k < R; k++) {
      book.putUndo(hex(k, 0xb10c), { lease_hash: hash, before: lease(hash, k), supply: [] });
      book.put(lease(hash, k + 1));
      book.putRenewal(hash, k, renewal(k));
    }
    const undoSizes = Array.from(
      { length: R },
      (_, k) => String(store.leaseUndo.get(hashKey(hex(k, 0xb10c)))).length,
    );
    // A copy of 300 renewals was about 60 KB; what differs is the digits of the counts and sums.
    expect(Math.max(...undoSizes) - Math.min(...undoSizes)).toBeLessThan(40);
    expect(Math.max(...undoSizes)).toBeLessThan(1_000);
    expect(String(store.leases.get(hash)).length).toBeLessThan(1_000);
    expect(book.get(hash)).toEqual(lease(hash, R));
    expect(book.renewalsOf(hash)).toEqual(Array.from({ length: R }, (_, k) => renewal(k)));

    // Rolled back newest first, as the ledger does: the record and the renewals as they were.
    for (let k = R - 1; k >= 0; k--) {
      const u = book.takeUndo(hex(k, 0xb10c));
      expect(u?.before).toEqual(lease(hash, k));
      book.put(u!.before!);
      if (k % 50 === 0)
        expect(book.renewalsOf(hash)).toEqual(Array.from({ length: k }, (_, i) => renewal(i)));
    }
    expect(book.renewalsOf(hash)).toEqual([]);
    // A lease removed (its lease block undone) leaves no renewals behind.
    book.put(lease(hash, 1));
    book.putRenewal(hash, 0, renewal(0));
    book.remove(hash);
    expect(book.renewalsOf(hash)).toEqual([]);
  });

  it('reads a page of renewals by index, not the whole list', () => {
    const { store } = stores.open();
    const book = new LeaseBook(store);
    const [hash, other] = [hex(3, 0xaaaa), hex(4, 0xaaaa)];
    const R = 120;
    book.put(lease(hash, R));
    for (let k = 0; k < R; k++) book.putRenewal(hash, k, renewal(k));
    // A neighbour's renewals, whose keys sort right after: never part of the page.
    book.put(lease(other, 3));
    for (let k = 0; k < 3; k++) book.putRenewal(other, k, renewal(1_000 + k));
    const all = Array.from({ length: R }, (_, k) => renewal(k));
    expect(book.renewalsOf(hash)).toEqual(all);
    expect(book.renewalsOf(hash, 0, 20)).toEqual(all.slice(0, 20));
    expect(book.renewalsOf(hash, 100, 20)).toEqual(all.slice(100));
    expect(book.renewalsOf(hash, 110, 50)).toEqual(all.slice(110));
    expect(book.renewalsOf(hash, 99, 1)).toEqual([renewal(99)]);
    expect(book.renewalsOf(hash, R, 10)).toEqual([]);
    expect(book.renewalsOf(hash, 5, 0)).toEqual([]);
    expect(book.renewalsOf(other, 1)).toEqual([renewal(1_001), renewal(1_002)]);
  });

  it('moves the renewals of a store that kept them in the records, once, at open; its undo entries still roll back', async () => {
    const { dir, store } = stores.open();
    new LeaseBook(store); // a store of today: marked as moved
    const hash = hex(2, 0xaaaa);
    const R = 40;
    /** A record as it was stored with its renewals in it. */
    const legacy = (k: number) => {
      const { renewal_count: _c, renewed_cost: _s, renewal_emission: _e, ...rest } = lease(hash, k);
      return { ...rest, renewals: Array.from({ length: k }, (_, i) => renewal(i)) };
    };
    await store.root.transaction(() => {
      store.leases.putSync(hash, stringifyJson(legacy(R)));
      // Renewal R-1's undo entry as it was written: the before-image with every renewal before it.
      store.leaseUndo.putSync(
        hashKey(hex(R - 1, 0xb10c)),
        stringifyJson({ lease_hash: hash, before: legacy(R - 1), supply: [] }) as never,
      );
      store.meta.removeSync('lease_renewals');
    });
    await stores.close(store);
    const reopened = stores.open(dir);
    const book = new LeaseBook(reopened.store);
    expect(book.get(hash)).toEqual(lease(hash, R));
    expect(String(reopened.store.leases.get(hash))).not.toContain('renewals');
    expect(book.renewalsOf(hash)).toEqual(Array.from({ length: R }, (_, k) => renewal(k)));
    const u = book.takeUndo(hex(R - 1, 0xb10c));
    expect(u?.before).toEqual(lease(hash, R - 1));
    book.put(u!.before!);
    expect(book.renewalsOf(hash)).toHaveLength(R - 1);
    expect(reopened.store.meta.get('lease_renewals')).toBe('1');
  });

  it('a stored renewal whose emission overflows leaves its lease unsettleable, as it was, and the store opening', async () => {
    const { dir, store } = stores.open();
    new LeaseBook(store);
    const hash = hex(3, 0xaaaa);
    const huge = { ...renewal(0), cost: 2n ** 62n, locked_r: 1_000_000n };
    const { renewal_count: _c, renewed_cost: _s, renewal_emission: _e, ...rest } = lease(hash, 0);
    await store.root.transaction(() => {
      store.leases.putSync(hash, stringifyJson({ ...rest, cost: rest.cost + huge.cost, renewals: [huge] }));
      store.meta.removeSync('lease_renewals');
    });
    await stores.close(store);
    const book = new LeaseBook(stores.open(dir).store);
    const r = book.get(hash)!;
    expect(r.renewal_count).toBe(1);
    expect(() => leaseTotalEmission(r)).toThrow(/overflows/);
  });
});
