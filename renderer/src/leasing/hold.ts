import type { LeaseInfo } from '../../../node-core/client/leasing.ts';
import { leaseExpiry, NS_PER_SEC } from './quote.ts';

/**
 * "Hold" a lease from the GUI: while the app runs, it renews the lease in segments shortly before it
 * expires, and warns when the paying account could not afford the next segment. The decision is a
 * pure function of the lease, the clock, the setting, the funds and the last attempt, so it is unit
 * tested without timers; the page runs it on a tick.
 */

export interface HoldSetting {
  enabled: boolean;
  /** Length of each renewal, seconds. */
  segmentSecs: bigint;
}

/** How long before expiry a renewal is made: a quarter of a segment, from 15 s to 5 min. */
export function holdLeadSecs(segmentSecs: bigint): bigint {
  const q = segmentSecs / 4n;
  return q < 15n ? 15n : q > 300n ? 300n : q;
}

/** Within this many seconds of the renewal time, missing funds are warned of. */
export const LOW_FUNDS_HORIZON_SECS = 600n;
/** After a failed renewal, the next try waits this long. */
export const HOLD_RETRY_SECS = 10n;

export type HoldDecision =
  | { kind: 'off' }
  | { kind: 'not-active'; why: string }
  | { kind: 'expired' }
  | { kind: 'wait'; at: bigint; lowFunds?: { need: bigint; have: bigint } }
  | { kind: 'renew'; duration: bigint; cost: bigint }
  | { kind: 'low-funds'; need: bigint; have: bigint; expiry: bigint };

export interface HoldInput {
  lease: LeaseInfo;
  now: bigint;
  setting: HoldSetting | undefined;
  /** The consumer's spendable XUSD. */
  spendable: bigint;
  /** The cost of one segment at the provider's current price. */
  segmentCost: bigint;
  /** Unix ns of the last failed attempt, if any. */
  lastFailure?: bigint;
  /** A renewal is running now. */
  inFlight?: boolean;
}

export function holdDecision(i: HoldInput): HoldDecision {
  if (!i.setting?.enabled) return { kind: 'off' };
  const { lease, now } = i;
  if (lease.state !== 'accepted' || lease.settled) return { kind: 'not-active', why: `lease ${lease.state}` };
  const expiry = leaseExpiry(lease)!;
  if (now >= expiry) return { kind: 'expired' };
  const renewAt = expiry - holdLeadSecs(i.setting.segmentSecs) * NS_PER_SEC;
  const short = i.spendable < i.segmentCost;
  if (now < renewAt) {
    const warn = short && renewAt - now <= LOW_FUNDS_HORIZON_SECS * NS_PER_SEC;
    return {
      kind: 'wait',
      at: renewAt,
      ...(warn ? { lowFunds: { need: i.segmentCost, have: i.spendable } } : {}),
    };
  }
  if (short) return { kind: 'low-funds', need: i.segmentCost, have: i.spendable, expiry };
  if (i.inFlight) return { kind: 'wait', at: now + NS_PER_SEC };
  if (i.lastFailure !== undefined && now - i.lastFailure < HOLD_RETRY_SECS * NS_PER_SEC)
    return { kind: 'wait', at: i.lastFailure + HOLD_RETRY_SECS * NS_PER_SEC };
  return { kind: 'renew', duration: i.setting.segmentSecs, cost: i.segmentCost };
}

export type ExpiryAlert = { level: 'expired' } | { level: 'soon'; secondsLeft: bigint } | undefined;

/** An alert before a lease runs out: a fifth of its duration left (at most an hour), or expired. */
export function expiryAlert(lease: LeaseInfo, now: bigint): ExpiryAlert {
  if (lease.state !== 'accepted' || lease.settled) return undefined;
  const expiry = leaseExpiry(lease);
  if (expiry === undefined) return undefined;
  if (now >= expiry) return { level: 'expired' };
  const left = (expiry - now) / NS_PER_SEC;
  const threshold = lease.duration / 5n < 3600n ? lease.duration / 5n : 3600n;
  return left <= threshold ? { level: 'soon', secondsLeft: left } : undefined;
}
