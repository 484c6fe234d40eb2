import { describe, expect, it, vi } from 'vitest';
import { type ReputationEvent, ReputationBook } from '../../node-core/leasing/reputation.ts';
import { tempStores } from '../helpers/temp-stores.ts';

/**
 * The reputation book on a real store: aggregates are summed from the entries once and kept until a
 * block writes or removes an entry of that account (issue #18's audit: an aggregate summed every
 * entry on every ask); what it answers is always what a fresh sum of the store gives.
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
    const reads = vi.spyOn(store.reputation, 'getRange');
    for (let i = 0; i < 5; i++) expect(book.get(P)).toEqual(first);
    expect(reads).not.toHaveBeenCalled();
    reads.mockRestore();
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
  });
});
