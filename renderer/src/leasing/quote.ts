import {
  checkLeaseBounds,
  type LeaseDimensions,
  LeaseCostError,
  leaseCost,
  MAX_LEASE_DURATION_SECS,
} from '../../../node-core/protocol/lease-cost.ts';
import type { EpochInfo, LeaseInfo, LeaseTimingInfo } from '../../../node-core/client/leasing.ts';

/**
 * The Leasing page's pure logic: a quote from the isomorphic cost formula before anything is signed,
 * the balance check, a lease's expiry and which actions its state and the lease windows allow now,
 * and the emission parameters a renewal locks. Every amount and time is bigint (micro-XUSD, Unix ns).
 */

export const NS_PER_SEC = 1_000_000_000n;

export const DURATION_UNITS = { s: 1n, min: 60n, h: 3600n, d: 86_400n } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;

export interface LeaseForm {
  vcpus: string;
  memory_mb: string;
  disk_gb: string;
  duration: string;
  unit: DurationUnit;
}

const DIGITS = /^[0-9]{1,20}$/;

/** The form's dimensions, or the first field at fault and why. */
export function parseLeaseForm(
  f: LeaseForm,
  minDurationSecs?: bigint,
): { dims: LeaseDimensions } | { field: string; error: string } {
  const out: Record<string, bigint> = {};
  for (const k of ['vcpus', 'memory_mb', 'disk_gb', 'duration'] as const) {
    const t = f[k].trim();
    if (!DIGITS.test(t)) return { field: k, error: 'a whole number' };
    out[k] = BigInt(t);
  }
  const dims: LeaseDimensions = {
    vcpus: out.vcpus!,
    memory_mb: out.memory_mb!,
    disk_gb: out.disk_gb!,
    duration: out.duration! * DURATION_UNITS[f.unit],
  };
  try {
    checkLeaseBounds(dims, minDurationSecs);
  } catch (e) {
    if (e instanceof LeaseCostError) return { field: e.field ?? 'vcpus', error: e.message };
    throw e;
  }
  return { dims };
}

export interface Quote {
  cost: bigint;
  /** Spendable XUSD after paying, when it suffices. */
  after?: bigint;
  /** How much XUSD is missing, when it does not. */
  shortfall?: bigint;
}

/** The exact cost at `multiplierMilli`, checked against the paying account's spendable XUSD. */
export function quoteLease(dims: LeaseDimensions, multiplierMilli: bigint, spendable: bigint): Quote {
  const cost = leaseCost(dims, multiplierMilli);
  return cost <= spendable ? { cost, after: spendable - cost } : { cost, shortfall: cost - spendable };
}

/** The cost of extending `lease` by `extensionSecs` at the provider's current multiplier. */
export function renewalCost(lease: LeaseInfo, extensionSecs: bigint, multiplierMilli: bigint): bigint {
  return leaseCost(
    { vcpus: lease.vcpus, memory_mb: lease.memory_mb, disk_gb: lease.disk_gb, duration: extensionSecs },
    multiplierMilli,
  );
}

/** Checks an extension against the bounds the ledger applies to a renewal; an error sentence or undefined. */
export function renewalProblem(
  lease: LeaseInfo,
  extensionSecs: bigint,
  minDurationSecs?: bigint,
): string | undefined {
  try {
    checkLeaseBounds(
      { vcpus: lease.vcpus, memory_mb: lease.memory_mb, disk_gb: lease.disk_gb, duration: extensionSecs },
      minDurationSecs,
    );
  } catch (e) {
    if (e instanceof LeaseCostError) return e.message;
    throw e;
  }
  if (lease.duration + extensionSecs > MAX_LEASE_DURATION_SECS)
    return `a lease lasts at most ${MAX_LEASE_DURATION_SECS} seconds in all`;
  return undefined;
}

