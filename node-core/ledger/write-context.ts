import type { Counters } from './counters.ts';
import type { WeightLookup } from './rep-weights.ts';
import type { CommittedBlock } from './ledger.ts';

/** The running view of one group transaction: counters and weights, written once at its end. */
export interface WriteContext {
  counters: Counters;
  reps: Map<string, bigint>;
  /** What the group's writes to `reps` added to the sum of all weights (kept with each write). */
  repsDelta: bigint;
  /** Winners applied by conflict resolution in this group (announced like accepted blocks). */
  resolved: CommittedBlock[];
  /** Stored weights when the group began (read on first use). */
  baseReps?: WeightLookup;
  /** Blocks a rollback undid, when the caller asks (conflict resolution: the conflicts they touch). */
  undone?: { account: string; hash: string }[];
}
