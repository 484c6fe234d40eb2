import type { SupplyDelta } from '../ledger/counters.ts';
import type { LeaseRecord } from './records.ts';
import { archiveEligible, type LeaseTiming, leaseExpiry } from './timing.ts';

/**
 * What the local archive sweep does to one lease (reference-behavior.md 4.1, 4.3; LS-04): an
 * accepted, unsettled lease past expiry + escrow expiry + archive gap by the local clock becomes
 * `expired` with `settled = true` (terminal, and no settle loop picks it up again). Nobody can
 * claim its escrow any more, so the escrow still held is burned and the provider's stake, out of
 * every balance since the accept, is forfeited: the supply stays conserved.
 *
 * Undefined when the lease is not (or no longer) eligible. `escrow` is the amount its pending
 * entry still holds (undefined when there is none): only what is there is burned.
 */
export function archivedLease(
  lease: LeaseRecord,
  now: bigint,
  timing: LeaseTiming,
  escrow: bigint | undefined,
): { lease: LeaseRecord; supply: SupplyDelta[] } | undefined {
  if (lease.state !== 'accepted' || lease.settled) return undefined;
  if (!archiveEligible(now, leaseExpiry(lease.start_time, lease.duration), timing)) return undefined;
  const supply: SupplyDelta[] = [];
  if (escrow !== undefined && escrow > 0n)
    supply.push({ asset: 'XUSD', term: 'escrow_burned', amount: escrow });
  if (lease.stake > 0n) supply.push({ asset: 'XUSD', term: 'stake_forfeited', amount: lease.stake });
  return { lease: { ...lease, state: 'expired', settled: true }, supply };
}
