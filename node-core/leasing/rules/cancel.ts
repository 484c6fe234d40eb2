import { LedgerError } from '../../ledger/errors.ts';
import { credit } from '../../ledger/rules/arith.ts';
import type { TypeRule } from '../../ledger/rules/types.ts';
import type { LeaseRecord } from '../records.ts';
import { escrowOf, requireAsset, sourceLease } from './common.ts';

/**
 * `lease_cancel` (consumer chain, reference-behavior.md 4.3): a lease nobody accepted goes back to
 * the consumer. Against an accept that is the provider's unfinalized frontier, the cancel wins: the
 * accept is undone in the same transaction (LS-11) and the cancel proceeds.
 */
export const cancelRule: TypeRule = (input) => {
  const { block, old, view } = input;
  requireAsset(block, 'XUSD');
  const { leaseBlock, lease } = sourceLease(input);
  if (leaseBlock.account !== block.account)
    throw new LedgerError('lease_state', 'only the consumer can cancel a lease');
  if (lease === undefined) throw new LedgerError('lease_not_found', 'lease not found', true);
  let created: LeaseRecord = lease;
  let unwind: string | undefined;
  if (lease.state === 'accepted' && lease.provider !== lease.consumer) {
    const provider = view.leasing.account(lease.provider);
    const accept = lease.accept_hash;
    if (provider === undefined || accept === undefined || view.block(accept) === undefined)
      throw new LedgerError('lease_state', 'provider accept not found locally: retry after sync', true);
    if (view.leasing.hashAt(lease.provider, provider.height) !== accept)
      throw new LedgerError('lease_state', 'provider built on the accept: retry after sync', true);
    if (provider.final_height >= provider.height)
      throw new LedgerError('lease_state', 'cannot cancel lease in accepted state: accept is finalized');
    unwind = lease.provider;
    // The lease exactly as the accept found it (the accept changes only these fields).
    created = {
      ...lease,
      state: 'created',
      stake: 0n,
      start_time: 0n,
      locked_r: undefined,
      locked_payout_cap: undefined,
      locked_twap_milli: undefined,
      accept_hash: undefined,
    };
    for (const k of ['locked_r', 'locked_payout_cap', 'locked_twap_milli', 'accept_hash'] as const)
      delete created[k];
  } else if (lease.state !== 'created') {
    throw new LedgerError('lease_state', `cannot cancel lease in ${lease.state} state`);
  }
  const escrow = escrowOf(input, lease);
  return {
    balance: credit(old, lease.cost),
    pendingDelete: escrow,
    lease: { ...created, state: 'cancelled' },
    ...(unwind ? { unwind } : {}),
  };
};
