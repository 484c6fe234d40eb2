import {
  ceilDiv,
  checkedMul,
  checkLeaseBounds as checkBounds,
  type LeaseDimensions,
  LeaseCostError,
  leaseCost as cost,
  u64 as u64Checked,
} from '../protocol/lease-cost.ts';
import { LeasingError } from './errors.ts';

/**
 * Lease amounts (protocol.md section 6, reference-behavior.md 4.5, decisions D7): the cost a
 * consumer escrows, the provider's stake, the XE emitted at settle, and the dimension bounds.
 * Everything is bigint micro-units; every step of the cost and the emission is checked against
 * 2^64-1, as the reference node's unsigned 64-bit arithmetic is (an overflow rejects the block).
 *
 * The cost formula and the bounds are isomorphic (node-core/protocol/lease-cost.ts, which the GUI's
 * quote uses too); here they are re-exported with their failures as LeasingError.
 */
export {
  ceilDiv,
  DEFAULT_LEASE_MIN_DURATION_SECS,
  DEFAULT_PRICE_MULTIPLIER_MILLI,
  DISK_GB_PRICE_PER_HOUR,
  type LeaseDimensions,
  MAX_LEASE_DISK_GB,
  MAX_LEASE_DURATION_SECS,
  MAX_LEASE_MEMORY_MB,
  MAX_LEASE_VCPUS,
  MEMORY_GIB_PRICE_PER_HOUR,
  VCPU_PRICE_PER_HOUR,
} from '../protocol/lease-cost.ts';

/** Runs `fn`, a LeaseCostError coming out as the same LeasingError (code, message, field). */
function leasing<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof LeaseCostError) throw new LeasingError(e.code, e.message, e.field);
    throw e;
  }
}

/** R used when no epoch exists yet (the genesis `epoch.0` has the same value). */
export const FALLBACK_R = 2000n;

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

const u64 = (v: bigint, field: string): bigint => leasing(() => u64Checked(v, field));
const mul = (a: bigint, b: bigint, what: string): bigint => leasing(() => checkedMul(a, b, what));

/** The lease cost in micro-XUSD (protocol/lease-cost.ts), failures as LeasingError. */
export function leaseCost(dims: LeaseDimensions, multiplierMilli?: bigint): bigint {
  return leasing(() => cost(dims, multiplierMilli));
}

/** The dimension bounds (protocol/lease-cost.ts), a refusal as LeasingError 'lease_bounds'. */
export function checkLeaseBounds(dims: LeaseDimensions, minDurationSecs?: bigint): void {
  leasing(() => checkBounds(dims, minDurationSecs));
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
