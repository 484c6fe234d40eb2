import { describe, expect, it } from 'vitest';
import type { LeaseInfo } from '../../node-core/client/leasing.ts';
import { LeaseCostError, leaseCost } from '../../node-core/protocol/lease-cost.ts';
import { leaseCost as ledgerLeaseCost } from '../../node-core/leasing/pricing.ts';
import { LeasingError } from '../../node-core/leasing/errors.ts';
import { expiryAlert, holdDecision, holdLeadSecs, HOLD_RETRY_SECS } from '../../renderer/src/leasing/hold.ts';
import {
  leaseActions,
  lockedParamsAt,
  parseLeaseForm,
  quoteLease,
  renewalCost,
  renewalProblem,
  spanText,
} from '../../renderer/src/leasing/quote.ts';

/** The Leasing page's pure logic: the quote, the windows of each action, hold scheduling, alerts. */
const S = 1_000_000_000n;
const T0 = 1_700_000_000n * S;

function lease(over: Partial<LeaseInfo> = {}): LeaseInfo {
  return {
    lease_hash: 'a'.repeat(64),
    state: 'accepted',
    consumer: 'c'.repeat(64),
    provider: 'p'.repeat(64),
    vcpus: 1n,
    memory_mb: 1024n,
    disk_gb: 1n,
    duration: 600n,
    cost: 1000n,
    stake: 0n,
    start_time: T0,
    settled: false,
    renewal_count: 0,
    renewals: [],
    created_at: T0 - S,
    ...over,
  };
}

const timing = {
  min_duration_secs: 60n,
  settle_grace_ns: 60n * S,
  force_settle_gap_ns: 1260n * S,
  escrow_expiry_ns: 1800n * S,
  max_attestation_skew_ns: 600n * S,
};

describe('quote', () => {
  it('is the ledger’s own formula (same value as the lease rule’s)', () => {
    const d = { vcpus: 1n, memory_mb: 1024n, disk_gb: 1n, duration: 60n };
    expect(leaseCost(d, 2500n)).toBe(1293n); // the reference client's example
    expect(ledgerLeaseCost(d, 2500n)).toBe(1293n);
    const big = { vcpus: 4096n, memory_mb: 67_108_864n, disk_gb: 1_048_576n, duration: 31_536_000n };
    expect(leaseCost(big, 10_000n)).toBe(ledgerLeaseCost(big, 10_000n));
  });

  it('parses the form with units and checks the bounds, naming the field', () => {
    const f = { vcpus: '1', memory_mb: '512', disk_gb: '1', duration: '2', unit: 'h' as const };
    expect(parseLeaseForm(f)).toEqual({ dims: { vcpus: 1n, memory_mb: 512n, disk_gb: 1n, duration: 7200n } });
    expect(parseLeaseForm({ ...f, vcpus: '1.5' })).toMatchObject({ field: 'vcpus' });
    expect(parseLeaseForm({ ...f, vcpus: '0', memory_mb: '0', disk_gb: '0' })).toMatchObject({
      field: 'vcpus',
    });
    expect(parseLeaseForm({ ...f, duration: '30', unit: 's' })).toMatchObject({ field: 'duration' });
    // A genesis with a 5 s minimum allows what the default refuses.
    expect(parseLeaseForm({ ...f, duration: '30', unit: 's' }, 5n)).toHaveProperty('dims');
    expect(parseLeaseForm({ ...f, duration: '366', unit: 'd' })).toMatchObject({ field: 'duration' });
  });

  it('checks the balance exactly, to the micro-unit', () => {
    const d = { vcpus: 1n, memory_mb: 1024n, disk_gb: 1n, duration: 60n };
    expect(quoteLease(d, 2500n, 1293n)).toEqual({ cost: 1293n, after: 0n });
    expect(quoteLease(d, 2500n, 1292n)).toEqual({ cost: 1293n, shortfall: 1n });
  });

  it('prices a renewal at the given multiplier and refuses extensions the ledger would', () => {
    const l = lease();
    expect(renewalCost(l, 60n, 2500n)).toBe(1293n);
    expect(renewalProblem(l, 30n)).toMatch(/duration/);
    expect(renewalProblem(l, 30n, 5n)).toBeUndefined();
    expect(renewalProblem(lease({ duration: 31_536_000n - 59n }), 60n)).toMatch(/at most/);
  });

  it('the protocol module throws LeaseCostError, pricing.ts the same as LeasingError', () => {
    const bad = { vcpus: -1n, memory_mb: 0n, disk_gb: 0n, duration: 60n };
    expect(() => leaseCost(bad)).toThrow(LeaseCostError);
    expect(() => ledgerLeaseCost(bad)).toThrow(LeasingError);
  });
});

