import { describe, expect, it } from 'vitest';
import { LeasingError } from '../../node-core/leasing/errors.ts';
import {
  cappedR,
  ceilDiv,
  checkLeaseBounds,
  FALLBACK_R,
  leaseCost,
  leaseEmission,
  leaseStake,
  lockedParamsFor,
  type LeaseDimensions,
} from '../../node-core/leasing/pricing.ts';

const U64_MAX = 2n ** 64n - 1n;
const dims = (vcpus: bigint, memory_mb: bigint, disk_gb: bigint, duration: bigint): LeaseDimensions => ({
  vcpus,
  memory_mb,
  disk_gb,
  duration,
});

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof LeasingError) return e.code;
    throw e;
  }
  return undefined;
}

describe('leaseCost', () => {
  it('matches the worked examples of the specification', () => {
    // reference-behavior.md 4.5: per_hour 31,000, 5 minutes, ⌈31,000·5/60⌉ = 2,584.
    expect(leaseCost(dims(1n, 1024n, 1n, 300n), 1000n)).toBe(2584n);
    // protocol.md section 6 (a reference-client unit test): 60 s at ×2.5.
    expect(leaseCost(dims(1n, 1024n, 1n, 60n), 2500n)).toBe(1293n);
  });

  it('defaults the multiplier to 1000', () => {
    expect(leaseCost(dims(1n, 1024n, 1n, 300n))).toBe(2584n);
  });

  it('bills every started minute', () => {
    // 1 vCPU: 20,000/h. 60 s = 1 min → ⌈20,000/60⌉ = 334; 61 s = 2 min → ⌈40,000/60⌉ = 667.
    expect(leaseCost(dims(1n, 0n, 0n, 60n))).toBe(334n);
    expect(leaseCost(dims(1n, 0n, 0n, 61n))).toBe(667n);
    expect(leaseCost(dims(1n, 0n, 0n, 120n))).toBe(667n);
    expect(leaseCost(dims(1n, 0n, 0n, 1n))).toBe(334n);
  });

  it('bills memory in started GiB', () => {
    // 1 MB and 1024 MB are both 1 GiB (10,000/h); 1025 MB is 2 GiB. One hour.
    expect(leaseCost(dims(0n, 1n, 0n, 3600n))).toBe(10_000n);
    expect(leaseCost(dims(0n, 1024n, 0n, 3600n))).toBe(10_000n);
    expect(leaseCost(dims(0n, 1025n, 0n, 3600n))).toBe(20_000n);
  });

  it('rounds the multiplier step up and never goes below 1', () => {
    // 1 GB disk for one minute: ⌈1000/60⌉ = 17; ×0.5 → ⌈8.5⌉ = 9.
    expect(leaseCost(dims(0n, 0n, 1n, 60n), 500n)).toBe(9n);
    // Nothing to bill (the bounds check refuses this lease; the formula still gives the minimum).
    expect(leaseCost(dims(0n, 0n, 0n, 60n))).toBe(1n);
    expect(leaseCost(dims(0n, 0n, 1n, 60n), 0n)).toBe(1n);
  });

  it('refuses every step past 2^64-1 with an overflow error', () => {
    // vcpus × 20,000 overflows.
    expect(code(() => leaseCost(dims(U64_MAX / 20_000n + 1n, 0n, 0n, 60n)))).toBe('overflow');
    // memory GiB × 10,000 overflows (⌈U64_MAX/1024⌉ GiB).
    expect(code(() => leaseCost(dims(0n, U64_MAX, 0n, 60n)))).toBe('overflow');
    // disk × 1,000 overflows.
    expect(code(() => leaseCost(dims(0n, 0n, U64_MAX / 1000n + 1n, 60n)))).toBe('overflow');
    // The sum of the three overflows though each term fits.
    const v = U64_MAX / 20_000n;
    const d = U64_MAX / 1000n;
    expect(code(() => leaseCost(dims(v, 0n, d, 60n)))).toBe('overflow');
    // per_hour × minutes overflows: 2^64-1 seconds is far too long.
    expect(code(() => leaseCost(dims(1n, 0n, 0n, U64_MAX)))).toBe('overflow');
    // base × multiplier overflows.
    expect(code(() => leaseCost(dims(1n, 0n, 0n, 60n), U64_MAX))).toBe('overflow');
  });

  it('accepts the largest values that fit exactly', () => {
    // per_hour = 20,000·v; minutes 60 (one hour): base = per_hour = 20,000·v; ×1000/1000.
    const v = U64_MAX / 20_000n / 1000n;
    expect(leaseCost(dims(v, 0n, 0n, 3600n))).toBe(v * 20_000n);
    // 1 GB disk for a minute: base ⌈1000/60⌉ = 17, and 17 divides 2^64-1, so base × multiplier can
    // be exactly 2^64-1 (fits) or pass it by 17 (overflow).
    expect(leaseCost(dims(0n, 0n, 1n, 60n), U64_MAX / 17n)).toBe(ceilDiv(U64_MAX, 1000n));
    expect(code(() => leaseCost(dims(0n, 0n, 1n, 60n), U64_MAX / 17n + 1n))).toBe('overflow');
  });

  it('refuses negative inputs as out of range', () => {
    expect(code(() => leaseCost(dims(-1n, 0n, 0n, 60n)))).toBe('out_of_range');
    expect(code(() => leaseCost(dims(1n, 0n, 0n, 60n), -1n))).toBe('out_of_range');
  });
});

