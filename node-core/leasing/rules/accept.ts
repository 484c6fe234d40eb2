import { LedgerError } from '../../ledger/errors.ts';
import { debit } from '../../ledger/rules/arith.ts';
import type { TypeRule } from '../../ledger/rules/types.ts';
import { leaseStake } from '../pricing.ts';
import { asRejection, attested, lockedParams, requireAsset, sourceLease } from './common.ts';

/**
 * `lease_accept` (provider chain, reference-behavior.md 4.3): the provider stakes, the timekeepers'
 * attested time becomes the lease start, and the emission parameters of the epoch at that time are
 * locked into the signed block (LS-06, LS-07).
 */
export const acceptRule: TypeRule = (input) => {
  const { block, old, view } = input;
  const lv = view.leasing;
  requireAsset(block, 'XUSD');
  const { leaseBlock, lease } = sourceLease(input);
  if (leaseBlock.destination !== block.account)
    throw new LedgerError('lease_state', 'provider account mismatch');
  if (lease === undefined || lease.state !== 'created')
    throw new LedgerError('lease_state', 'lease already accepted');
  const stake = asRejection(() => leaseStake(lease.cost, lv.stakeMilli));
  if ((block.amount ?? 0n) !== stake)
    throw new LedgerError(
      'lease_cost',
      `amount must be the provider stake ${stake}, not ${block.amount ?? 0n}`,
    );
  const balance = stake === 0n ? old : debit(old, stake, 'XUSD');
  const start = attested(input, lease.lease_hash);
  if (!block.certificate_hash) throw new LedgerError('certificate', 'certificate_hash is required');
  if (block.certificate_hash !== lease.certificate_hash)
    throw new LedgerError('certificate', 'certificate_hash differs from the lease’s');
  const cert = lv.certificate(block.certificate_hash);
  if (cert === undefined)
    throw new LedgerError('certificate', `certificate ${block.certificate_hash} not found`, true);
  if (cert.provider !== block.account)
    throw new LedgerError('certificate', 'the certificate is not this provider’s');
  if (start > cert.expires_at) throw new LedgerError('certificate', 'certificate expired');

  const locked = lockedParams(input, start);
  return {
    balance,
    lease: {
      ...lease,
      state: 'accepted',
      stake,
      start_time: start,
      ...locked,
      settled: false,
      accept_hash: block.hash,
    },
  };
};
