import { describe, expect, it } from 'vitest';
import { LeaseBook, type LeaseFilter } from '../../node-core/leasing/lease-book.ts';
import { LEASE_STATES, type LeaseRecord, type LeaseState } from '../../node-core/leasing/records.ts';
import { tempStores } from '../helpers/temp-stores.ts';
import { rng } from '../helpers/rng.ts';

/**
 * The lease table is indexed by provider, consumer and state, so the readers that ask for a party's
 * or a state's leases (a provider's tick, the archive sweep, the marketplace, filtered listings)
 * stop decoding every lease there is. Checked against the same filter written out over all
 * records, in a real store, through puts that move leases between states, removals (rollbacks)
 * and a store written before the index existed.
 */
describe('lease index', () => {
  const stores = tempStores();
  const open = (dir?: string) => {
    const o = stores.open(dir);
    return { ...o, book: new LeaseBook(o.store) };
  };

  const PARTIES = ['a', 'b', 'c', 'd'].map((x) => x.repeat(64));
  const lease = (
    hash: string,
    provider: string,
    consumer: string,
    state: LeaseState,
    stake: bigint,
  ): LeaseRecord => ({
    lease_hash: hash,
    state,
    consumer,
    provider,
    vcpus: 1n,
    memory_mb: 512n,
    disk_gb: 1n,
    duration: 60n,
    cost: 10n,
    stake,
    start_time: 0n,
    settled: false,
    renewal_count: 0,
    renewed_cost: 0n,
    renewal_emission: 0n,
    created_at: 1n,
  });

  /** What list must answer: the filter over every record, in hash order. */
  const expected = (all: Map<string, LeaseRecord>, f: LeaseFilter) =>
    [...all.values()]
      .filter(
        (r) =>
          (f.provider === undefined || r.provider === f.provider) &&
          (f.consumer === undefined || r.consumer === f.consumer) &&
          (f.state === undefined || r.state === f.state),
      )
      .sort((x, y) => (x.lease_hash < y.lease_hash ? -1 : 1));

  const filters = (): LeaseFilter[] => {
    const out: LeaseFilter[] = [];
    for (const provider of [undefined, ...PARTIES])
      for (const consumer of [undefined, ...PARTIES])
        for (const state of [undefined, ...LEASE_STATES]) out.push({ provider, consumer, state });
    return out;
  };

  const checkAll = (book: LeaseBook, all: Map<string, LeaseRecord>) => {
    for (const f of filters()) {
      const want = expected(all, f);
      for (const [offset, limit] of [
        [0, 1_000],
        [0, 3],
        [2, 5],
        [want.length, 10],
      ] as const) {
        const got = book.list(f, offset, limit);
        expect(got.total, JSON.stringify(f)).toBe(want.length);
        expect(got.leases).toEqual(want.slice(offset, offset + limit));
      }
    }
    const stake = [...all.values()].filter((r) => r.state === 'accepted').reduce((s, r) => s + r.stake, 0n);
    expect(book.lockedStake()).toBe(stake);
  };

  it('answers every filter as a pass over all leases would, through state changes and removals', () => {
    for (const seed of [1, 2, 3]) {
      const { book } = open();
      const next = rng(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
      const all = new Map<string, LeaseRecord>();
      for (let i = 0; i < 400; i++) {
        const roll = next();
        const hashes = [...all.keys()];
        if (roll < 0.5 || hashes.length === 0) {
          const hash = Math.floor(next() * 2 ** 52)
            .toString(16)
            .padStart(64, '0');
          const r = lease(hash, pick(PARTIES), pick(PARTIES), 'created', BigInt(Math.floor(next() * 1000)));
          book.put(r);
          all.set(hash, r);
        } else if (roll < 0.9) {
          const r = { ...all.get(pick(hashes))!, state: pick(LEASE_STATES) };
          book.put(r);
          all.set(r.lease_hash, r);
        } else {
          const hash = pick(hashes);
          book.remove(hash);
          all.delete(hash);
        }
      }
      checkAll(book, all);
    }
  });

  it('indexes the leases of a store written before the index, once, at open', async () => {
    const { dir, store } = open();
    const all = new Map<string, LeaseRecord>();
    // Written as the store held them before the index: records only, no index, no mark.
    for (let i = 0; i < 60; i++) {
      const hash = (i * 7919).toString(16).padStart(64, '0');
      const r = lease(hash, PARTIES[i % 4]!, PARTIES[(i >> 2) % 4]!, LEASE_STATES[i % 6]!, BigInt(i));
      all.set(hash, r);
    }
    const book = new LeaseBook(store);
    for (const r of all.values()) book.put(r);
    await store.root.transaction(() => {
      store.leaseIndex.clearSync();
      store.meta.removeSync('lease_index');
    });
    expect(book.list({ provider: PARTIES[0] }, 0, 100).total).toBe(0);
    await stores.close(store);
    const reopened = open(dir);
    checkAll(reopened.book, all);
    expect(reopened.store.meta.get('lease_index')).toBe('1');
  });
});
