import type { Store } from '../store/store.ts';
import { hashKey } from '../ledger/codec.ts';
import {
  decodeLease,
  decodeLeaseUndo,
  encodeLease,
  encodeLeaseUndo,
  type LeaseRecord,
  type LeaseState,
  type LeaseUndo,
} from './records.ts';

export interface LeaseFilter {
  consumer?: string;
  provider?: string;
  state?: LeaseState;
}

/** Marks a store whose lease index was built (stores from before it have leases and no index). */
const INDEX_META = 'lease_index';

const byProvider = (provider: string) => `p:${provider}:`;
const byConsumer = (consumer: string) => `c:${consumer}:`;
const byState = (state: LeaseState) => `s:${state}:`;

/**
 * Lease records and the undo entries of lease-family blocks, in the store. Every write happens in
 * the transaction of the block that causes it, so a lease is exactly as durable as its blocks, and a
 * rolled-back block puts the lease back exactly as it was (its undo entry holds the before-image).
 *
 * Leases are never deleted once final (terminal ones stay for their history), so a network's table
 * only grows. Its index by provider, consumer and state lets a provider's tick, the archive sweep,
 * the marketplace and filtered listings read the leases they ask for instead of decoding every
 * lease there is (issue #18).
 */
export class LeaseBook {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
    if (store.meta.get(INDEX_META) === undefined) this.buildIndex();
  }

  /** Indexes the leases a store held before it had the index: once, in one transaction. */
  private buildIndex(): void {
    this.store.root.transactionSync(() => {
      for (const { value } of this.store.leases.getRange({})) this.index(decodeLease(value), undefined);
      this.store.meta.putSync(INDEX_META, '1');
    });
  }

  /** Writes `r`'s index entries; `was`, the state it was indexed under (undefined: a new lease). */
  private index(r: LeaseRecord, was: LeaseState | undefined): void {
    if (was === r.state) return;
    const idx = this.store.leaseIndex;
    if (was !== undefined) idx.removeSync(byState(was) + r.lease_hash);
    idx.putSync(byState(r.state) + r.lease_hash, '');
    idx.putSync(byProvider(r.provider) + r.lease_hash, r.state);
    idx.putSync(byConsumer(r.consumer) + r.lease_hash, r.state);
  }

  get(hash: string): LeaseRecord | undefined {
    const text = this.store.leases.get(hash);
    return text === undefined ? undefined : decodeLease(text);
  }

  put(r: LeaseRecord): void {
    const was = this.store.leaseIndex.get(byProvider(r.provider) + r.lease_hash) as LeaseState | undefined;
    this.store.leases.putSync(r.lease_hash, encodeLease(r));
    this.index(r, was);
  }

  remove(hash: string): void {
    const r = this.get(hash);
    this.store.leases.removeSync(hash);
    if (r === undefined) return;
    const idx = this.store.leaseIndex;
    idx.removeSync(byState(r.state) + hash);
    idx.removeSync(byProvider(r.provider) + hash);
    idx.removeSync(byConsumer(r.consumer) + hash);
  }

  putUndo(blockHash: string, u: LeaseUndo): void {
    this.store.leaseUndo.putSync(hashKey(blockHash), encodeLeaseUndo(u));
  }

  /** The undo entry of a block, left in place (to judge a staged sibling against its parent). */
  peekUndo(blockHash: string): LeaseUndo | undefined {
    const text = this.store.leaseUndo.get(hashKey(blockHash));
    return text === undefined ? undefined : this.decodeUndo(text);
  }

  /** The undo entry of a block, removed (it is read once, by the rollback of that block). */
  takeUndo(blockHash: string): LeaseUndo | undefined {
    const key = hashKey(blockHash);
    const text = this.store.leaseUndo.get(key);
    if (text === undefined) return undefined;
    const u = this.decodeUndo(text);
    this.store.leaseUndo.removeSync(key);
    return u;
  }

  /** An undo entry, its before-image's renewals taken from the lease record as it stands. */
  private decodeUndo(text: string): LeaseUndo {
    return decodeLeaseUndo(text, (leaseHash) => this.get(leaseHash)?.renewals ?? []);
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
    let total = 0;
    for (const hash of this.matching(filter)) {
      let r: LeaseRecord | undefined;
      // With both parties named, the other one is checked on the record.
      if (provider !== undefined && consumer !== undefined) {
        r = this.get(hash);
        if (r?.consumer !== consumer) continue;
      }
      if (total >= offset && leases.length < limit) {
        r ??= this.get(hash);
        if (r) leases.push(r);
      }
      total++;
    }
    return { total, leases };
  }

  /** Hashes, in order, of the leases a filter's indexed parts (a party, a state) match. */
  private *matching({ provider, consumer, state }: LeaseFilter): Generator<string> {
    const party =
      provider !== undefined
        ? byProvider(provider)
        : consumer !== undefined
          ? byConsumer(consumer)
          : undefined;
    const prefix = party ?? byState(state!);
    const end = prefix.slice(0, -1) + ';'; // ':' + 1: just past every key under the prefix
    for (const { key, value } of this.store.leaseIndex.getRange({ start: prefix, end })) {
      if (party !== undefined && state !== undefined && value !== state) continue;
      yield key.slice(prefix.length);
    }
  }

  /** XUSD staked by providers on accepted leases: out of balances, not yet returned or forfeited. */
  lockedStake(): bigint {
    let sum = 0n;
    for (const hash of this.matching({ state: 'accepted' })) sum += this.get(hash)?.stake ?? 0n;
    return sum;
  }
}
