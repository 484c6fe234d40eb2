import { LedgerError } from '../errors.ts';
import { credit, requirePositive } from './arith.ts';
import type { TypeRule } from './types.ts';

/** `mint`: new XUSD by an account listed in `sys.minter` (counted as `minted` in the supply). */
export const mintRule: TypeRule = ({ block, old, view }) => {
  const amount = block.amount ?? 0n;
  if (block.asset !== 'XUSD') throw new LedgerError('wrong_asset', 'mint is XUSD only');
  if (!view.isMinter(block.account))
    throw new LedgerError('not_minter', 'account is not a minter (sys.minter)');
  requirePositive(amount);
  return { balance: credit(old, amount), supply: [{ asset: 'XUSD', term: 'minted', amount }] };
};