/** Expiry in Unix ns (start + duration); undefined until accepted. */
export function leaseExpiry(lease: Pick<LeaseInfo, 'start_time' | 'duration'>): bigint | undefined {
  return lease.start_time === 0n ? undefined : lease.start_time + lease.duration * NS_PER_SEC;
}

export interface Allowed {
  ok: boolean;
  /** Why not, or when it becomes possible. */
  why?: string;
  /** Unix ns from which it is allowed (force-settle), when it is not yet. */
  from?: bigint;
  /** Unix ns until which it is allowed. */
  until?: bigint;
}

export interface LeaseActions {
  cancel: Allowed;
  renew: Allowed;
  forceSettle: Allowed;
}

/** What the lease's state and the windows allow at `now` (Unix ns, the local clock). */
export function leaseActions(
  lease: LeaseInfo,
  now: bigint,
  timing: LeaseTimingInfo | undefined,
): LeaseActions {
  const expiry = leaseExpiry(lease);
  const cancel: Allowed =
    lease.state === 'created'
      ? { ok: true }
      : { ok: false, why: 'only a lease nobody accepted yet can be cancelled' };
  let renew: Allowed;
  if (lease.state !== 'accepted' || lease.settled || expiry === undefined)
    renew = { ok: false, why: 'only an accepted, unsettled lease can be renewed' };
  else if (now >= expiry) renew = { ok: false, why: 'the lease has expired' };
  else renew = { ok: true, until: expiry };
  let forceSettle: Allowed;
  if (lease.state !== 'accepted' || lease.settled || expiry === undefined)
    forceSettle = { ok: false, why: 'only an accepted lease nobody settled can be force-settled' };
  else if (!timing) forceSettle = { ok: false, why: 'the node does not tell its lease windows' };
  else {
    const from = expiry + timing.settle_grace_ns + timing.force_settle_gap_ns;
    const until = expiry + timing.escrow_expiry_ns;
    if (now < from) forceSettle = { ok: false, why: 'its window has not opened', from, until };
    else if (now >= until) forceSettle = { ok: false, why: 'its window has closed', from, until };
    else forceSettle = { ok: true, from, until };
  }
  return { cancel, renew, forceSettle };
}

export interface LockedParams {
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
}

/** R locked when the state chain has no epoch at all. */
export const FALLBACK_R = 2000n;

/** The emission parameters a block attested at `t` locks: the newest epoch started by `t`, else the fallback. */
export function lockedParamsAt(epochs: readonly EpochInfo[], t: bigint): LockedParams {
  let best: EpochInfo | undefined;
  for (const e of epochs) if (e.start_ns <= t && (best === undefined || e.epoch > best.epoch)) best = e;
  if (best === undefined) {
    if (epochs.length > 0) throw new Error('no epoch has started at the attested time yet');
    return { locked_r: FALLBACK_R, locked_payout_cap: 0n, locked_twap_milli: 0n };
  }
  return {
    locked_r: best.r_effective,
    locked_payout_cap: best.payout_cap,
    locked_twap_milli: best.twap_milli_usd,
  };
}

/** "1 h 02 min", "45 s", "3 d 4 h" for a number of seconds (bigint). */
export function spanText(secs: bigint): string {
  if (secs < 0n) secs = 0n;
  const d = secs / 86_400n;
  const h = (secs % 86_400n) / 3600n;
  const m = (secs % 3600n) / 60n;
  const s = secs % 60n;
  if (d > 0n) return `${d} d ${h} h`;
  if (h > 0n) return `${h} h ${m.toString().padStart(2, '0')} min`;
  if (m > 0n) return `${m} min ${s.toString().padStart(2, '0')} s`;
  return `${s} s`;
}

/** A price multiplier in thousandths as "×1.25". */
export function multiplierText(milli: bigint): string {
  const whole = milli / 1000n;
  const frac = (milli % 1000n).toString().padStart(3, '0').replace(/0+$/, '');
  return `×${whole}${frac ? `.${frac}` : ''}`;
}
