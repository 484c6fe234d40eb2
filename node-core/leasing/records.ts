import { parseJson, stringifyJson } from '../protocol/json.ts';
import type { SupplyDelta } from '../ledger/counters.ts';
import type { PendingRecord } from '../ledger/records.ts';
import { cappedR, leaseEmission } from './pricing.ts';

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
  /**
   * Its renewals are stored beside the record, one entry each (LeaseBook.renewalsOf): a lease held
   * by a renewal a minute has thousands, and the record, read and written with every lease block
   * and read by every listing, carries their count and the sums a settle needs instead (issue #18).
   */
  renewal_count: number;
  /** The renewals' costs, summed (part of `cost`). */
  renewed_cost: bigint;
  /** The XE each renewal pays at settle, at the parameters it locked, summed. */
  renewal_emission: bigint;
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
  'renewed_cost',
  'renewal_emission',
] as const;

function toBig(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as number | string);
}

/** Lease records are stored as lossless JSON: small, their renewals kept apart. */
export function encodeLease(r: LeaseRecord): string {
  return stringifyJson(r);
}

/**
 * A stored lease record. Records written before renewals were kept apart hold them in an array
 * (`renewals`): read as one of today's, their count and sums taken from it; `legacyRenewals` gets
 * the array, for the store's one-time move of them (LeaseBook).
 */
export function decodeLease(text: string, legacyRenewals?: (r: LeaseRenewal[]) => void): LeaseRecord {
  return leaseFromJson(parseJson(text) as Record<string, unknown>, legacyRenewals);
}

export function encodeRenewal(r: LeaseRenewal): string {
  return stringifyJson(r);
}

export function decodeRenewal(text: string): LeaseRenewal {
  return renewalFromJson(parseJson(text) as Record<string, unknown>);
}

function renewalFromJson(x: Record<string, unknown>): LeaseRenewal {
  return {
    renew_hash: x.renew_hash as string,
    duration: toBig(x.duration),
    cost: toBig(x.cost),
    start_time: toBig(x.start_time),
    locked_r: toBig(x.locked_r),
    locked_payout_cap: toBig(x.locked_payout_cap),
    locked_twap_milli: toBig(x.locked_twap_milli),
  };
}

/** What a renewal pays at settle: its cost's emission at the parameters it locked. */
export function renewalEmission(r: LeaseRenewal): bigint {
  return leaseEmission(r.cost, cappedR(r));
}

function leaseFromJson(
  o: Record<string, unknown>,
  legacyRenewals?: (r: LeaseRenewal[]) => void,
): LeaseRecord {
  for (const f of BIGINT_FIELDS) if (o[f] !== undefined) o[f] = toBig(o[f]);
  if (Array.isArray(o.renewals)) {
    const renewals = (o.renewals as Record<string, unknown>[]).map(renewalFromJson);
    delete o.renewals;
    o.renewal_count = renewals.length;
    o.renewed_cost = renewals.reduce((sum, r) => sum + r.cost, 0n);
    // A renewal accepted before its emission was checked at renew may not have one (an overflow):
    // its lease stays as unsettleable as it was (leaseTotalEmission refuses a negative sum).
    try {
      o.renewal_emission = renewals.reduce((sum, r) => sum + renewalEmission(r), 0n);
    } catch {
      o.renewal_emission = -1n;
    }
    legacyRenewals?.(renewals);
  }
  return o as unknown as LeaseRecord;
}

export function encodeLeaseUndo(u: LeaseUndo): string {
  return stringifyJson(u);
}

/**
 * An undo entry. Its before-image is a record like any (those written while renewals were in the
 * record hold them in an array, read as decodeLease reads it).
 */
export function decodeLeaseUndo(text: string): LeaseUndo {
  const o = parseJson(text) as Record<string, unknown> & {
    before?: Record<string, unknown>;
    pendingBefore?: { destination: string; hash: string; record: Record<string, unknown> };
    supply: { asset: string; term: string; amount: unknown }[];
    credit?: { account: string; asset: string; amount: unknown };
    reputation?: string[];
  };
  return {
    lease_hash: o.lease_hash as string,
    before: o.before === undefined ? undefined : leaseFromJson(o.before),
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
