import { describe, expect, it } from 'vitest';
import {
  archiveEligible,
  canForceSettle,
  canSettle,
  DEFAULT_LEASE_TIMING,
  forceSettleWindow,
  leaseExpiry,
  leaseTimingFromGenesis,
  settleWindow,
} from '../../node-core/leasing/timing.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';

const S = 1_000_000_000n;

/** testnet-0003's genesis pins (reference-behavior.md 4.4). */
const TESTNET_0003 = {
  lease_min_duration_secs: 5n,
  lease_settle_grace_ns: 120n * S,
  lease_force_settle_gap_ns: 300n * S,
  lease_escrow_expiry_ns: 3600n * S,
  lease_archive_gap_ns: 600n * S,
  max_attestation_skew_ns: 60n * S,
};

describe('leaseTimingFromGenesis', () => {
  it('has the compiled defaults: 60 s / 1 h / 25 min / 365 d / 1 h / 10 min', () => {
    expect(DEFAULT_LEASE_TIMING).toEqual({
      min_duration_secs: 60n,
      settle_grace_ns: 3600n * S,
      force_settle_gap_ns: 1500n * S,
      escrow_expiry_ns: 365n * 86_400n * S,
      archive_gap_ns: 3600n * S,
      max_attestation_skew_ns: 600n * S,
    });
    expect(leaseTimingFromGenesis(undefined)).toEqual(DEFAULT_LEASE_TIMING);
    expect(leaseTimingFromGenesis({})).toEqual(DEFAULT_LEASE_TIMING);
  });

  it('takes the pinned values of a genesis', () => {
    expect(leaseTimingFromGenesis(TESTNET_0003)).toEqual({
      min_duration_secs: 5n,
      settle_grace_ns: 120n * S,
      force_settle_gap_ns: 300n * S,
      escrow_expiry_ns: 3600n * S,
      archive_gap_ns: 600n * S,
      max_attestation_skew_ns: 60n * S,
    });
  });

  it('reads 0 as the default, field by field', () => {
    const t = leaseTimingFromGenesis({
      ...TESTNET_0003,
      lease_settle_grace_ns: 0n,
      max_attestation_skew_ns: 0n,
    });
    expect(t.settle_grace_ns).toBe(DEFAULT_LEASE_TIMING.settle_grace_ns);
    expect(t.max_attestation_skew_ns).toBe(DEFAULT_LEASE_TIMING.max_attestation_skew_ns);
    expect(t.min_duration_secs).toBe(5n);
  });

  it('is the JSON shape GET /node prints under lease_timing', () => {
    expect(stringifyJson(leaseTimingFromGenesis(TESTNET_0003))).toBe(
      '{"min_duration_secs":5,"settle_grace_ns":120000000000,"force_settle_gap_ns":300000000000,' +
        '"escrow_expiry_ns":3600000000000,"archive_gap_ns":600000000000,"max_attestation_skew_ns":60000000000}',
    );
  });
});

describe('windows', () => {
  const timing = leaseTimingFromGenesis(TESTNET_0003);
  const start = 1_790_000_000_000_000_000n;
  const expiry = leaseExpiry(start, 300n);
  const grace = timing.settle_grace_ns;
  const gap = timing.force_settle_gap_ns;
  const escrow = timing.escrow_expiry_ns;

  it('expiry is start + duration seconds in ns', () => {
    expect(expiry).toBe(start + 300n * S);
  });

  it('settle: [expiry, expiry + grace], closed at both ends (LS-01)', () => {
    expect(settleWindow(expiry - 1n, expiry, timing)).toBe('before');
    expect(settleWindow(expiry, expiry, timing)).toBe('open');
    expect(settleWindow(expiry + grace, expiry, timing)).toBe('open');
    expect(settleWindow(expiry + grace + 1n, expiry, timing)).toBe('after');
    expect(canSettle(expiry, expiry, timing)).toBe(true);
    expect(canSettle(expiry + grace + 1n, expiry, timing)).toBe(false);
  });

  it('force-settle: [expiry + grace + gap, expiry + escrow expiry) (LS-04)', () => {
    expect(forceSettleWindow(expiry + grace + gap - 1n, expiry, timing)).toBe('before');
    expect(forceSettleWindow(expiry + grace + gap, expiry, timing)).toBe('open');
    expect(forceSettleWindow(expiry + escrow - 1n, expiry, timing)).toBe('open');
    expect(forceSettleWindow(expiry + escrow, expiry, timing)).toBe('after');
    expect(canForceSettle(expiry + escrow, expiry, timing)).toBe(false);
  });

  it('settle and force-settle are never open at the same instant (LS-02)', () => {
    for (const t of [expiry, expiry + grace, expiry + grace + 1n, expiry + grace + gap, expiry + escrow]) {
      expect(canSettle(t, expiry, timing) && canForceSettle(t, expiry, timing)).toBe(false);
    }
  });

  it('archive: strictly past expiry + escrow expiry + archive gap', () => {
    const edge = expiry + escrow + timing.archive_gap_ns;
    expect(archiveEligible(edge, expiry, timing)).toBe(false);
    expect(archiveEligible(edge + 1n, expiry, timing)).toBe(true);
  });
});
