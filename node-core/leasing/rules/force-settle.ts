import { LedgerError } from '../../ledger/errors.ts';
import { credit } from '../../ledger/rules/arith.ts';
import type { TypeRule } from '../../ledger/rules/types.ts';
import { forceSettleWindow, leaseExpiry } from '../timing.ts';
import { attested, escrowOf, requireAsset, sourceLease } from './common.ts';

/**
 * `lease_force_settle` (consumer chain, reference-behavior.md 4.3): when the provider let the settle
 * window pass, the consumer takes the escrow back inside [expiry + grace + gap, expiry + escrow
 * expiry), and the provider's stake is forfeited.
 */
export const forceSettleRule: TypeRule = (input) => {
  const { block, old, view } = input;
  requireAsset(block, 'XUSD');
  const { leaseBlock, lease } = sourceLease(input);
  if (leaseBlock.account !== block.account)
    throw new LedgerError('lease_state', 'only the consumer can force-settle a lease');
  if (lease === undefined) throw new LedgerError('lease_not_found', 'lease not found', true);
  if (lease.settled) throw new LedgerError('lease_state', 'lease already settled');
  if (lease.state === 'created')
    throw new LedgerError('lease_state', 'lease not yet accepted for force-settle: retry after accept', true);
  if (lease.state !== 'accepted')
    throw new LedgerError('lease_state', `cannot force-settle lease in ${lease.state} state`);
  const t = attested(input, lease.lease_hash);
  const where = forceSettleWindow(t, leaseExpiry(lease.start_time, lease.duration), view.leasing.timing);
  if (where === 'before') throw new LedgerError('lease_window', 'lease not yet force-settleable');
  if (where === 'after') throw new LedgerError('lease_window', 'lease escrow expired: refund window closed');
  const escrow = escrowOf(input, lease);
  return {
    balance: credit(old, lease.cost),
    pendingDelete: escrow,
    lease: { ...lease, state: 'unfulfilled', settled: true },
    ...(lease.stake > 0n
      ? { supply: [{ asset: 'XUSD', term: 'stake_forfeited', amount: lease.stake }] }
      : {}),
  };
};
