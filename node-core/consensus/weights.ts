import type { RepresentativePolicy } from '../statechain/sys.ts';

/**
 * Representative eligibility and the quorum rule (reference-behavior.md sections 2.1 and 2.3).
 * Only allow-listed representatives count, in numerator and denominator, except when the allowlist
 * matches no weight at all while other weight exists: then the policy fails open rather than
 * bricking finality.
 */
export interface EligibleWeights {
  weights: Map<string, bigint>;
  total: bigint;
  ineligible: Map<string, bigint>;
  ineligibleTotal: bigint;
  restricted: boolean;
  failedOpen: boolean;
}

export function eligibleWeights(all: Map<string, bigint>, policy: RepresentativePolicy): EligibleWeights {
  const positive = new Map([...all].filter(([, w]) => w > 0n));
  const total = (m: Map<string, bigint>) => [...m.values()].reduce((a, b) => a + b, 0n);
  if (policy.mode === 'open') {
    return {
      weights: positive,
      total: total(positive),
      ineligible: new Map(),
      ineligibleTotal: 0n,
      restricted: false,
      failedOpen: false,
    };
  }
  const allowed = new Set(policy.addresses);
  const weights = new Map([...positive].filter(([rep]) => allowed.has(rep)));
  const ineligible = new Map([...positive].filter(([rep]) => !allowed.has(rep)));
  if (total(weights) === 0n && total(ineligible) > 0n) {
    return {
      weights: positive,
      total: total(positive),
      ineligible: new Map(),
      ineligibleTotal: 0n,
      restricted: true,
      failedOpen: true,
    };
  }
  return {
    weights,
    total: total(weights),
    ineligible,
    ineligibleTotal: total(ineligible),
    restricted: true,
    failedOpen: false,
  };
}

/** Quorum is exactly 67/100 of eligible weight; zero total weight never reaches it. */
export function hasQuorum(weight: bigint, total: bigint): boolean {
  return total > 0n && weight * 100n >= total * 67n;
}
