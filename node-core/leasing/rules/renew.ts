import { LedgerError } from '../../ledger/errors.ts';
import { debit } from '../../ledger/rules/arith.ts';
import type { TypeRule } from '../../ledger/rules/types.ts';
import { checkLeaseBounds, leaseCost, MAX_LEASE_DURATION_SECS } from '../pricing.ts';
import { renewalEmission } from '../records.ts';
import { leaseExpiry } from '../timing.ts';
import { asRejection, attested, lockedParams, requireAsset, sourceLease } from './common.ts';

/**
 * `lease_renew` (type 0x0E; an extension of this node, decisions D7 — the reference node has no
 * such block): the consumer extends an accepted, unsettled lease before its current expiry, by the
 * timekeepers' clock, escrowing the extension's cost at the provider's current certificate price.
 * The escrow entry grows by that cost, and the extension locks the epoch parameters of its own
 * attested time, which its share of the emission is paid at.
 */
export const renewRule: TypeRule = (input) => {
  const { block, old, view } = input;
  const lv = view.leasing;
  requireAsset(block, 'XUSD');
  const { leaseBlock, lease } = sourceLease(input);
  if (leaseBlock.account !== block.account)
    throw new LedgerError('lease_state', 'only the consumer can renew a lease');
  if (lease === undefined) throw new LedgerError('lease_not_found', 'lease not found', true);
  if (lease.state === 'created')
    throw new LedgerError('lease_state', 'lease not yet accepted for renew: retry after accept', true);
  if (lease.state !== 'accepted' || lease.settled)
    throw new LedgerError('lease_state', `cannot renew lease in ${lease.state} state`);
  const extension = block.duration ?? 0n;
  const dims = {
    vcpus: lease.vcpus,
    memory_mb: lease.memory_mb,
    disk_gb: lease.disk_gb,
    duration: extension,
  };
  asRejection(() => checkLeaseBounds(dims, lv.timing.min_duration_secs));
  if (lease.duration + extension > MAX_LEASE_DURATION_SECS)
    throw new LedgerError('lease_bounds', `a lease lasts at most ${MAX_LEASE_DURATION_SECS} seconds in all`);
  const t = attested(input, lease.lease_hash);
  if (t >= leaseExpiry(lease.start_time, lease.duration))
    throw new LedgerError('lease_window', 'lease expired: a renewal must be attested before its expiry');
  if (!block.certificate_hash) throw new LedgerError('certificate', 'certificate_hash is required');
  const cert = lv.certificate(block.certificate_hash);
  if (cert === undefined)
    throw new LedgerError('certificate', `certificate ${block.certificate_hash} not found`, true);
  if (cert.provider !== lease.provider)
    throw new LedgerError('certificate', 'the certificate is not the provider’s');
  if (t > cert.expires_at) throw new LedgerError('certificate', 'certificate expired');
  const cost = asRejection(() => leaseCost(dims, cert.price_multiplier_milli));
  if (block.amount !== cost)
    throw new LedgerError('lease_cost', `amount must be the renewal cost ${cost}, not ${block.amount ?? 0n}`);
  const locked = lockedParams(input, t);
  const escrow = view.pending(lease.provider, lease.lease_hash);
  if (escrow === undefined) throw new LedgerError('lease_state', 'no escrow pending for this lease');
  const renewal = { renew_hash: block.hash, duration: extension, cost, start_time: t, ...locked };
  // What it will pay at settle, known now: a renewal whose emission cannot be computed is refused
  // here rather than leaving a lease no settle can close.
  const emission = asRejection(() => renewalEmission(renewal));
  return {
    balance: debit(old, cost, 'XUSD'),
    pendingPut: {
      destination: lease.provider,
      key: lease.lease_hash,
      ...escrow,
      amount: escrow.amount + cost,
    },
    lease: {
      ...lease,
      duration: lease.duration + extension,
      cost: lease.cost + cost,
      renewal_count: lease.renewal_count + 1,
      renewed_cost: lease.renewed_cost + cost,
      renewal_emission: lease.renewal_emission + emission,
    },
    renewal,
  };
};
