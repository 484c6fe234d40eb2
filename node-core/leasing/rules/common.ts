import { LedgerError, type LedgerErrorCode } from '../../ledger/errors.ts';
import type { RuleInput, SignedBlock } from '../../ledger/rules/types.ts';
import { attestedTime } from '../attestations.ts';
import { FALLBACK_R, type LockedEmissionParams } from '../pricing.ts';
import { LeasingError } from '../errors.ts';
import type { LeaseRecord } from '../records.ts';

/** Pieces every lease rule after `lease` shares. */

/** A LeasingError from the building blocks, as the ledger's rejection (never retryable). */
export function asRejection<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof LeasingError) {
      const code: LedgerErrorCode =
        e.code === 'overflow' ? 'overflow' : e.code === 'lease_bounds' ? 'lease_bounds' : 'attestation';
      throw new LedgerError(code, e.message);
    }
    throw e;
  }
}

export function requireAsset(block: SignedBlock, asset: 'XE' | 'XUSD'): void {
  if (block.asset !== asset) throw new LedgerError('wrong_asset', `${block.type} is ${asset} only`);
}

/** The `lease` block a later lease block names in `source` (retryable while it is not here yet). */
export function sourceLease(input: RuleInput): { leaseBlock: SignedBlock; lease: LeaseRecord | undefined } {
  const { block, view } = input;
  if (!block.source) throw new LedgerError('lease_state', 'source (the lease hash) is required');
  const leaseBlock = view.block(block.source);
  if (leaseBlock === undefined)
    throw new LedgerError('lease_not_found', `source lease block not found: ${block.source}`, true);
  if (leaseBlock.type !== 'lease')
    throw new LedgerError('lease_state', `source ${block.source} is a ${leaseBlock.type} block, not a lease`);
  return { leaseBlock, lease: view.leasing.lease(block.source) };
}

/** The attested time of a block (its lower median), skew-checked on the live path only. */
export function attested(input: RuleInput, leaseHash: string): bigint {
  const { block, view, live } = input;
  return asRejection(
    () =>
      attestedTime({
        leaseHash,
        attestations: block.attestations ?? [],
        timekeepers: view.leasing.timekeepers,
        verify: view.leasing.verify,
        live: live && { now: live.now, maxSkewNs: view.leasing.timing.max_attestation_skew_ns },
      }).time,
  );
}

/** The escrow a lease holds: the provider's pending entry keyed by the lease hash. */
export function escrowOf(input: RuleInput, lease: LeaseRecord): [string, string] {
  const p = input.view.pending(lease.provider, lease.lease_hash);
  if (p === undefined) throw new LedgerError('lease_state', 'no escrow pending for this lease');
  return [lease.provider, lease.lease_hash];
}

/**
 * The emission parameters a block locks (`locked_r`, `locked_payout_cap`, `locked_twap_milli`): they
 * must equal those of the epoch covering its attested time `t` or one of the 3 before it (LS-06,
 * LS-07). A validator behind on the state chain may lack that epoch: retryable on sync, a fault live.
 */
export function lockedParams(input: RuleInput, t: bigint): LockedEmissionParams {
  const { block, view, live } = input;
  const locked = {
    locked_r: block.locked_r ?? 0n,
    locked_payout_cap: block.locked_payout_cap ?? 0n,
    locked_twap_milli: block.locked_twap_milli ?? 0n,
  };
  if (locked.locked_r === 0n) throw new LedgerError('lease_epoch', 'missing locked emission params');
  // With no epoch on the state chain at all, only the fallback parameters can be locked.
  const options = view.leasing.epochCandidates(t) ?? [
    { r_effective: FALLBACK_R, payout_cap: 0n, twap_milli_usd: 0n },
  ];
  if (options.length === 0)
    throw new LedgerError('lease_epoch', 'epoch not yet available: retry after statechain syncs', true);
  const matches = options.some(
    (e) =>
      e.r_effective === locked.locked_r &&
      e.payout_cap === locked.locked_payout_cap &&
      e.twap_milli_usd === locked.locked_twap_milli,
  );
  if (!matches) {
    throw new LedgerError(
      'lease_epoch',
      live
        ? 'locked emission params match no epoch at the attested time'
        : 'locked emission params match no epoch: retry after statechain syncs',
      !live,
    );
  }
  return locked;
}
