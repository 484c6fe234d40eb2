import type { Verifier } from '../../protocol/keys.ts';
import type { PerformanceCertificate } from '../../protocol/certificate.ts';
import type { AccountRecord } from '../../ledger/records.ts';
import type { TimekeeperConfig } from '../attestations.ts';
import type { EpochEmission } from '../pricing.ts';
import type { LeaseRecord } from '../records.ts';
import type { LeaseTiming } from '../timing.ts';

/**
 * What the lease rules read beyond the common rule view: lease records, certificates, the
 * state chain's timekeepers, epochs and lease settings, and the network's time windows.
 */
export interface LeaseView {
  lease(hash: string): LeaseRecord | undefined;
  certificate(hash: string): PerformanceCertificate | undefined;
  readonly timekeepers: TimekeeperConfig | undefined;
  /**
   * The epochs an accept attested at `t` may lock (reference-behavior.md 4.5): the one covering `t`
   * and up to 3 predecessors; `[]` when epochs exist but none covers `t` yet; undefined when the
   * state chain has no epoch at all (then only the fallback parameters are valid).
   */
  epochCandidates(t: bigint): EpochEmission[] | undefined;
  readonly timing: LeaseTiming;
  /** `sys.lease.stake_milli` (decisions D7; 0 by default). */
  readonly stakeMilli: bigint;
  account(address: string): AccountRecord | undefined;
  hashAt(address: string, height: number): string | undefined;
  readonly verify: Verifier;
}
