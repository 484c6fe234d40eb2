import { U64_MAX } from '../../protocol/int.ts';
import { LedgerError } from '../errors.ts';

/** Checked arithmetic and the amount checks that several types share. */

export function requirePositive(amount: bigint): void {
  if (amount <= 0n) throw new LedgerError('amount_zero', 'amount must be greater than 0');
}

/** old + amount, refusing a balance past 2^64-1. */
export function credit(old: bigint, amount: bigint): bigint {
  if (old + amount > U64_MAX) throw new LedgerError('overflow', 'balance would exceed 2^64-1');
  return old + amount;
}

/** old - amount for a positive amount the balance covers. */
export function debit(old: bigint, amount: bigint, asset: string): bigint {
  requirePositive(amount);
  if (amount > old)
    throw new LedgerError('insufficient_balance', `insufficient balance: ${old} ${asset} available`);
  return old - amount;
}
