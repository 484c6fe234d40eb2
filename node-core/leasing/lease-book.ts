import { prefixRange } from '../store/key-range.ts';
import type { Store } from '../store/store.ts';
import { hashKey } from '../ledger/codec.ts';
import {
  decodeLease,
  decodeLeaseUndo,
  decodeRenewal,
  encodeLease,
  encodeLeaseUndo,
  encodeRenewal,
  type LeaseRecord,
  type LeaseRenewal,
  type LeaseState,
  type LeaseUndo,
} from './records.ts';
import { leaseExpiry } from './timing.ts';

export interface LeaseFilter {
  consumer?: string;
  provider?: string;
  state?: LeaseState;
}

/** Marks a store whose lease index was built (stores from before it have leases and no index). */
const INDEX_META = 'lease_index';
/** Marks a store whose renewals were moved out of the lease records into their own entries. */
const RENEWALS_META = 'lease_renewals';
/** Marks a store whose running leases are indexed by expiry. */
const EXPIRY_META = 'lease_expiry_index';
/** Marks a store whose leases are indexed by party and state together. */
const PARTY_STATE_META = 'lease_party_state_index';

const renewalKey = (leaseHash: string, index: number) => `${leaseHash}:${String(index).padStart(10, '0')}`;

const byProvider = (provider: string) => `p:${provider}:`;
const byConsumer = (consumer: string) => `c:${consumer}:`;
const byState = (state: LeaseState) => `s:${state}:`;
/**
 * A party's leases in one state: a provider's watch asks for its `created` and `accepted` ones every
 * few seconds, which by the party's entries alone meant reading all its leases ever (100,000 took
 * 76-83 ms a question).
 */
const byProviderState = (provider: string, state: LeaseState) => `ps:${provider}:${state}:`;
const byConsumerState = (consumer: string, state: LeaseState) => `cs:${consumer}:${state}:`;
/**
 * A running lease (accepted, not settled) by its expiry (ns, 20 digits): the archive sweep reads the
 * ones whose time has come, not every running lease (decoding 10,000 of them held the node's thread
 * 80-98 ms every 10 s). Moves with a renewal; goes when the lease stops running.
 */
const EXPIRY = 'x:';
const byExpiry = (r: LeaseRecord): string | undefined =>
  r.state === 'accepted' && !r.settled
    ? `${EXPIRY}${leaseExpiry(r.start_time, r.duration).toString().padStart(20, '0')}:${r.lease_hash}`
    : undefined;

/**
 * Lease records and the undo entries of lease-family blocks, in the store. Every write happens in
 * the transaction of the block that causes it, so a lease is exactly as durable as its blocks, and a
 * rolled-back block puts the lease back exactly as it was (its undo entry holds the before-image).
 *
 * Leases are never deleted once final (terminal ones stay for their history), so a network's table
 * only grows. Its index (by provider, by consumer, by state, by party and state together, and the
 * running ones by expiry) lets a provider's tick, the archive sweep, the marketplace and filtered
 * listings read the leases they ask for instead of decoding every lease there is, or every lease of
 * a party (issue #18).
 */
