import { U64_MAX } from '../protocol/int.ts';
import { LeasingError } from './errors.ts';

/**
 * Lease amounts (protocol.md section 6, reference-behavior.md 4.5, decisions D7): the cost a
 * consumer escrows, the provider's stake, the XE emitted at settle, and the dimension bounds.
 * Everything is bigint micro-units; every step of the cost and the emission is checked against
 * 2^64-1, as the reference node's unsigned 64-bit arithmetic is (an overflow rejects the block).
 */

/** Hourly price of one unit of each dimension, micro-XUSD, before the certificate's multiplier. */
export const VCPU_PRICE_PER_HOUR = 20_000n;
export const MEMORY_GIB_PRICE_PER_HOUR = 10_000n;
export const DISK_GB_PRICE_PER_HOUR = 1_000n;

/** The `price_multiplier_milli` a provider has unless set (its range: protocol/certificate.ts). */
export const DEFAULT_PRICE_MULTIPLIER_MILLI = 1000n;

/** R used when no epoch exists yet (the genesis `epoch.0` has the same value). */
export const FALLBACK_R = 2000n;

export interface LeaseDimensions {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  /** Seconds. */
  duration: bigint;
}

/** The locked emission parameters a `lease_accept` carries (protocol.md section 3.3). */
export interface LockedEmissionParams {
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
}

/** The parts of a state-chain `epoch.N` record a provider locks (reference-behavior.md 4.5). */
export interface EpochEmission {
  r_effective: bigint;
  payout_cap: bigint;
  twap_milli_usd: bigint;
}

function u64(v: bigint, field: string): bigint {
  if (v < 0n || v > U64_MAX) throw new LeasingError('out_of_range', `${field} is not a u64`, field);
  return v;
}

/** a × b, refused past 2^64-1 (`what` names the step in the error). */
function mul(a: bigint, b: bigint, what: string): bigint {
  const p = a * b;
  if (p > U64_MAX) throw new LeasingError('overflow', `lease ${what} overflows 2^64-1`);
  return p;
}

function add(a: bigint, b: bigint, what: string): bigint {
  const s = a + b;
  if (s > U64_MAX) throw new LeasingError('overflow', `lease ${what} overflows 2^64-1`);
  return s;
}

/** ⌈a / b⌉ for b > 0, written as quotient plus a remainder bit so no step exceeds a. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b === 0n ? q : q + 1n;
}

/**
 * Lease cost in micro-XUSD, billed per started minute with memory in started GiB:
 * per_hour = vcpus·20,000 + ⌈memory_mb/1024⌉·10,000 + disk_gb·1,000;
 * cost = max(1, ⌈⌈per_hour·⌈duration/60⌉/60⌉ · multiplier_milli / 1000⌉).
 */
export function leaseCost(
  dims: LeaseDimensions,
  multiplierMilli: bigint = DEFAULT_PRICE_MULTIPLIER_MILLI,
): bigint {
  const minutes = ceilDiv(u64(dims.duration, 'duration'), 60n);
  const memGiB = ceilDiv(u64(dims.memory_mb, 'memory_mb'), 1024n);
  const perHour = add(
    add(
      mul(u64(dims.vcpus, 'vcpus'), VCPU_PRICE_PER_HOUR, 'vcpu price'),
      mul(memGiB, MEMORY_GIB_PRICE_PER_HOUR, 'memory price'),
      'hourly price',
    ),
    mul(u64(dims.disk_gb, 'disk_gb'), DISK_GB_PRICE_PER_HOUR, 'disk price'),
    'hourly price',
  );
  const base = ceilDiv(mul(perHour, minutes, 'base cost'), 60n);
  const cost = ceilDiv(mul(base, u64(multiplierMilli, 'price_multiplier_milli'), 'cost'), 1000n);
  return cost < 1n ? 1n : cost;
}

/**
 * Provider stake (decisions D7): ⌈cost × stake_milli / 1000⌉, with `stake_milli` from `sys.lease`
 * (default 0: no stake on this network). The reference's older ⌈cost/5⌉ is stake_milli 200.
 */
