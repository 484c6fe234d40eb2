import { LedgerError } from '../errors.ts';
import { credit, requirePositive } from './arith.ts';
import type { TypeRule } from './types.ts';

/**
 * `claim` (decisions D6): new XE from the faucet, within `sys.faucet`'s amount per period, counted over
 * the account's claims whose timestamps fall inside the period before this one.
 */
export const claimRule: TypeRule = ({ block, acct, old, view }) => {
  const amount = block.amount ?? 0n;
  if (block.asset !== 'XE') throw new LedgerError('wrong_asset', 'claim is XE only');
  const faucet = view.faucet;
  if (!faucet) throw new LedgerError('faucet_disabled', 'the faucet is not enabled on this network');
  requirePositive(amount);
  const since = block.timestamp - faucet.period_ns;
  const recent = (acct?.claims ?? []).filter(([t]) => t > since);
  const used = recent.reduce((sum, [, v]) => sum + v, 0n);
  if (used + amount > faucet.amount) {
    throw new LedgerError(
      'claim_limit',
      `claim limit exceeded: ${faucet.amount} per ${faucet.period_ns} ns, ${faucet.amount - used} left`,
    );
  }
  return {
    balance: credit(old, amount),
    claims: [...recent, [block.timestamp, amount]],
    supply: [{ asset: 'XE', term: 'faucet', amount }],
  };
};
