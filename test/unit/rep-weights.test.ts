import { describe, expect, it } from 'vitest';
import { eligibility, eligibleCount, eligibleWeights, weightOf } from '../../node-core/consensus/weights.ts';
import { GroupWeights, RepWeights } from '../../node-core/ledger/rep-weights.ts';
import type { RepresentativePolicy } from '../../node-core/statechain/sys.ts';

/** A small deterministic generator (xorshift32), so a failure names its seed. */
function rng(seed: number): (n: number) => number {
  let x = seed || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

const REPS = Array.from({ length: 12 }, (_, i) => `rep${i}`);

/**
 * The eligibility rule written out over a plain map, pass over everything (reference-behavior.md
 * 2.1 and 2.3): the figures the incremental versions must give.
 */
function reference(all: Map<string, bigint>, policy: RepresentativePolicy) {
  const positive = new Map([...all].filter(([, w]) => w > 0n));
  const sum = (m: Map<string, bigint>) => [...m.values()].reduce((a, b) => a + b, 0n);
  if (policy.mode === 'open') return { weights: positive, total: sum(positive), failedOpen: false };
  const allowed = new Set(policy.addresses);
  const weights = new Map([...positive].filter(([rep]) => allowed.has(rep)));
  if (sum(weights) === 0n && sum(positive) > 0n)
    return { weights: positive, total: sum(positive), failedOpen: true };
  return { weights, total: sum(weights), failedOpen: false };
}

describe('RepWeights', () => {
  it('keeps the sum, the count and a version through sets, overwrites and removals', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const r = rng(seed);
      const w = new RepWeights();
      const plain = new Map<string, bigint>();
      for (let step = 0; step < 200; step++) {
        const rep = REPS[r(REPS.length)]!;
        const v = r(4) === 0 ? 0n : BigInt(r(1_000_000)) * 10n ** 18n;
        const version = w.version;
        w.set(rep, v);
        if (v === 0n) plain.delete(rep);
        else plain.set(rep, v);
        expect(w.version).toBe(version + 1);
        expect(new Map(w.entries())).toEqual(plain);
        expect(w.size).toBe(plain.size);
        expect(w.total).toBe([...plain.values()].reduce((a, b) => a + b, 0n));
      }
    }
  });

  it('never holds a weight of zero or below', () => {
    const w = RepWeights.from([
      ['a', 5n],
      ['b', 0n],
      ['c', -3n],
    ]);
    expect([...w.entries()]).toEqual([['a', 5n]]);
    expect(w.total).toBe(5n);
    expect(w.get('b')).toBeUndefined();
  });
});

describe('GroupWeights', () => {
  it("gives the base with a group's running values over it, and the total from the running delta", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const r = rng(seed);
      const base = RepWeights.from(REPS.slice(0, 6).map((rep) => [rep, BigInt(1 + r(1000))]));
      // What the ledger's addWeight does: a running value per representative, clamped at 0, and
      // the sum of every change.
      const changed = new Map<string, bigint>();
      let delta = 0n;
      for (let step = 0; step < 100; step++) {
        const rep = REPS[r(REPS.length)]!;
        const cur = changed.get(rep) ?? base.get(rep) ?? 0n;
        let next = cur + BigInt(r(2001) - 1000);
        if (next < 0n) next = 0n;
        changed.set(rep, next);
        delta += next - cur;
        const view = new GroupWeights(base, changed, delta);
        const merged = new Map(base.entries());
        for (const [k, v] of changed) {
          if (v === 0n) merged.delete(k);
          else merged.set(k, v);
        }
        for (const k of REPS) expect(view.get(k)).toBe(merged.get(k));
        expect(view.total).toBe([...merged.values()].reduce((a, b) => a + b, 0n));
      }
    }
  });
});

describe('eligibility', () => {
  it('gives what the rule over every representative gives: open, allowlists, failing open', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const plain = new Map<string, bigint>();
      for (const rep of REPS) if (r(3) > 0) plain.set(rep, BigInt(r(3)) * BigInt(1 + r(1000)));
      const listed = REPS.filter(() => r(4) === 0);
      // Duplicates, and addresses that never had weight, as a state chain may list them.
      const policy: RepresentativePolicy =
        r(3) === 0
          ? { mode: 'open' }
          : { mode: 'allowlist', addresses: [...listed, ...listed.slice(0, 1), 'nobody'] };
      const view = RepWeights.from(plain);
      const want = reference(plain, policy);
      const e = eligibility(view, policy);
      expect(e.total).toBe(want.total);
      expect(e.failedOpen).toBe(want.failedOpen);
      expect(e.restricted).toBe(policy.mode === 'allowlist');
      for (const rep of [...REPS, 'nobody']) expect(e.weight(rep)).toBe(want.weights.get(rep) ?? 0n);
      expect(weightOf(REPS, e)).toBe(want.total);

      const listing = eligibleWeights(view, policy);
      expect(listing.weights).toEqual(want.weights);
      const positive = new Map([...plain].filter(([, w]) => w > 0n));
      expect(new Map([...listing.weights, ...listing.ineligible])).toEqual(positive);
      expect(listing.ineligibleTotal).toBe([...listing.ineligible.values()].reduce((a, b) => a + b, 0n));
      expect(eligibleCount(view, policy)).toBe(want.weights.size);
    }
  });

  it('reads only the allowlist, not every representative, under an allowlist', () => {
    const reads: string[] = [];
    const many = RepWeights.from(Array.from({ length: 10_000 }, (_, i) => [`r${i}`, 1n] as [string, bigint]));
    const counting = {
      total: many.total,
      get: (rep: string) => (reads.push(rep), many.get(rep)),
    };
    const e = eligibility(counting, { mode: 'allowlist', addresses: ['r1', 'r2'] });
    expect(e.total).toBe(2n);
    expect(reads).toEqual(['r1', 'r2']);
    expect(eligibility(counting, { mode: 'open' }).total).toBe(10_000n);
    expect(reads).toHaveLength(2);
  });
});
