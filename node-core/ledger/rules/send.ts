import { LedgerError } from '../errors.ts';
import { debit } from './arith.ts';
import type { TypeRule } from './types.ts';

/** `send`: moves an amount into a pending entry for the destination. */
export const sendRule: TypeRule = ({ block, old }) => {
  const amount = block.amount ?? 0n;
  if (block.destination === block.account)
    throw new LedgerError('self_send', 'destination must differ from the account');
  return {
    balance: debit(old, amount, block.asset),
    pendingPut: {
      destination: block.destination!,
      from: block.account,
      amount,
      asset: block.asset,
      timestamp: block.timestamp,
    },
  };
};