describe('actions and their windows', () => {
  it('cancel only while created', () => {
    expect(leaseActions(lease({ state: 'created', start_time: 0n }), T0, timing).cancel.ok).toBe(true);
    expect(leaseActions(lease(), T0, timing).cancel.ok).toBe(false);
  });

  it('renew only while accepted and before expiry', () => {
    const l = lease();
    expect(leaseActions(l, T0 + 599n * S, timing).renew).toMatchObject({ ok: true, until: T0 + 600n * S });
    expect(leaseActions(l, T0 + 600n * S, timing).renew.ok).toBe(false);
    expect(leaseActions(lease({ state: 'created', start_time: 0n }), T0, timing).renew.ok).toBe(false);
  });

  it('force-settle only in [expiry + grace + gap, expiry + escrow expiry)', () => {
    const l = lease();
    const from = T0 + 600n * S + 60n * S + 1260n * S;
    expect(leaseActions(l, from - 1n, timing).forceSettle).toMatchObject({ ok: false, from });
    expect(leaseActions(l, from, timing).forceSettle.ok).toBe(true);
    expect(leaseActions(l, T0 + 600n * S + 1800n * S, timing).forceSettle.ok).toBe(false);
    expect(leaseActions(lease({ settled: true }), from, timing).forceSettle.ok).toBe(false);
    expect(leaseActions(l, from, undefined).forceSettle.ok).toBe(false);
  });

  it('locks the newest epoch started by the attested time, else the fallback', () => {
    expect(lockedParamsAt([], T0)).toEqual({ locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 0n });
    const e = (epoch: bigint, start: bigint, r: bigint) => ({
      epoch,
      start_ns: start,
      r_effective: r,
      payout_cap: 7n,
      twap_milli_usd: 9n,
    });
    const epochs = [e(0n, 0n, 2000n), e(1n, T0, 1500n), e(2n, T0 + S, 1000n)];
    expect(lockedParamsAt(epochs, T0).locked_r).toBe(1500n);
    expect(lockedParamsAt(epochs, T0 + S).locked_r).toBe(1000n);
    expect(() => lockedParamsAt([e(3n, T0 + S, 1n)], T0)).toThrow(/no epoch/);
  });

  it('writes spans', () => {
    expect(spanText(45n)).toBe('45 s');
    expect(spanText(3725n)).toBe('1 h 02 min');
    expect(spanText(90_000n)).toBe('1 d 1 h');
  });
});

describe('hold scheduling', () => {
  const setting = { enabled: true, segmentSecs: 600n };
  const base = { setting, spendable: 10_000n, segmentCost: 500n };
  const expiry = T0 + 600n * S;
  const lead = holdLeadSecs(600n);

  it('renews a lead time before expiry, one segment at a time', () => {
    expect(lead).toBe(150n);
    expect(holdLeadSecs(20n)).toBe(15n);
    expect(holdLeadSecs(86_400n)).toBe(300n);
    expect(holdDecision({ ...base, lease: lease(), now: T0 })).toEqual({
      kind: 'wait',
      at: expiry - lead * S,
    });
    expect(holdDecision({ ...base, lease: lease(), now: expiry - lead * S })).toEqual({
      kind: 'renew',
      duration: 600n,
      cost: 500n,
    });
  });

  it('does nothing when off, not accepted, settled or expired', () => {
    expect(holdDecision({ ...base, setting: undefined, lease: lease(), now: expiry - S })).toEqual({
      kind: 'off',
    });
    expect(
      holdDecision({ ...base, setting: { ...setting, enabled: false }, lease: lease(), now: expiry - S })
        .kind,
    ).toBe('off');
    expect(holdDecision({ ...base, lease: lease({ state: 'created', start_time: 0n }), now: T0 }).kind).toBe(
      'not-active',
    );
    expect(holdDecision({ ...base, lease: lease({ settled: true }), now: T0 }).kind).toBe('not-active');
    expect(holdDecision({ ...base, lease: lease(), now: expiry })).toEqual({ kind: 'expired' });
  });

  it('warns of low funds ahead of the renewal and does not try a renewal that would fail', () => {
    const poor = { ...base, spendable: 499n };
    // More than the warning horizon ahead: a plain wait.
    const long = lease({ duration: 3600n });
    expect(holdDecision({ ...poor, lease: long, now: T0 })).toEqual({
      kind: 'wait',
      at: T0 + (3600n - lead) * S,
    });
    // Within it: the wait carries the warning.
    expect(holdDecision({ ...poor, lease: lease(), now: T0 })).toMatchObject({
      kind: 'wait',
      lowFunds: { need: 500n, have: 499n },
    });
    expect(holdDecision({ ...poor, lease: lease(), now: expiry - S })).toEqual({
      kind: 'low-funds',
      need: 500n,
      have: 499n,
      expiry,
    });
  });

  it('waits while a renewal runs and after a failure', () => {
    const now = expiry - 10n * S;
    expect(holdDecision({ ...base, lease: lease(), now, inFlight: true }).kind).toBe('wait');
    expect(holdDecision({ ...base, lease: lease(), now, lastFailure: now - S })).toEqual({
      kind: 'wait',
      at: now - S + HOLD_RETRY_SECS * S,
    });
    expect(holdDecision({ ...base, lease: lease(), now, lastFailure: now - HOLD_RETRY_SECS * S }).kind).toBe(
      'renew',
    );
  });

  it('alerts before a lease runs out', () => {
    const l = lease(); // 600 s: alert in the last 120 s
    expect(expiryAlert(l, T0)).toBeUndefined();
    expect(expiryAlert(l, expiry - 121n * S)).toBeUndefined();
    expect(expiryAlert(l, expiry - 120n * S)).toEqual({ level: 'soon', secondsLeft: 120n });
    expect(expiryAlert(l, expiry)).toEqual({ level: 'expired' });
    expect(expiryAlert(lease({ duration: 86_400n }), T0 + (86_400n - 3601n) * S)).toBeUndefined();
    expect(expiryAlert(lease({ state: 'created', start_time: 0n }), T0)).toBeUndefined();
  });
});
