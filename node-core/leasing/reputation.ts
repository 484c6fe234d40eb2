import { parseJson, stringifyJson } from '../protocol/json.ts';
import type { SignedBlock } from '../ledger/rules/types.ts';
import type { Store } from '../store/store.ts';
import type { LeaseRecord } from './records.ts';

/**
 * Lease reputation (reference-behavior.md 1.3, 4.3; LS-03, LS-21): what each account did as a
 * provider and as a consumer, counted from the lease-family blocks that move it.
 *
 * Every such block writes one entry per party, keyed by the party's address and the block's hash,
 * in the block's own transaction; an account's aggregate is the sum of its entries. Undoing the
 * block removes exactly its entries (its lease undo entry names the parties), so a rollback puts the
 * aggregate back whatever the order blocks of different chains are undone in, first and last
 * activity included, which neither before-images nor counter deltas would do.
 */

/** The counted fields; durations in seconds here, reported in hours (the reference sums seconds, LS-21). */
export const REPUTATION_COUNTERS = [
  'leases_accepted_as_provider',
  'leases_settled_as_provider',
  'lease_secs_settled_as_provider',
  'leases_unfulfilled_as_provider',
  'leases_accepted_as_consumer',
  'leases_settled_as_consumer',
  'leases_cancelled_as_consumer',
  'lease_secs_settled_as_consumer',
  'leases_unfulfilled_as_consumer',
] as const;

export type ReputationCounter = (typeof REPUTATION_COUNTERS)[number];

/** One block's effect on one party: counters to add, and when it happened (Unix ns). */
export interface ReputationEvent {
  address: string;
  at: bigint;
  counts: Partial<Record<ReputationCounter, bigint>>;
}

export type Reputation = Record<ReputationCounter, bigint> & {
  first_activity_at: bigint;
  last_activity_at: bigint;
};

/**
 * What a lease-family block records, from the lease as the block leaves it (reference-behavior.md
 * 4.3): accept at the attested start, settle and force-settle at the block's timestamp, with the
 * lease duration for a settle. A cancel is recorded against both parties; only the consumer has a
 * counter for it, so for the provider it is activity alone. The `lease` block records nothing.
 */
export function reputationEvents(block: SignedBlock, lease: LeaseRecord): ReputationEvent[] {
  const both = (at: bigint, provider: ReputationEvent['counts'], consumer: ReputationEvent['counts']) => [
    { address: lease.provider, at, counts: provider },
    { address: lease.consumer, at, counts: consumer },
  ];
  switch (block.type) {
    case 'lease_accept':
      return both(lease.start_time, { leases_accepted_as_provider: 1n }, { leases_accepted_as_consumer: 1n });
    case 'lease_settle':
      return both(
        block.timestamp,
        { leases_settled_as_provider: 1n, lease_secs_settled_as_provider: lease.duration },
        { leases_settled_as_consumer: 1n, lease_secs_settled_as_consumer: lease.duration },
      );
    case 'lease_force_settle':
      return both(
        block.timestamp,
        { leases_unfulfilled_as_provider: 1n },
        { leases_unfulfilled_as_consumer: 1n },
      );
    case 'lease_cancel':
      return both(block.timestamp, {}, { leases_cancelled_as_consumer: 1n });
    default:
      return [];
  }
}

function emptyReputation(at: bigint): Reputation {
  const r = { first_activity_at: at, last_activity_at: at } as Reputation;
  for (const c of REPUTATION_COUNTERS) r[c] = 0n;
  return r;
}

function addEvent(r: Reputation | undefined, e: Omit<ReputationEvent, 'address'>): Reputation {
  const out = r ?? emptyReputation(e.at);
  for (const [k, v] of Object.entries(e.counts)) out[k as ReputationCounter] += v;
  if (e.at < out.first_activity_at) out.first_activity_at = e.at;
  if (e.at > out.last_activity_at) out.last_activity_at = e.at;
  return out;
}

