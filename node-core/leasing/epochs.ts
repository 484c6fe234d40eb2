import { parseJson } from '../protocol/json.ts';
import type { EpochEmission } from './pricing.ts';

/** The tolerance of the epoch lock (reference-behavior.md 4.3): the covering epoch and 3 before it. */
export const EPOCH_LOCK_TOLERANCE = 3;

export interface EpochRecord extends EpochEmission {
  epoch: bigint;
  start_ns: bigint;
}

function big(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^[0-9]+$/.test(v)) return BigInt(v);
  return 0n;
}

/** An `epoch.N` value as the lease rules read it; undefined when it is not an epoch object. */
export function parseEpoch(key: string, text: string): EpochRecord | undefined {
  const m = /^epoch\.([0-9]+)$/.exec(key);
  if (!m) return undefined;
  let o: unknown;
  try {
    o = parseJson(text);
  } catch {
    return undefined;
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  const r = o as Record<string, unknown>;
  return {
    epoch: BigInt(m[1]!),
    start_ns: big(r.start_ns),
    r_effective: big(r.r_effective),
    payout_cap: big(r.payout_cap),
    twap_milli_usd: big(r.twap_milli_usd),
  };
}

/**
 * The epochs an accept attested at `t` may lock: the highest-numbered epoch that started at or before
 * `t`, and up to 3 epochs before it. `[]` when none has started by `t`; undefined with no epochs at all.
 */
export function epochCandidates(epochs: readonly EpochRecord[], t: bigint): EpochRecord[] | undefined {
  if (epochs.length === 0) return undefined;
  const sorted = [...epochs].sort((a, b) => (a.epoch < b.epoch ? -1 : a.epoch > b.epoch ? 1 : 0));
  let cover = -1;
  for (let i = 0; i < sorted.length; i++) if (sorted[i]!.start_ns <= t) cover = i;
  if (cover < 0) return [];
  const first = sorted[cover]!.epoch - BigInt(EPOCH_LOCK_TOLERANCE);
  return sorted
    .slice(0, cover + 1)
    .filter((e) => e.epoch >= first)
    .reverse();
}

/** The newest epoch (what a provider locks when it builds an accept). */
export function newestEpoch(epochs: readonly EpochRecord[]): EpochRecord | undefined {
  let best: EpochRecord | undefined;
  for (const e of epochs) if (best === undefined || e.epoch > best.epoch) best = e;
  return best;
}