export class LeaseBook {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
    if (store.meta.get(INDEX_META) === undefined) this.buildIndex();
    if (store.meta.get(RENEWALS_META) === undefined) this.moveRenewals();
    if (store.meta.get(EXPIRY_META) === undefined) this.buildExpiryIndex();
    if (store.meta.get(PARTY_STATE_META) === undefined) this.buildPartyStateIndex();
  }

  /** Indexes by party and state the leases of a store from before that index: once, in one transaction. */
  private buildPartyStateIndex(): void {
    const idx = this.store.leaseIndex;
    this.store.root.transactionSync(() => {
      // The party entries hold each lease's state.
      for (const [party, entry] of [
        ['p:', byProviderState],
        ['c:', byConsumerState],
      ] as const) {
        for (const { key, value } of [...idx.getRange(prefixRange(party))]) {
          const [, who, hash] = key.split(':') as [string, string, string];
          idx.putSync(entry(who, value as LeaseState) + hash, '');
        }
      }
      this.store.meta.putSync(PARTY_STATE_META, '1');
    });
  }

  /** Indexes the running leases of a store from before the expiry index: once, in one transaction. */
  private buildExpiryIndex(): void {
    this.store.root.transactionSync(() => {
      for (const hash of [...this.matching({ state: 'accepted' })]) {
        const key = byExpiry(this.get(hash)!);
        if (key !== undefined) this.store.leaseIndex.putSync(key, '');
      }
      this.store.meta.putSync(EXPIRY_META, '1');
    });
  }

  /**
   * Running leases (accepted, not settled) that expired before `t` (ns), soonest first, at most
   * `limit`: what the archive sweep asks with `t` = now − escrow expiry − archive gap.
   */
  expiredBefore(t: bigint, limit = Number.MAX_SAFE_INTEGER): string[] {
    if (t <= 0n) return [];
    const out: string[] = [];
    for (const key of this.store.leaseIndex.getKeys({
      start: EXPIRY,
      end: `${EXPIRY}${t.toString().padStart(20, '0')}`,
      limit,
    }))
      out.push(key.slice(key.lastIndexOf(':') + 1));
    return out;
  }

  /**
   * Moves the renewals of a store written while they were kept in the lease records into their own
   * entries, each record rewritten with their count and sums: once, in one transaction.
   */
  private moveRenewals(): void {
    this.store.root.transactionSync(() => {
      for (const { key, value } of this.store.leases.getRange({})) {
        let legacy: LeaseRenewal[] | undefined;
        const r = decodeLease(value, (renewals) => (legacy = renewals));
        if (legacy === undefined) continue;
        legacy.forEach((x, i) => this.putRenewal(key, i, x));
        this.store.leases.putSync(key, encodeLease(r));
      }
      this.store.meta.putSync(RENEWALS_META, '1');
    });
  }

  /** The `index`th renewal of a lease (from 0), written by the `lease_renew` block that made it. */
  putRenewal(leaseHash: string, index: number, r: LeaseRenewal): void {
    this.store.leaseRenewals.putSync(renewalKey(leaseHash, index), encodeRenewal(r));
  }

  /**
   * A lease's renewals, oldest first, from the `offset`th (from 0) and at most `limit` of them (the
   * record has their count and sums): one range read of the page, whatever the lease holds.
   */
  renewalsOf(leaseHash: string, offset = 0, limit = Number.MAX_SAFE_INTEGER): LeaseRenewal[] {
    if (limit <= 0) return [];
    const range = { ...prefixRange(`${leaseHash}:`), start: renewalKey(leaseHash, offset), limit };
    return [...this.store.leaseRenewals.getRange(range)].map(({ value }) => decodeRenewal(value));
  }

  /** Removes renewals `from` and up of a lease (a rollback of them). */
  private dropRenewals(leaseHash: string, from: number): void {
    const range = { ...prefixRange(`${leaseHash}:`), start: renewalKey(leaseHash, from) };
    for (const key of [...this.store.leaseRenewals.getKeys(range)]) this.store.leaseRenewals.removeSync(key);
  }

  /** Indexes the leases a store held before it had the index: once, in one transaction. */
  private buildIndex(): void {
    this.store.root.transactionSync(() => {
      for (const { value } of this.store.leases.getRange({})) this.index(decodeLease(value), undefined);
      // The expiry and party-state indexes with it: a store this old has none.
      this.store.meta.putSync(EXPIRY_META, '1');
      this.store.meta.putSync(PARTY_STATE_META, '1');
      this.store.meta.putSync(INDEX_META, '1');
    });
  }

  /** Writes `r`'s index entries; `old`, the record as it was indexed (undefined: a new lease). */
  private index(r: LeaseRecord, old: LeaseRecord | undefined): void {
    const idx = this.store.leaseIndex;
    const [expiryWas, expiry] = [old && byExpiry(old), byExpiry(r)];
    if (expiryWas !== expiry) {
      if (expiryWas !== undefined) idx.removeSync(expiryWas);
      if (expiry !== undefined) idx.putSync(expiry, '');
    }
    const was = old?.state;
    if (was === r.state) return;
    if (was !== undefined) {
      idx.removeSync(byState(was) + r.lease_hash);
      idx.removeSync(byProviderState(r.provider, was) + r.lease_hash);
      idx.removeSync(byConsumerState(r.consumer, was) + r.lease_hash);
    }
    idx.putSync(byState(r.state) + r.lease_hash, '');
    idx.putSync(byProviderState(r.provider, r.state) + r.lease_hash, '');
    idx.putSync(byConsumerState(r.consumer, r.state) + r.lease_hash, '');
    idx.putSync(byProvider(r.provider) + r.lease_hash, r.state);
    idx.putSync(byConsumer(r.consumer) + r.lease_hash, r.state);
  }

  get(hash: string): LeaseRecord | undefined {
    const text = this.store.leases.get(hash);
    return text === undefined ? undefined : decodeLease(text);
  }

  /**
   * Writes a lease record. One with fewer renewals than the stored one (a before-image put back by
   * a rollback) takes the renewals past its count with it. `old`: the stored record, when the caller
   * has just read it.
   */
  put(r: LeaseRecord, old = this.get(r.lease_hash)): void {
    this.store.leases.putSync(r.lease_hash, encodeLease(r));
    if (old && old.renewal_count > r.renewal_count) this.dropRenewals(r.lease_hash, r.renewal_count);
    this.index(r, old);
  }

  remove(hash: string): void {
    const r = this.get(hash);
    this.store.leases.removeSync(hash);
    if (r === undefined) return;
    this.dropRenewals(hash, 0);
    const idx = this.store.leaseIndex;
    idx.removeSync(byState(r.state) + hash);
    idx.removeSync(byProviderState(r.provider, r.state) + hash);
    idx.removeSync(byConsumerState(r.consumer, r.state) + hash);
    const expiry = byExpiry(r);
    if (expiry !== undefined) idx.removeSync(expiry);
    idx.removeSync(byProvider(r.provider) + hash);
    idx.removeSync(byConsumer(r.consumer) + hash);
  }

  putUndo(blockHash: string, u: LeaseUndo): void {
    this.store.leaseUndo.putSync(hashKey(blockHash), encodeLeaseUndo(u));
  }

  /** The undo entry of a block, left in place (to judge a staged sibling against its parent). */
  peekUndo(blockHash: string): LeaseUndo | undefined {
    const text = this.store.leaseUndo.get(hashKey(blockHash));
    return text === undefined ? undefined : decodeLeaseUndo(text);
  }

  /** The undo entry of a block, removed (it is read once, by the rollback of that block). */
  takeUndo(blockHash: string): LeaseUndo | undefined {
    const key = hashKey(blockHash);
    const text = this.store.leaseUndo.get(key);
    if (text === undefined) return undefined;
    const u = decodeLeaseUndo(text);
    this.store.leaseUndo.removeSync(key);
    return u;
  }

  /**
   * Leases in hash order, filtered, paged; `total` counts every match. Matches are found in the
   * index (a provider's or consumer's leases, or those in a state); only the page is decoded.
   */
  list(filter: LeaseFilter, offset: number, limit: number): { total: number; leases: LeaseRecord[] } {
    const { provider, consumer, state } = filter;
    if (provider === undefined && consumer === undefined && state === undefined) {
      const leases = [...this.store.leases.getRange({ offset, limit })].map(({ value }) =>
        decodeLease(value),
      );
      return { total: this.store.leases.getCount(), leases };
    }
    const leases: LeaseRecord[] = [];
    if (provider === undefined || consumer === undefined) {
      // One index range holds exactly the matches: LMDB counts it and skips to the page itself
      // (a provider's 100,000 leases read one by one took 55-82 ms a page, counted 10 ms).
      const prefix = this.prefixOf(filter);
      const index = this.store.leaseIndex;
      // Fresh range objects: lmdb's getCount marks the options it is given as count-only.
      const total = index.getCount(prefixRange(prefix));
      for (const key of index.getKeys({ ...prefixRange(prefix), offset, limit })) {
        const r = this.get(key.slice(prefix.length));
        if (r) leases.push(r);
      }
      return { total, leases };
    }
    let total = 0;
    for (const hash of this.matching(filter)) {
      // With both parties named, the other one is checked on the record.
      const r = this.get(hash);
      if (r?.consumer !== consumer) continue;
      if (total >= offset && leases.length < limit) leases.push(r);
      total++;
    }
    return { total, leases };
  }

  /** The index prefix of a filter's indexed parts (a party, a state; the provider if both parties). */
  private prefixOf({ provider, consumer, state }: LeaseFilter): string {
    if (provider !== undefined)
      return state === undefined ? byProvider(provider) : byProviderState(provider, state);
    if (consumer !== undefined)
      return state === undefined ? byConsumer(consumer) : byConsumerState(consumer, state);
    return byState(state!);
  }

  /** Hashes, in order, of the leases a filter's indexed parts (a party, a state) match. */
  private *matching(filter: LeaseFilter): Generator<string> {
    const prefix = this.prefixOf(filter);
    for (const key of this.store.leaseIndex.getKeys(prefixRange(prefix))) yield key.slice(prefix.length);
  }

  /** XUSD staked by providers on accepted leases: out of balances, not yet returned or forfeited. */
  lockedStake(): bigint {
    let sum = 0n;
    for (const hash of this.matching({ state: 'accepted' })) sum += this.get(hash)?.stake ?? 0n;
    return sum;
  }
}