/** The reference's JSON shape (version 2), with `lease_hours_*` really in hours (LS-21). */
export function reputationJson(r: Reputation): Record<string, unknown> {
  const hours = (secs: bigint) => Number(secs) / 3600;
  return {
    version: 2,
    leases_accepted_as_provider: r.leases_accepted_as_provider,
    leases_settled_as_provider: r.leases_settled_as_provider,
    lease_hours_settled_as_provider: hours(r.lease_secs_settled_as_provider),
    leases_unfulfilled_as_provider: r.leases_unfulfilled_as_provider,
    leases_accepted_as_consumer: r.leases_accepted_as_consumer,
    leases_settled_as_consumer: r.leases_settled_as_consumer,
    leases_cancelled_as_consumer: r.leases_cancelled_as_consumer,
    lease_hours_settled_as_consumer: hours(r.lease_secs_settled_as_consumer),
    leases_unfulfilled_as_consumer: r.leases_unfulfilled_as_consumer,
    first_activity_at: r.first_activity_at,
    last_activity_at: r.last_activity_at,
  };
}

/** Store key of one party's entry for one block: the address first, so an account's entries sit together. */
function entryKey(address: string, blockHash: string): string {
  return `${address}:${blockHash}`;
}

function decodeEntry(text: string): Omit<ReputationEvent, 'address'> {
  const o = parseJson(text) as { at: unknown; counts: Record<string, unknown> };
  const counts: ReputationEvent['counts'] = {};
  for (const [k, v] of Object.entries(o.counts)) counts[k as ReputationCounter] = BigInt(v as bigint);
  return { at: BigInt(o.at as bigint), counts };
}

/** Aggregates kept in memory; past it the least recently used go (summed again if asked for). */
const KEPT_AGGREGATES = 4096;

export class ReputationBook {
  private readonly store: Store;
  /**
   * Aggregates summed from the store, by address, until a block writes or removes one of that
   * address's entries. Why: an account's aggregate sums every entry it has, and a provider's grows
   * by two or three a lease; the marketplace asks for a provider's on every offer it weighs, and
   * summing 3,000 entries took 6-8 ms each time (0.5 µs kept).
   */
  private readonly kept = new Map<string, Reputation | undefined>();

  constructor(store: Store) {
    this.store = store;
  }

  /** Writes a block's entries (inside its write transaction); returns the parties, for its undo entry. */
  record(blockHash: string, events: readonly ReputationEvent[]): string[] {
    for (const e of events) {
      this.store.reputation.putSync(
        entryKey(e.address, blockHash),
        stringifyJson({ at: e.at, counts: e.counts }),
      );
      this.kept.delete(e.address);
    }
    return events.map((e) => e.address);
  }

  /** Removes a block's entries (inside the transaction that undoes it). */
  remove(blockHash: string, parties: readonly string[]): void {
    for (const a of parties) {
      this.store.reputation.removeSync(entryKey(a, blockHash));
      this.kept.delete(a);
    }
  }

  /** An account's aggregate, or undefined when no lease block concerned it. */
  get(address: string): Reputation | undefined {
    if (this.kept.has(address)) {
      const r = this.kept.get(address);
      // Most recently used last: the first in the map is the one to drop.
      this.kept.delete(address);
      this.kept.set(address, r);
      return r === undefined ? undefined : { ...r };
    }
    let r: Reputation | undefined;
    for (const { value } of this.store.reputation.getRange({ start: `${address}:`, end: `${address};` }))
      r = addEvent(r, decodeEntry(value));
    if (this.kept.size >= KEPT_AGGREGATES) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(address, r);
    return r === undefined ? undefined : { ...r };
  }

  /**
   * Aggregates by address in address order, paged; `total` counts every account with activity. The
   * walk reads keys only; the page's aggregates come from get. Decoding every entry of every account
   * for any page took 61 ms for a page of 100 of 10,001 accounts (33,000 entries); 27-32 ms so.
   */
  list(offset: number, limit: number): { total: number; entries: [string, Reputation][] } {
    const page: string[] = [];
    let total = 0;
    let last: string | undefined;
    for (const key of this.store.reputation.getKeys({})) {
      const address = key.slice(0, key.indexOf(':'));
      if (address === last) continue;
      last = address;
      if (total >= offset && page.length < limit) page.push(address);
      total++;
    }
    return { total, entries: page.map((a) => [a, this.get(a)!]) };
  }
}
