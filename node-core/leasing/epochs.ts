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
  return candidatesAmong(inEpochOrder(epochs) ? epochs : [...epochs].sort(byNumber), t);
}

/** epochCandidates of epochs already sorted by number. */
function candidatesAmong(sorted: readonly EpochRecord[], t: bigint): EpochRecord[] | undefined {
  if (sorted.length === 0) return undefined;
  // From the newest back: an accept names a recent time, so this stops within a few epochs.
  let cover = sorted.length - 1;
  while (cover >= 0 && sorted[cover]!.start_ns > t) cover--;
  if (cover < 0) return [];
  const first = sorted[cover]!.epoch - BigInt(EPOCH_LOCK_TOLERANCE);
  const out: EpochRecord[] = [];
  for (let i = cover; i >= 0 && sorted[i]!.epoch >= first; i--) out.push(sorted[i]!);
  return out;
}

/** The newest epoch (what a provider locks when it builds an accept). */
export function newestEpoch(epochs: readonly EpochRecord[]): EpochRecord | undefined {
  let best: EpochRecord | undefined;
  for (const e of epochs) if (best === undefined || e.epoch > best.epoch) best = e;
  return best;
}

const byNumber = (a: EpochRecord, b: EpochRecord): number =>
  a.epoch < b.epoch ? -1 : a.epoch > b.epoch ? 1 : 0;

function inEpochOrder(epochs: readonly EpochRecord[]): boolean {
  for (let i = 1; i < epochs.length; i++) if (epochs[i - 1]!.epoch > epochs[i]!.epoch) return false;
  return true;
}

/**
 * The state chain's `epoch.N` records, read, parsed and sorted by number once per state-chain tip
 * (`version`: the tip's hash), not once per lease block judged: the state chain's keys change only
 * with its blocks, and an oracle writing an epoch an hour leaves 8,760 of them after a year, each
 * a key read and a JSON parse (issue #18).
 */
export class EpochTable {
  private readonly read: () => Iterable<{ key: string; value: string }>;
  private readonly version: () => unknown;
  private cached: { version: unknown; epochs: readonly EpochRecord[] } | undefined;

  /** `read`: the `epoch.` keys and their values; `version`: changes whenever any of them may have. */
  constructor(read: () => Iterable<{ key: string; value: string }>, version: () => unknown) {
    this.read = read;
    this.version = version;
  }

  /** Every epoch record, ascending by number (shared: not to be changed by the caller). */
  list(): readonly EpochRecord[] {
    const version = this.version();
    const cached = this.cached;
    if (cached !== undefined && cached.version === version) return cached.epochs;
    const epochs: EpochRecord[] = [];
    for (const { key, value } of this.read()) {
      const e = parseEpoch(key, value);
      if (e) epochs.push(e);
    }
    epochs.sort(byNumber);
    this.cached = { version, epochs };
    return epochs;
  }

  /** epochCandidates at `t` of the epochs held (sorted already). */
  candidates(t: bigint): EpochRecord[] | undefined {
    return candidatesAmong(this.list(), t);
  }
}
