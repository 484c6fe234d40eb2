import type { Attestation } from '../protocol/block.ts';
import { MAX_ATTESTATIONS } from '../protocol/block-json.ts';
import type { Verifier } from '../protocol/keys.ts';
import { verifyAttestation } from '../protocol/payloads.ts';
import { LeasingError } from './errors.ts';

/**
 * The time a lease block gets from its timekeeper attestations (reference-behavior.md 4.6,
 * protocol.md section 6): the lower median of the entries that count.
 */

/** `sys.timekeepers`: the trusted public keys and how many of them must attest. */
export interface TimekeeperConfig {
  keys: readonly string[];
  threshold: number;
}

export interface AttestationInput {
  /** What was attested: the lease hash (64 hex). */
  leaseHash: string;
  attestations: readonly Attestation[];
  /** The state chain's `sys.timekeepers`; undefined when it has none. */
  timekeepers: TimekeeperConfig | undefined;
  /** Ed25519 verification: node:crypto's in the node, noble's in the browser. */
  verify: Verifier;
  /**
   * Live submission only: the local clock and the network's max attestation skew. Sync leaves it
   * out, so historic blocks, whose attestations are old by now, still land.
   */
  live?: { now: bigint; maxSkewNs: bigint };
}

export interface AttestedTime {
  /** The lower median of the counted timestamps. */
  time: bigint;
  /** How many entries counted. */
  counted: number;
}

/** Element (n-1)/2 of the ascending order: for an even count the earlier of the middle two. */
export function lowerMedian(values: readonly bigint[]): bigint {
  if (values.length === 0) throw new RangeError('lowerMedian of no values');
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted[(sorted.length - 1) >> 1]!;
}

/**
 * Validates a block's attestations and returns their lower-median time. The counts are checked on
 * the raw array before any signature work (LS-08). An entry is then skipped, not an error, when its
 * key is not a timekeeper's, its key already counted, it is too far from `live.now`, or its
 * signature is invalid. The cheap checks run before the signature: the outcome is the same in any
 * order, because "already counted" looks only at entries that passed every check.
 */
export function attestedTime(input: AttestationInput): AttestedTime {
  const { timekeepers, attestations } = input;
  if (timekeepers === undefined || !(timekeepers.threshold > 0)) {
    throw new LeasingError('timekeepers_not_configured', 'timekeepers not configured');
  }
  const threshold = timekeepers.threshold;
  if (attestations.length > MAX_ATTESTATIONS) {
    throw new LeasingError(
      'too_many_attestations',
      `too many attestations: ${attestations.length}, at most ${MAX_ATTESTATIONS}`,
      'attestations',
    );
  }
  if (attestations.length < threshold) {
    throw new LeasingError(
      'too_few_attestations',
      `${attestations.length} attestations, need ${threshold}`,
      'attestations',
    );
  }
  const trusted = new Set(timekeepers.keys);
  const counted = new Set<string>();
  const times: bigint[] = [];
  for (const a of attestations) {
    if (!trusted.has(a.public_key) || counted.has(a.public_key)) continue;
    if (input.live !== undefined) {
      const skew = a.timestamp - input.live.now;
      if (skew > input.live.maxSkewNs || -skew > input.live.maxSkewNs) continue;
    }
    if (!verifyAttestation(input.leaseHash, a, input.verify)) continue;
    counted.add(a.public_key);
    times.push(a.timestamp);
  }
  if (times.length < threshold) {
    throw new LeasingError(
      'insufficient_attestations',
      `only ${times.length} valid attestations from trusted timekeepers, need ${threshold}`,
      'attestations',
    );
  }
  return { time: lowerMedian(times), counted: times.length };
}
