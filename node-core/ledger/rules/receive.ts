import { LedgerError } from '../errors.ts';
import { credit } from './arith.ts';
import type { TypeRule } from './types.ts';

/**
 * `receive`: takes a pending send addressed to this account. A source that is not pending is
 * retryable only while it is unknown here (it may still arrive); a known one is a fault.
 */
export const receiveRule: TypeRule = ({ block, old, view }) => {
  const amount = block.amount ?? 0n;
  const source = block.source!;
  // A lease's escrow is a pending entry for the provider, but only the lease blocks may move it.
  const lease = view.leasing.lease(source);
  if (lease !== undefined && (lease.state === 'created' || lease.state === 'accepted'))
    throw new LedgerError('lease_state', 'cannot receive a live lease escrow');
  const p = view.pending(block.account, source);
  if (p === undefined) {
    const src = view.block(source);
    if (src !== undefined) {
      if (src.type === 'send' && src.destination === block.account) {
        throw new LedgerError('source_received', 'source send already received');
      }
      throw new LedgerError('source_not_pending', 'source is not a send to this account', false);
    }
    throw new LedgerError('source_not_pending', 'source send not pending');
  }
  if (p.asset !== block.asset) throw new LedgerError('wrong_asset', `the pending send is in ${p.asset}`);
  if (amount !== 0n && amount !== p.amount)
    throw new LedgerError('balance_mismatch', 'amount differs from the send');
  return { balance: credit(old, p.amount), pendingDelete: [block.account, source] };
};
