import { LedgerError } from '../../ledger/errors.ts';
import { credit } from '../../ledger/rules/arith.ts';
import type { TypeRule } from '../../ledger/rules/types.ts';
import { cappedR, leaseEmission } from '../pricing.ts';
import { LeasingError } from '../errors.ts';
import type { LeaseRecord } from '../records.ts';
import { leaseExpiry, settleWindow } from '../timing.ts';
import { asRejection, attested, escrowOf, requireAsset } from './common.ts';

/**
 * `lease_settle` (provider chain, reference-behavior.md 4.3): inside [expiry, expiry + grace] by the
 * timekeepers' clock, the provider is paid the XE emission for the lease; the escrow is burned and
 * the stake returned (a credit outside the block's balance, LS-12).
 */
export const settleRule: TypeRule = (input) => {
  const { block, old, view } = input;
  requireAsset(block, 'XE');
  if (!block.source) throw new LedgerError('lease_state', 'source (the lease hash) is required');
  const lease = view.leasing.lease(block.source);
  if (lease === undefined) throw new LedgerError('lease_not_found', 'lease not found', true);
  if (lease.settled) throw new LedgerError('lease_state', 'lease already settled');
  if (lease.provider !== block.account)
    throw new LedgerError('lease_state', 'only the provider can settle a lease');
  if (lease.state === 'created')
    throw new LedgerError('lease_state', 'lease not yet accepted for settle: retry after accept', true);
  if (lease.state !== 'accepted')
    throw new LedgerError('lease_state', `cannot settle lease in ${lease.state} state`);
  const t = attested(input, lease.lease_hash);
  const expiry = leaseExpiry(lease.start_time, lease.duration);
  const where = settleWindow(t, expiry, view.leasing.timing);
  if (where === 'before') throw new LedgerError('lease_window', 'lease not yet expired');
  if (where === 'after') throw new LedgerError('lease_window', 'lease settle past grace');
  const emission = asRejection(() => leaseTotalEmission(lease));
  if ((block.amount ?? 0n) !== emission)
    throw new LedgerError('lease_cost', `amount must be the emission ${emission}, not ${block.amount ?? 0n}`);
  const escrow = escrowOf(input, lease);
  return {
    balance: credit(old, emission),
    pendingDelete: escrow,
    lease: { ...lease, state: 'settled', settled: true },
    ...(lease.stake > 0n ? { credit: { asset: 'XUSD', amount: lease.stake } } : {}),
    supply: [
      { asset: 'XE', term: 'emitted', amount: emission },
      { asset: 'XUSD', term: 'escrow_burned', amount: lease.cost },
    ],
  };
};

/**
 * The XE a settle pays: the emission of the leased cost at the accept's locked parameters, plus that
 * of each renewal at the parameters it locked (renewals are our extension, D7).
 */
export function leaseTotalEmission(lease: LeaseRecord): bigint {
  const leased = leaseEmission(
    lease.cost - lease.renewed_cost,
    cappedR({
      locked_r: lease.locked_r ?? 0n,
      locked_payout_cap: lease.locked_payout_cap ?? 0n,
      locked_twap_milli: lease.locked_twap_milli ?? 0n,
    }),
  );
  // Each renewal's emission was summed as it was applied (records.ts renewalEmission); negative only
  // for a renewal stored before renew checked it, whose emission overflows.
  if (lease.renewal_emission < 0n) throw new LeasingError('overflow', 'a renewal’s emission overflows u64');
  return leased + lease.renewal_emission;
}
