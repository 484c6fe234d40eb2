import { describe, expect, it } from 'vitest';
import {
  epochCandidates,
  type EpochRecord,
  newestEpoch,
  parseEpoch,
} from '../../node-core/leasing/epochs.ts';

/** The epochs an accept may lock (reference-behavior.md 4.5, LS-07): the covering one and 3 before it. */
const epoch = (n: bigint, start: bigint, r = 2000n + n): EpochRecord => ({
  epoch: n,
  start_ns: start,
  r_effective: r,
  payout_cap: 0n,
  twap_milli_usd: 0n,
});

describe('lease epochs', () => {
  const epochs = [0n, 1n, 2n, 3n, 4n, 5n].map((n) => epoch(n, n * 100n));

  it('the epoch covering t and up to 3 before it, newest first', () => {
    expect(epochCandidates(epochs, 450n)!.map((e) => e.epoch)).toEqual([4n, 3n, 2n, 1n]);
    expect(epochCandidates(epochs, 500n)!.map((e) => e.epoch)).toEqual([5n, 4n, 3n, 2n]);
    expect(epochCandidates(epochs, 10_000n)!.map((e) => e.epoch)).toEqual([5n, 4n, 3n, 2n]);
    expect(epochCandidates(epochs, 150n)!.map((e) => e.epoch)).toEqual([1n, 0n]);
  });

  it('[] before the first epoch starts; undefined without any epoch (the fallback applies)', () => {
    expect(epochCandidates([epoch(7n, 1_000n)], 999n)).toEqual([]);
    expect(epochCandidates([], 1n)).toBeUndefined();
  });

  it('counts epochs by number, not by position: a gap in the numbers narrows the window', () => {
    const gappy = [epoch(1n, 100n), epoch(5n, 500n), epoch(6n, 600n)];
    expect(epochCandidates(gappy, 650n)!.map((e) => e.epoch)).toEqual([6n, 5n]);
  });

  it('parses epoch.N values, ignores other keys and malformed values; the newest is the highest number', () => {
    const e = parseEpoch(
      'epoch.12',
      '{"epoch":12,"start_ns":"5","r_effective":1500,"payout_cap":1200,"twap_milli_usd":900}',
    );
    expect(e).toEqual({
      epoch: 12n,
      start_ns: 5n,
      r_effective: 1500n,
      payout_cap: 1200n,
      twap_milli_usd: 900n,
    });
    expect(parseEpoch('epochs.12', '{}')).toBeUndefined();
    expect(parseEpoch('epoch.x', '{}')).toBeUndefined();
    expect(parseEpoch('epoch.1', 'not json')).toBeUndefined();
    expect(parseEpoch('epoch.1', '[1]')).toBeUndefined();
    expect(newestEpoch(epochs)!.epoch).toBe(5n);
    expect(newestEpoch([])).toBeUndefined();
  });
});
