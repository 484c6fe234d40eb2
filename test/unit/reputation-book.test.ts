import { describe, expect, it, vi } from 'vitest';
import { type ReputationEvent, ReputationBook } from '../../node-core/leasing/reputation.ts';
import { tempStores } from '../helpers/temp-stores.ts';

/**
 * The reputation book on a real store: each account's aggregate is stored beside its entries and kept
 * in memory until a block writes or removes an entry of that account (issue #18's audit: an aggregate
 * summed every entry on every ask, a page of the list walked every entry); what it answers is always
 * what a fresh sum of the entries gives.
 */
const stores = tempStores();
const P = 'aa'.repeat(32);
const C = 'cc'.repeat(32);
const D = 'dd'.repeat(32);

function events(at: bigint, secs: bigint): ReputationEvent[] {
  return [
    { address: P, at, counts: { leases_settled_as_provider: 1n, lease_secs_settled_as_provider: secs } },
    { address: C, at, counts: { leases_settled_as_consumer: 1n, lease_secs_settled_as_consumer: secs } },
  ];
}

describe('ReputationBook', () => {
  it('keeps aggregates between blocks, and a write or an undo of an entry sums that account again', async () => {
    const { store } = stores.open();
    const book = new ReputationBook(store);
    await store.transaction(() => {
      for (let i = 0; i < 50; i++) book.record(`${i}`.padStart(64, '0'), events(BigInt(100 + i), 60n));
    });
    const first = book.get(P)!;
    expect(first.leases_settled_as_provider).toBe(50n);
    expect(first.lease_secs_settled_as_provider).toBe(3000n);
    // Asked again, it reads nothing from the store.
    const reads = [vi.spyOn(store.reputation, 'getRange'), vi.spyOn(store.reputation, 'get')];
    for (let i = 0; i < 5; i++) expect(book.get(P)).toEqual(first);
    for (const r of reads) expect(r).not.toHaveBeenCalled();
    for (const r of reads) r.mockRestore();
    // What a caller does with an answer does not change the next.
    book.get(P)!.leases_settled_as_provider = 0n;
    expect(book.get(P)!.leases_settled_as_provider).toBe(50n);

    await store.transaction(() => void book.record('ff'.repeat(32), events(10n, 7n)));
    const after = book.get(P)!;
    expect(after.leases_settled_as_provider).toBe(51n);
    expect(after.first_activity_at).toBe(10n);
    expect(new ReputationBook(store).get(P)).toEqual(after);

    await store.transaction(() => book.remove('ff'.repeat(32), [P, C]));
    expect(book.get(P)).toEqual(first);
    expect(book.get(C)).toEqual(new ReputationBook(store).get(C));
    expect(book.get(D)).toBeUndefined();
  });

  it('lists a page of accounts in address order with the total, as summing every entry did', async () => {
    const { store } = stores.open();
    const book = new ReputationBook(store);
    const parties = Array.from({ length: 7 }, (_, i) => `${i + 1}`.repeat(64));
    await store.transaction(() => {
      parties.forEach((address, i) => {
        for (let k = 0; k <= i; k++)
          book.record(`${i}${k}`.padStart(64, '0'), [
            { address, at: BigInt(k), counts: { leases_accepted_as_provider: 1n } },
          ]);
      });
    });
    const { total, entries } = book.list(2, 3);
    expect(total).toBe(7);
    expect(entries.map(([a]) => a)).toEqual(parties.slice(2, 5));
    expect(entries.map(([, r]) => r.leases_accepted_as_provider)).toEqual([3n, 4n, 5n]);
    expect(book.list(6, 10).entries.map(([a]) => a)).toEqual([parties[6]]);
    expect(book.list(7, 10)).toEqual({ total: 7, entries: [] });

    // An account whose only entry is undone leaves the list and the total.
    await store.transaction(() => book.remove('00'.padStart(64, '0'), [parties[0]!]));
    expect(book.get(parties[0]!)).toBeUndefined();
    expect(book.list(0, 2)).toEqual({
      total: 6,
      entries: [parties[1], parties[2]].map((a) => [a, book.get(a!)]),
    });
  });

  it('reads a page of the list from the stored aggregates, not from every entry', async () => {
    const { store } = stores.open();
    const book = new ReputationBook(store);
    await store.transaction(() => {
      for (let i = 0; i < 300; i++) book.record(`${i}`.padStart(64, '0'), events(BigInt(i), 60n));
    });
    const walked = vi.spyOn(store.reputation, 'getRange');
    const { total, entries } = book.list(1, 1);
    expect({ total, accounts: entries.map(([a]) => a) }).toEqual({ total: 2, accounts: [C] });
    expect(entries[0]![1].leases_settled_as_consumer).toBe(300n);
    // One range, of the page's one key, not of the 600 entries (read again here to count it).
    expect(walked).toHaveBeenCalledTimes(1);
    expect([...(walked.mock.results[0]!.value as Iterable<unknown>)]).toHaveLength(1);
    walked.mockRestore();
  });

  it('sums the aggregates of a store from before them once, when opened', async () => {
    const { store, dir } = stores.open();
    const book = new ReputationBook(store);
    await store.transaction(() => {
      for (let i = 0; i < 40; i++) book.record(`${i}`.padStart(64, '0'), events(BigInt(1000 - i), 60n));
      book.record('ee'.repeat(32), [{ address: D, at: 5n, counts: { leases_cancelled_as_consumer: 1n } }]);
    });
    const expected = { p: book.get(P), c: book.get(C), d: book.get(D), list: book.list(0, 10) };
    // The store as a version before the aggregates left it: entries only, no mark.
    await store.transaction(() => {
      for (const key of [...store.reputation.getKeys({ start: '~' })]) store.reputation.removeSync(key);
      store.meta.removeSync('reputation_aggregates');
    });
    await stores.close(store);
    const { store: again } = stores.open(dir);
    const reopened = new ReputationBook(again);
    expect({
      p: reopened.get(P),
      c: reopened.get(C),
      d: reopened.get(D),
      list: reopened.list(0, 10),
    }).toEqual(expected);
    expect(expected.list.total).toBe(3);
    expect(expected.p!.first_activity_at).toBe(961n);
  });
});
