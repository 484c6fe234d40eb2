import type { WeightLookup, WeightView } from '../ledger/rep-weights.ts';
import type { RepresentativePolicy } from '../statechain/sys.ts';

/**
 * Representative eligibility and the quorum rule (reference-behavior.md sections 2.1 and 2.3).
 * Only allow-listed representatives count, in numerator and denominator, except when the allowlist
 * matches no weight at all while other weight exists: then the policy fails open rather than
 * bricking finality.
 */
export interface Eligibility {
  /** The representative's eligible weight: 0 when it has none or does not count. */
  weight(rep: string): bigint;
  /** The eligible weight in all: the quorum's denominator. */
  readonly total: bigint;
  readonly restricted: boolean;
  readonly failedOpen: boolean;
}

/** Every representative's weight, eligible or not (the API's listing). */
export interface EligibleWeights extends Eligibility {
  weights: Map<string, bigint>;
  ineligible: Map<string, bigint>;
  ineligibleTotal: bigint;
}

/** Each allowlist's addresses as a set, built once per policy (a policy object is not changed). */
const allowedSets = new WeakMap<RepresentativePolicy, ReadonlySet<string>>();

function allowedOf(policy: RepresentativePolicy & { mode: 'allowlist' }): ReadonlySet<string> {
  let set = allowedSets.get(policy);
  if (set === undefined) allowedSets.set(policy, (set = new Set(policy.addresses)));
  return set;
}

/**
 * The rule applied to `w` as it stands now (consensus asks with every vote and every applied block,
 * so this is what stays cheap with many representatives): one lookup per weight asked, and the total
 * taken from `w`'s running sum, or, under an allowlist, summed over the allowlist's addresses only.
 * The figures are those of this moment: a caller holding it across writes to `w` asks again.
 */
export function eligibility(w: WeightLookup, policy: RepresentativePolicy): Eligibility {
  const any = (rep: string) => w.get(rep) ?? 0n;
  if (policy.mode === 'open') return { weight: any, total: w.total, restricted: false, failedOpen: false };
  const allowed = allowedOf(policy);
  let total = 0n;
  for (const rep of allowed) total += any(rep);
  if (total === 0n && w.total > 0n)
    return { weight: any, total: w.total, restricted: true, failedOpen: true };
  return {
    weight: (rep) => (allowed.has(rep) ? any(rep) : 0n),
    total,
    restricted: true,
    failedOpen: false,
  };
}

/** The rule with every representative listed, counted or not (a pass over all of them: on request). */
export function eligibleWeights(w: WeightView, policy: RepresentativePolicy): EligibleWeights {
  const e = eligibility(w, policy);
  const weights = new Map<string, bigint>();
  const ineligible = new Map<string, bigint>();
  let ineligibleTotal = 0n;
  for (const [rep, v] of w.entries()) {
    if (e.weight(rep) > 0n) weights.set(rep, v);
    else {
      ineligible.set(rep, v);
      ineligibleTotal += v;
    }
  }
  return { ...e, weights, ineligible, ineligibleTotal };
}

/** How many representatives count under the policy: one lookup per allow-listed address at most. */
export function eligibleCount(w: WeightView, policy: RepresentativePolicy): number {
  const e = eligibility(w, policy);
  if (policy.mode === 'open' || e.failedOpen) return w.size;
  let n = 0;
  for (const rep of allowedOf(policy)) if (e.weight(rep) > 0n) n += 1;
  return n;
}

/** Quorum is exactly 67/100 of eligible weight; zero total weight never reaches it. */
export function hasQuorum(weight: bigint, total: bigint): boolean {
  return total > 0n && weight * 100n >= total * 67n;
}

/** The eligible weight of a set of voters. */
export function weightOf(voters: Iterable<string>, e: Eligibility): bigint {
  let s = 0n;
  for (const v of voters) s += e.weight(v);
  return s;
}
