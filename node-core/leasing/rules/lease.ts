import { LedgerError } from '../../ledger/errors.ts';
import { debit } from '../../ledger/rules/arith.ts';
import type { TypeRule } from '../../ledger/rules/types.ts';
import { checkLeaseBounds, leaseCost } from '../pricing.ts';
import { asRejection, requireAsset } from './common.ts';

/**
 * `lease` (consumer chain, reference-behavior.md 4.3): the consumer escrows the exact cost of the
 * lease at the provider's certificate price, as a pending entry for the provider keyed by the lease
 * hash, and the lease record starts `created`.
 */
export const leaseRule: TypeRule = (input) => {
  const { block, old, view } = input;
  const lv = view.leasing;
  requireAsset(block, 'XUSD');
  const provider = block.destination;
  if (!provider) throw new LedgerError('lease_state', 'destination (the provider) is required');
  if (provider === block.account) throw new LedgerError('lease_state', 'cannot lease to self');
  const dims = {
    vcpus: block.vcpus ?? 0n,
    memory_mb: block.memory_mb ?? 0n,
    disk_gb: block.disk_gb ?? 0n,
    duration: block.duration ?? 0n,
  };
  asRejection(() => checkLeaseBounds(dims, lv.timing.min_duration_secs));
  if (!block.certificate_hash) throw new LedgerError('certificate', 'certificate_hash is required');
  const cert = lv.certificate(block.certificate_hash);
  // Certificates travel separately (gossip, pulled on connect): one not seen yet may still come.
  if (cert === undefined)
    throw new LedgerError('certificate', `certificate ${block.certificate_hash} not found`, true);
  if (cert.provider !== provider)
    throw new LedgerError('certificate', 'the certificate is not the provider’s');
  if (cert.expires_at !== 0n && block.timestamp > cert.expires_at)
    throw new LedgerError('certificate', 'certificate expired');
  const cost = asRejection(() => leaseCost(dims, cert.price_multiplier_milli));
  if (block.amount !== cost)
    throw new LedgerError('lease_cost', `amount must be the lease cost ${cost}, not ${block.amount ?? 0n}`);
  return {
    balance: debit(old, cost, 'XUSD'),
    pendingPut: {
      destination: provider,
      from: block.account,
      amount: cost,
      asset: 'XUSD',
      timestamp: block.timestamp,
    },
    lease: {
      lease_hash: block.hash,
      state: 'created',
      consumer: block.account,
      provider,
      ...dims,
      ...(block.access_pub_key ? { access_pub_key: block.access_pub_key } : {}),
      cost,
      stake: 0n,
      start_time: 0n,
      certificate_hash: block.certificate_hash,
      settled: false,
      renewal_count: 0,
      renewed_cost: 0n,
      renewal_emission: 0n,
      created_at: block.timestamp,
    },
  };
};
