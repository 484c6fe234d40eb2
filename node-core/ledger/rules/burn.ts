import { LedgerError } from '../errors.ts';
import { debit } from './arith.ts';
import type { TypeRule } from './types.ts';

/** `burn`: destroys XE (counted as `burned` in the supply). */
export const burnRule: TypeRule = ({ block, old }) => {
  const amount = block.amount ?? 0n;
  if (block.asset !== 'XE') throw new LedgerError('wrong_asset', 'burn is XE only');
  return { balance: debit(old, amount, block.asset), supply: [{ asset: 'XE', term: 'burned', amount }] };
};
