import { ZERO_HASH } from '../../protocol/block.ts';
import { multisigAddress } from '../../protocol/keys.ts';
import { LedgerError } from '../errors.ts';
import type { TypeRule } from './types.ts';

/** `multisig_open`: opens the account whose address is its keyset's. */
export const multisigOpenRule: TypeRule = ({ block }) => {
  if (block.previous !== ZERO_HASH) throw new LedgerError('multisig', 'multisig_open must open the account');
  if (multisigAddress(block.keyset!) !== block.account) {
    throw new LedgerError('multisig', 'account is not the address of the keyset');
  }
  return { balance: 0n, keyset: block.keyset! };
};

/** `multisig_update`: replaces the keyset of a multisig account. */
export const multisigUpdateRule: TypeRule = ({ block, acct, old }) => {
  if (!acct?.keyset) throw new LedgerError('multisig', 'not a multisig account');
  return { balance: old, keyset: block.keyset! };
};
