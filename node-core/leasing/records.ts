import { parseJson, stringifyJson } from '../protocol/json.ts';
import type { SupplyDelta } from '../ledger/counters.ts';
import type { PendingRecord } from '../ledger/records.ts';

/**
 * The lease object (reference-behavior.md 4.1): keyed by the hash of its `lease` block, changed by
 * the later lease blocks that carry that hash in `source`, and by the local archive sweep.
 */
export type LeaseState = 'created' | 'accepted' | 'settled' | 'cancelled' | 'unfulfilled' | 'expired';

export const LEASE_STATES: readonly LeaseState[] = [
  'created',
  'accepted',
  'settled',
  'cancelled',
  'unfulfilled',
  'expired',
];

/** No lease block can follow these; capacity and `/providers` count every lease that is not one. */
export const TERMINAL_STATES: ReadonlySet<LeaseState> = new Set([
  'settled',
  'cancelled',
  'unfulfilled',
  'expired',
]);

/** The states a lease block can still follow: what occupies a provider's capacity. */
export const OPEN_STATES: readonly LeaseState[] = LEASE_STATES.filter((s) => !TERMINAL_STATES.has(s));

/** A `lease_renew` extension (our extension, decisions D7), with the parameters it locked. */
export interface LeaseRenewal {
  renew_hash: string;
  /** Seconds added. */
  duration: bigint;
  cost: bigint;
  /** Its attested time. */
  start_time: bigint;
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
}

export interface LeaseRecord {
  lease_hash: string;
  state: LeaseState;
  consumer: string;
  provider: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  /** Seconds, renewals included. */
  duration: bigint;
  access_pub_key?: string;
  /** XUSD escrowed by the `lease` block (renewals escrow their own cost). */
  cost: bigint;
  stake: bigint;
  /** The accept's attested time (0 until accepted). */
  start_time: bigint;
  certificate_hash?: string;
  /** True after settle, force-settle and archive; never set by cancel (4.1: not "terminal"). */
  settled: boolean;
  locked_r?: bigint;
  locked_payout_cap?: bigint;
  locked_twap_milli?: bigint;
  renewals: LeaseRenewal[];
  /** The `lease` block's timestamp. */
  created_at: bigint;
  /** Hash of the block that accepted it (the provider's chain). */
  accept_hash?: string;
}

/**
 * What undoing one lease-family block must put back (written with the block, read by rollback):
 * the lease as it was before, and the side effects the block had beyond its own chain entry.
 */
export interface LeaseUndo {
  lease_hash: string;
  /** The lease record before the block (absent for the `lease` block, which created it). */
  before?: LeaseRecord;
  /** The escrow entry as it was before the block consumed or grew it. */
  pendingBefore?: { destination: string; hash: string; record: PendingRecord };
  supply: SupplyDelta[];
  /** An XUSD credit outside the block's balance (the stake returned at settle). */
  credit?: { account: string; asset: string; amount: bigint };
  /** The parties whose reputation entries the block wrote (leasing/reputation.ts). */
  reputation?: string[];
}

const BIGINT_FIELDS = [
  'vcpus',
  'memory_mb',
  'disk_gb',
  'duration',
  'cost',
  'stake',
  'start_time',
  'locked_r',
  'locked_payout_cap',
  'locked_twap_milli',
  'created_at',
] as const;

function toBig(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as number | string);
}

/** Lease records are stored as lossless JSON: a lease is written a few times in its life, not a hot path. */
export function encodeLease(r: LeaseRecord): string {
  return stringifyJson(r);
}

export function decodeLease(text: string): LeaseRecord {
  return leaseFromJson(parseJson(text) as Record<string, unknown>);
}

function beforeImage(
  o: Record<string, unknown>,
  count: number | undefined,
  current: (leaseHash: string) => LeaseRenewal[],
): LeaseRecord {
  const r = leaseFromJson(o);
  if (count === undefined) return r;
  const renewals = current(r.lease_hash);
  if (renewals.length < count)
    throw new Error(
      `lease ${r.lease_hash}: an undo entry names ${count} renewals, the record holds ${renewals.length}`,
    );
  return { ...r, renewals: renewals.slice(0, count) };
}

function leaseFromJson(o: Record<string, unknown>): LeaseRecord {
  for (const f of BIGINT_FIELDS) if (o[f] !== undefined) o[f] = toBig(o[f]);
  o.renewals = ((o.renewals as Record<string, unknown>[] | undefined) ?? []).map((x) => ({
    renew_hash: x.renew_hash as string,
    duration: toBig(x.duration),
    cost: toBig(x.cost),
    start_time: toBig(x.start_time),
    locked_r: toBig(x.locked_r),
    locked_payout_cap: toBig(x.locked_payout_cap),
    locked_twap_milli: toBig(x.locked_twap_milli),
  }));
  return o as unknown as LeaseRecord;
}

/**
 * A lease's renewals only grow (a rollback takes the newest back first), and the before-image of
 * every lease-family block is stored with it: a copy of the renewals in each would make a lease
 * held by renewals every minute store a quadratic amount (about 11 GB of undo entries in a week of
 * 10,000 renewals; issue #18). So the before-image keeps their count (`before_renewals`), and
 * decoding takes that many from the record as it stands when the entry is read.
 */
export function encodeLeaseUndo(u: LeaseUndo): string {
  if (!u.before) return stringifyJson(u);
  const { renewals, ...before } = u.before;
  return stringifyJson({ ...u, before, before_renewals: renewals.length });
}

/**
 * `current`: the lease's renewals as the record holds them now (a prefix of them is the
 * before-image's). Entries written before the count replaced the copy hold their renewals.
 */
export function decodeLeaseUndo(text: string, current: (leaseHash: string) => LeaseRenewal[]): LeaseUndo {
  const o = parseJson(text) as Record<string, unknown> & {
    before?: Record<string, unknown>;
    before_renewals?: number;
    pendingBefore?: { destination: string; hash: string; record: Record<string, unknown> };
    supply: { asset: string; term: string; amount: unknown }[];
    credit?: { account: string; asset: string; amount: unknown };
    reputation?: string[];
  };
  return {
    lease_hash: o.lease_hash as string,
    before: o.before === undefined ? undefined : beforeImage(o.before, o.before_renewals, current),
    pendingBefore:
      o.pendingBefore === undefined
        ? undefined
        : {
            destination: o.pendingBefore.destination,
            hash: o.pendingBefore.hash,
            record: {
              from: o.pendingBefore.record.from as string,
              amount: toBig(o.pendingBefore.record.amount),
              asset: o.pendingBefore.record.asset as string,
              timestamp: toBig(o.pendingBefore.record.timestamp),
            },
          },
    supply: o.supply.map((d) => ({ ...d, amount: toBig(d.amount) }) as SupplyDelta),
    credit: o.credit === undefined ? undefined : { ...o.credit, amount: toBig(o.credit.amount) },
    reputation: o.reputation,
  };
}