describe('leaseStake (decisions D7)', () => {
  it('is 0 with the default stake_milli 0', () => {
    expect(leaseStake(2584n)).toBe(0n);
    expect(leaseStake(2584n, 0n)).toBe(0n);
  });

  it('is ⌈cost × stake_milli / 1000⌉', () => {
    expect(leaseStake(2584n, 200n)).toBe(517n); // ⌈516.8⌉, the older reference's ⌈cost/5⌉
    expect(leaseStake(1n, 1n)).toBe(1n);
    expect(leaseStake(1000n, 1000n)).toBe(1000n);
    expect(leaseStake(3n, 500n)).toBe(2n);
  });

  it('refuses an overflowing product', () => {
    expect(code(() => leaseStake(U64_MAX, 2n))).toBe('overflow');
  });
});

describe('cappedR', () => {
  it('is locked_r when cap or TWAP is zero', () => {
    expect(cappedR({ locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 500n })).toBe(2000n);
    expect(cappedR({ locked_r: 2000n, locked_payout_cap: 5n, locked_twap_milli: 0n })).toBe(2000n);
  });

  it('takes the smaller of locked_r and ⌈cap·1000/twap⌉', () => {
    // ⌈1000·1000/700⌉ = ⌈1428.57⌉ = 1429 < 2000.
    expect(cappedR({ locked_r: 2000n, locked_payout_cap: 1000n, locked_twap_milli: 700n })).toBe(1429n);
    // ⌈3·1000/1⌉ = 3000 > 2000.
    expect(cappedR({ locked_r: 2000n, locked_payout_cap: 3n, locked_twap_milli: 1n })).toBe(2000n);
    // Exactly divisible: no rounding up.
    expect(cappedR({ locked_r: 2000n, locked_payout_cap: 7n, locked_twap_milli: 7n })).toBe(1000n);
  });

  it('lets a cap whose product passes 2^64-1 not bind', () => {
    expect(cappedR({ locked_r: 2000n, locked_payout_cap: U64_MAX, locked_twap_milli: 1n })).toBe(2000n);
  });
});

describe('leaseEmission', () => {
  it('matches the worked example: 2,584 at R 2000 → 5,168', () => {
    expect(leaseEmission(2584n, 2000n)).toBe(5168n);
    expect(leaseEmission(2584n, FALLBACK_R)).toBe(5168n);
  });

  it('rounds up and never goes below 1', () => {
    expect(leaseEmission(1n, 1n)).toBe(1n); // ⌈0.001⌉
    expect(leaseEmission(1001n, 1n)).toBe(2n); // ⌈1.001⌉
    expect(leaseEmission(1000n, 0n)).toBe(1n);
  });

  it('refuses an overflowing product', () => {
    expect(code(() => leaseEmission(U64_MAX, 2n))).toBe('overflow');
    expect(leaseEmission(U64_MAX, 1n)).toBe(ceilDiv(U64_MAX, 1000n));
  });

  it('composes with capped R', () => {
    const r = cappedR({ locked_r: 2000n, locked_payout_cap: 1000n, locked_twap_milli: 700n });
    expect(leaseEmission(2584n, r)).toBe(3693n); // ⌈2584·1429/1000⌉ = ⌈3692.536⌉
  });
});

describe('lockedParamsFor', () => {
  it('locks the epoch triple, or R 2000 uncapped without an epoch', () => {
    expect(lockedParamsFor({ r_effective: 1500n, payout_cap: 9n, twap_milli_usd: 800n })).toEqual({
      locked_r: 1500n,
      locked_payout_cap: 9n,
      locked_twap_milli: 800n,
    });
    expect(lockedParamsFor(undefined)).toEqual({
      locked_r: 2000n,
      locked_payout_cap: 0n,
      locked_twap_milli: 0n,
    });
  });
});

describe('checkLeaseBounds (reference-behavior.md 3.3)', () => {
  const field = (f: () => void): string | undefined => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(LeasingError);
      expect((e as LeasingError).code).toBe('lease_bounds');
      return (e as LeasingError).field;
    }
    return undefined;
  };

  it('accepts leases within bounds, each dimension alone', () => {
    expect(field(() => checkLeaseBounds(dims(1n, 0n, 0n, 60n)))).toBeUndefined();
    expect(field(() => checkLeaseBounds(dims(0n, 1n, 0n, 60n)))).toBeUndefined();
    expect(field(() => checkLeaseBounds(dims(0n, 0n, 1n, 60n)))).toBeUndefined();
    expect(field(() => checkLeaseBounds(dims(4096n, 67_108_864n, 1_048_576n, 31_536_000n)))).toBeUndefined();
  });

  it('refuses a lease with no dimension', () => {
    expect(field(() => checkLeaseBounds(dims(0n, 0n, 0n, 60n)))).toBe('vcpus');
  });

  it('refuses each dimension one past its maximum', () => {
    expect(field(() => checkLeaseBounds(dims(4097n, 0n, 0n, 60n)))).toBe('vcpus');
    expect(field(() => checkLeaseBounds(dims(1n, 67_108_865n, 0n, 60n)))).toBe('memory_mb');
    expect(field(() => checkLeaseBounds(dims(1n, 0n, 1_048_577n, 60n)))).toBe('disk_gb');
  });

  it('holds the duration to [minimum, 31,536,000]', () => {
    expect(field(() => checkLeaseBounds(dims(1n, 0n, 0n, 59n)))).toBe('duration');
    expect(field(() => checkLeaseBounds(dims(1n, 0n, 0n, 31_536_001n)))).toBe('duration');
    // A genesis-pinned minimum (testnet-0003 pins 5 s).
    expect(field(() => checkLeaseBounds(dims(1n, 0n, 0n, 5n), 5n))).toBeUndefined();
    expect(field(() => checkLeaseBounds(dims(1n, 0n, 0n, 4n), 5n))).toBe('duration');
  });
});
