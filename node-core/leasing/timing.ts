import type { Block } from '../protocol/block.ts';

/**
 * Lease time windows (reference-behavior.md 4.4): pinned by the ledger genesis, a 0 or absent
 * field meaning the compiled default. The field names are those `GET /node` reports under
 * `lease_timing`, so the object is the JSON shape as it is.
 */
export interface LeaseTiming {
  /** Shortest lease, seconds. */
  min_duration_secs: bigint;
  /** After expiry, the provider may settle until expiry + grace (inclusive). */
  settle_grace_ns: bigint;
  /** Between the end of grace and the start of force-settle; > 2 × max skew (LS-02). */
  force_settle_gap_ns: bigint;
  /** Counted from expiry: force-settle is possible until then (exclusive). */
  escrow_expiry_ns: bigint;
  /** Extra margin after the escrow expiry before the local archive sweep. */
  archive_gap_ns: bigint;
  /** Largest |attestation timestamp - local now| accepted on the live path. */
  max_attestation_skew_ns: bigint;
}

const SECOND_NS = 1_000_000_000n;
const MINUTE_NS = 60n * SECOND_NS;
const HOUR_NS = 60n * MINUTE_NS;

/** The compiled defaults: 60 s / 1 h / 25 min / 365 d / 1 h / 10 min. */
export const DEFAULT_LEASE_TIMING: Readonly<LeaseTiming> = Object.freeze({
  min_duration_secs: 60n,
  settle_grace_ns: HOUR_NS,
  force_settle_gap_ns: 25n * MINUTE_NS,
  escrow_expiry_ns: 365n * 24n * HOUR_NS,
  archive_gap_ns: HOUR_NS,
  max_attestation_skew_ns: 10n * MINUTE_NS,
});

/** The genesis fields that pin the timing (protocol.md section 3.4). */
export type GenesisTiming = Partial<
  Pick<
    Block,
    | 'lease_min_duration_secs'
    | 'lease_settle_grace_ns'
    | 'lease_force_settle_gap_ns'
    | 'lease_escrow_expiry_ns'
    | 'lease_archive_gap_ns'
    | 'max_attestation_skew_ns'
  >
>;

/** The effective timing of a network from its ledger genesis block (or none: the defaults). */
export function leaseTimingFromGenesis(genesis: GenesisTiming | undefined): LeaseTiming {
  const g = genesis ?? {};
  const pick = (v: bigint | undefined, d: bigint) => (v === undefined || v === 0n ? d : v);
  const d = DEFAULT_LEASE_TIMING;
  return {
    min_duration_secs: pick(g.lease_min_duration_secs, d.min_duration_secs),
    settle_grace_ns: pick(g.lease_settle_grace_ns, d.settle_grace_ns),
    force_settle_gap_ns: pick(g.lease_force_settle_gap_ns, d.force_settle_gap_ns),
    escrow_expiry_ns: pick(g.lease_escrow_expiry_ns, d.escrow_expiry_ns),
    archive_gap_ns: pick(g.lease_archive_gap_ns, d.archive_gap_ns),
    max_attestation_skew_ns: pick(g.max_attestation_skew_ns, d.max_attestation_skew_ns),
  };
}

/** When an accepted lease expires: its attested start + duration seconds, in ns. */
export function leaseExpiry(startTimeNs: bigint, durationSecs: bigint): bigint {
  return startTimeNs + durationSecs * SECOND_NS;
}

/**
 * Where an attested time falls against a window: before it opens, inside, or after it closes.
 * The ledger needs the side to choose its message ("not yet expired" / "past grace").
 */
export type WindowPosition = 'before' | 'open' | 'after';

/** Settle window [expiry, expiry + grace], closed at both ends (reference-behavior.md 4.3). */
export function settleWindow(t: bigint, expiry: bigint, timing: LeaseTiming): WindowPosition {
  if (t < expiry) return 'before';
  return t > expiry + timing.settle_grace_ns ? 'after' : 'open';
}

/**
 * Force-settle window [expiry + grace + gap, expiry + escrow expiry): it opens strictly after the
 * settle window closes, since the gap is positive (LS-02), and closes when the escrow expires.
 */
export function forceSettleWindow(t: bigint, expiry: bigint, timing: LeaseTiming): WindowPosition {
  if (t < expiry + timing.settle_grace_ns + timing.force_settle_gap_ns) return 'before';
  return t >= expiry + timing.escrow_expiry_ns ? 'after' : 'open';
}

export function canSettle(t: bigint, expiry: bigint, timing: LeaseTiming): boolean {
  return settleWindow(t, expiry, timing) === 'open';
}

export function canForceSettle(t: bigint, expiry: bigint, timing: LeaseTiming): boolean {
  return forceSettleWindow(t, expiry, timing) === 'open';
}

/**
 * Whether the local archive sweep may expire an accepted, unsettled lease: the local clock is past
 * expiry + escrow expiry + archive gap ("past": strictly after; at that instant it waits a sweep).
 */
export function archiveEligible(now: bigint, expiry: bigint, timing: LeaseTiming): boolean {
  return now > expiry + timing.escrow_expiry_ns + timing.archive_gap_ns;
}
