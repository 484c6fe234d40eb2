import { U64_MAX } from './int.ts';

/**
 * The lease cost formula and the dimension bounds (protocol.md section 6, reference-behavior.md 3.3,
 * 4.5), isomorphic: the ledger's lease rules (through node-core/leasing/pricing.ts) and the GUI's
 * quote compute the same bigint micro-XUSD, step by step checked against 2^64-1 as the reference
 * node's unsigned 64-bit arithmetic is. Failures are LeaseCostError with a stable code; the ledger
 * side turns them into its LeasingError (pricing.ts).
 */

export type LeaseCostErrorCode =
  | 'overflow' // an amount step would pass 2^64-1
  | 'out_of_range' // an input that is not a u64 (a negative bigint: a caller's bug)
  | 'lease_bounds'; // dimensions or duration outside reference-behavior.md 3.3

export class LeaseCostError extends Error {
  readonly code: LeaseCostErrorCode;
  /** The field at fault, when one is. */
  readonly field: string | undefined;

  constructor(code: LeaseCostErrorCode, message: string, field?: string) {
    super(message);
    this.name = 'LeaseCostError';
    this.code = code;
    this.field = field;
  }
}

/** Hourly price of one unit of each dimension, micro-XUSD, before the certificate's multiplier. */
export const VCPU_PRICE_PER_HOUR = 20_000n;
export const MEMORY_GIB_PRICE_PER_HOUR = 10_000n;
export const DISK_GB_PRICE_PER_HOUR = 1_000n;

/** The `price_multiplier_milli` a provider has unless set (its range: protocol/certificate.ts). */
export const DEFAULT_PRICE_MULTIPLIER_MILLI = 1000n;

export interface LeaseDimensions {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  /** Seconds. */
  duration: bigint;
}

/** `v` unchanged when it is a u64, else LeaseCostError 'out_of_range' naming `field`. */
export function u64(v: bigint, field: string): bigint {
  if (v < 0n || v > U64_MAX) throw new LeaseCostError('out_of_range', `${field} is not a u64`, field);
  return v;
}

/** a × b, refused past 2^64-1 (`what` names the step in the error). */
export function checkedMul(a: bigint, b: bigint, what: string): bigint {
  const p = a * b;
  if (p > U64_MAX) throw new LeaseCostError('overflow', `lease ${what} overflows 2^64-1`);
  return p;
}

/** a + b, refused past 2^64-1. */
export function checkedAdd(a: bigint, b: bigint, what: string): bigint {
  const s = a + b;
  if (s > U64_MAX) throw new LeaseCostError('overflow', `lease ${what} overflows 2^64-1`);
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
  const perHour = checkedAdd(
    checkedAdd(
      checkedMul(u64(dims.vcpus, 'vcpus'), VCPU_PRICE_PER_HOUR, 'vcpu price'),
      checkedMul(memGiB, MEMORY_GIB_PRICE_PER_HOUR, 'memory price'),
      'hourly price',
    ),
    checkedMul(u64(dims.disk_gb, 'disk_gb'), DISK_GB_PRICE_PER_HOUR, 'disk price'),
    'hourly price',
  );
  const base = ceilDiv(checkedMul(perHour, minutes, 'base cost'), 60n);
  const cost = ceilDiv(checkedMul(base, u64(multiplierMilli, 'price_multiplier_milli'), 'cost'), 1000n);
  return cost < 1n ? 1n : cost;
}

// ---- dimension bounds (reference-behavior.md 3.3) ------------------------------------------------

export const MAX_LEASE_VCPUS = 4096n;
export const MAX_LEASE_MEMORY_MB = 67_108_864n; // 64 TiB
export const MAX_LEASE_DISK_GB = 1_048_576n; // 1 PiB
export const MAX_LEASE_DURATION_SECS = 31_536_000n; // 365 days
/** The compiled minimum duration; a genesis may pin another (node-core/leasing/timing.ts). */
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
    throw new LeaseCostError('lease_bounds', message, field);
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
