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
 *
 * Each account's aggregate is also stored (`~agg:<address>`, beside the count of accounts), added to
 * as entries are written and summed again from the entries when one is removed (a rollback, rare).
 * Why: a provider gains two or three entries a lease; summing 3,000 of them took 6-8 ms for one
 * account, and a page of `GET /reputation` walked every entry of every account (issue #18).
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

/** Aggregates kept in memory; past it the least recently used go (read again if asked for). */
const KEPT_AGGREGATES = 4096;
/** Store keys of the aggregates and of their count: '~' sorts after every address (lowercase hex). */
const AGG = '~agg:';
const AGG_END = '~agg;';
const COUNT = '~count';
/** Marks, in the store's meta database, a reputation database whose aggregates are written. */
const AGGREGATES_META = 'reputation_aggregates';
const AGGREGATES_VERSION = '1';

function encodeAggregate(r: Reputation): string {
  return stringifyJson(r);
}

function decodeAggregate(text: string): Reputation {
  const o = parseJson(text) as Record<string, unknown>;
  const r = {} as Reputation;
  for (const c of REPUTATION_COUNTERS) r[c] = BigInt(o[c] as bigint);
  r.first_activity_at = BigInt(o.first_activity_at as bigint);
  r.last_activity_at = BigInt(o.last_activity_at as bigint);
  return r;
}

export class ReputationBook {
  private readonly store: Store;
  /**
   * Aggregates read from the store, by address, until a block writes or removes one of that
   * address's entries: the marketplace asks for a provider's on every offer it weighs (0.5 µs kept).
   * Not filled by writes: a write's transaction may still fail.
   */
  private readonly kept = new Map<string, Reputation | undefined>();

  constructor(store: Store) {
    this.store = store;
    if (store.meta.get(AGGREGATES_META) !== AGGREGATES_VERSION) {
      // A store from before the aggregates: summed once, in one transaction.
      store.root.transactionSync(() => {
        this.sumAll();
        store.meta.putSync(AGGREGATES_META, AGGREGATES_VERSION);
      });
    }
  }

  /** Writes a block's entries (inside its write transaction); returns the parties, for its undo entry. */
  record(blockHash: string, events: readonly ReputationEvent[]): string[] {
    const db = this.store.reputation;
    for (const e of events) {
      const entry = { at: e.at, counts: e.counts };
      db.putSync(entryKey(e.address, blockHash), stringifyJson(entry));
      const held = this.stored(e.address);
      if (held === undefined) this.addToCount(1);
      db.putSync(AGG + e.address, encodeAggregate(addEvent(held, entry)));
      this.kept.delete(e.address);
    }
    return events.map((e) => e.address);
  }

  /** Removes a block's entries (inside the transaction that undoes it). */
  remove(blockHash: string, parties: readonly string[]): void {
    const db = this.store.reputation;
    for (const a of parties) {
      db.removeSync(entryKey(a, blockHash));
      this.kept.delete(a);
    }
    // Summed again from what entries remain: first and last activity cannot be subtracted.
    for (const a of new Set(parties)) {
      const r = this.sum(a);
      if (r !== undefined) db.putSync(AGG + a, encodeAggregate(r));
      else if (this.stored(a) !== undefined) {
        db.removeSync(AGG + a);
        this.addToCount(-1);
      }
    }
  }

  /** The stored aggregate of an account. */
  private stored(address: string): Reputation | undefined {
    const text = this.store.reputation.get(AGG + address);
    return text === undefined ? undefined : decodeAggregate(text);
  }

  /** An account's entries summed. */
  private sum(address: string): Reputation | undefined {
    let r: Reputation | undefined;
    for (const { value } of this.store.reputation.getRange({ start: `${address}:`, end: `${address};` }))
      r = addEvent(r, decodeEntry(value));
    return r;
  }

  private addToCount(delta: number): void {
    const n = Number(this.store.reputation.get(COUNT) ?? '0') + delta;
    this.store.reputation.putSync(COUNT, String(n));
  }

  /** Inside a transaction: every account's aggregate and their count, from the entries. */
  private sumAll(): void {
    const db = this.store.reputation;
    for (const key of [...db.getKeys({ start: AGG, end: AGG_END })]) db.removeSync(key);
    let count = 0;
    let address: string | undefined;
    let r: Reputation | undefined;
    const flush = () => {
      if (address === undefined || r === undefined) return;
      db.putSync(AGG + address, encodeAggregate(r));
      count += 1;
    };
    for (const { key, value } of db.getRange({ end: '~' })) {
      const a = key.slice(0, key.indexOf(':'));
      if (a !== address) {
        flush();
        address = a;
        r = undefined;
      }
      r = addEvent(r, decodeEntry(value));
    }
    flush();
    db.putSync(COUNT, String(count));
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
    const r = this.stored(address);
    if (this.kept.size >= KEPT_AGGREGATES) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(address, r);
    return r === undefined ? undefined : { ...r };
  }

  /** Aggregates by address in address order, paged; `total` counts every account with activity. */
  list(offset: number, limit: number): { total: number; entries: [string, Reputation][] } {
    const db = this.store.reputation;
    const entries: [string, Reputation][] = [];
    for (const { key, value } of db.getRange({ start: AGG, end: AGG_END, offset, limit }))
      entries.push([key.slice(AGG.length), decodeAggregate(value)]);
    return { total: Number(db.get(COUNT) ?? '0'), entries };
  }
}
