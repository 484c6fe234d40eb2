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

/**
 * Lease records and the undo entries of lease-family blocks, in the store. Every write happens in
 * the transaction of the block that causes it, so a lease is exactly as durable as its blocks, and a
 * rolled-back block puts the lease back exactly as it was (its undo entry holds the before-image).
 */
export class LeaseBook {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  get(hash: string): LeaseRecord | undefined {
    const text = this.store.leases.get(hash);
    return text === undefined ? undefined : decodeLease(text);
  }

  put(r: LeaseRecord): void {
    this.store.leases.putSync(r.lease_hash, encodeLease(r));
  }

  remove(hash: string): void {
    this.store.leases.removeSync(hash);
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

  /** Leases in hash order, filtered, paged; `total` counts every match. */
  list(filter: LeaseFilter, offset: number, limit: number): { total: number; leases: LeaseRecord[] } {
    const leases: LeaseRecord[] = [];
    let total = 0;
    for (const { value } of this.store.leases.getRange({})) {
      const r = decodeLease(value);
      if (filter.consumer !== undefined && r.consumer !== filter.consumer) continue;
      if (filter.provider !== undefined && r.provider !== filter.provider) continue;
      if (filter.state !== undefined && r.state !== filter.state) continue;
      if (total >= offset && leases.length < limit) leases.push(r);
      total++;
    }
    return { total, leases };
  }

  /** XUSD staked by providers on accepted leases: out of balances, not yet returned or forfeited. */
  lockedStake(): bigint {
    let sum = 0n;
    for (const { value } of this.store.leases.getRange({})) {
      const r = decodeLease(value);
      if (r.state === 'accepted') sum += r.stake;
    }
    return sum;
  }
}