export function leaseStake(cost: bigint, stakeMilli: bigint = 0n): bigint {
  return ceilDiv(mul(u64(cost, 'cost'), u64(stakeMilli, 'stake_milli'), 'stake'), 1000n);
}

/**
 * R after the payout cap (protocol.md section 6): min(locked_r, ⌈locked_payout_cap·1000 /
 * locked_twap_milli⌉) when cap and TWAP are both non-zero, else locked_r.
 *
 * The cap term is computed exactly: a cap so large that cap·1000 passes 2^64-1 only means the cap
 * does not bind, and min() then returns locked_r, which fits. (The spec does not say whether the
 * reference checks this intermediate product; such a cap is beyond the whole XE supply.)
 */
export function cappedR(p: LockedEmissionParams): bigint {
  const r = u64(p.locked_r, 'locked_r');
  const cap = u64(p.locked_payout_cap, 'locked_payout_cap');
  const twap = u64(p.locked_twap_milli, 'locked_twap_milli');
  if (cap === 0n || twap === 0n) return r;
  const capR = ceilDiv(cap * 1000n, twap);
  return capR < r ? capR : r;
}

/** XE emitted at settle, micro-XE: max(1, ⌈cost × R / 1000⌉), R being the capped R. */
export function leaseEmission(cost: bigint, r: bigint): bigint {
  const e = ceilDiv(mul(u64(cost, 'cost'), u64(r, 'r'), 'emission'), 1000n);
  return e < 1n ? 1n : e;
}

/**
 * The triple a provider locks into its accept: the epoch's (r_effective, payout_cap,
 * twap_milli_usd), or R = 2000 uncapped when the state chain has no epoch yet.
 */
export function lockedParamsFor(epoch: EpochEmission | undefined): LockedEmissionParams {
  if (epoch === undefined) return { locked_r: FALLBACK_R, locked_payout_cap: 0n, locked_twap_milli: 0n };
  return {
    locked_r: epoch.r_effective,
    locked_payout_cap: epoch.payout_cap,
    locked_twap_milli: epoch.twap_milli_usd,
  };
}

// ---- dimension bounds (reference-behavior.md 3.3) ------------------------------------------------

export const MAX_LEASE_VCPUS = 4096n;
export const MAX_LEASE_MEMORY_MB = 67_108_864n; // 64 TiB
export const MAX_LEASE_DISK_GB = 1_048_576n; // 1 PiB
export const MAX_LEASE_DURATION_SECS = 31_536_000n; // 365 days
/** The compiled minimum duration; a genesis may pin another (see timing.ts). */
export const DEFAULT_LEASE_MIN_DURATION_SECS = 60n;

/**
 * Refuses a lease outside the bounds: all dimensions zero, one above its maximum, or a duration
 * outside [minDurationSecs, 365 days]. `minDurationSecs` is the genesis-pinned minimum.
 */
export function checkLeaseBounds(
  dims: LeaseDimensions,
  minDurationSecs: bigint = DEFAULT_LEASE_MIN_DURATION_SECS,
): void {
  const fail = (message: string, field: string): never => {
    throw new LeasingError('lease_bounds', message, field);
  };
  if (dims.vcpus === 0n && dims.memory_mb === 0n && dims.disk_gb === 0n) {
    fail('a lease needs at least one of vcpus, memory_mb or disk_gb', 'vcpus');
  }
  const max = (v: bigint, limit: bigint, field: string) => {
    if (v < 0n || v > limit) fail(`${field} must be from 0 to ${limit}`, field);
  };
  max(dims.vcpus, MAX_LEASE_VCPUS, 'vcpus');
  max(dims.memory_mb, MAX_LEASE_MEMORY_MB, 'memory_mb');
  max(dims.disk_gb, MAX_LEASE_DISK_GB, 'disk_gb');
  if (dims.duration < minDurationSecs || dims.duration > MAX_LEASE_DURATION_SECS) {
    fail(`duration must be from ${minDurationSecs} to ${MAX_LEASE_DURATION_SECS} seconds`, 'duration');
  }
}
