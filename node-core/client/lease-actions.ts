import type { Block } from '../protocol/block.ts';
import { leaseCost } from '../protocol/lease-cost.ts';
import type { EpochInfo, LeaseInfo, LeasingClient } from './leasing.ts';

/**
 * The consumer's lease_renew, built from what the node knows (the provider's current certificate,
 * timekeeper attestations, the epoch at the attested time), for scripts and the command line. The
 * caller signs it with the consumer's wallet: `wallet.writeBlock({...fields, balance: xusd - cost})`.
 */
export class LeaseActionError extends Error {
  readonly code: 'no_certificate' | 'no_epoch';
  constructor(code: 'no_certificate' | 'no_epoch', message: string) {
    super(message);
    this.name = 'LeaseActionError';
    this.code = code;
  }
}

/** The emission rate the ledger falls back to when the state chain has no epoch at all. */
export const FALLBACK_R = 2000n;

export interface LockedParams {
  locked_r: bigint;
  locked_payout_cap: bigint;
  locked_twap_milli: bigint;
}

/** The emission parameters of the newest epoch started by time `t` (what a lease_renew locks). */
export function lockedParamsAt(epochs: readonly EpochInfo[], t: bigint): LockedParams {
  let best: EpochInfo | undefined;
  for (const e of epochs) if (e.start_ns <= t && (best === undefined || e.epoch > best.epoch)) best = e;
  if (best === undefined) {
    if (epochs.length > 0)
      throw new LeaseActionError('no_epoch', 'no epoch has started at the attested time yet');
    return { locked_r: FALLBACK_R, locked_payout_cap: 0n, locked_twap_milli: 0n };
  }
  return {
    locked_r: best.r_effective,
    locked_payout_cap: best.payout_cap,
    locked_twap_milli: best.twap_milli_usd,
  };
}

/** A lease's end, Unix ns: attested start plus its duration (renewals included); undefined before it starts. */
export function leaseEnd(lease: Pick<LeaseInfo, 'start_time' | 'duration'>): bigint | undefined {
  return lease.start_time === 0n ? undefined : lease.start_time + lease.duration * 1_000_000_000n;
}

/** The fields (all but account, previous, timestamp and balance) and cost of a renewal by `extension` seconds. */
export async function renewalOf(
  leasing: LeasingClient,
  lease: LeaseInfo,
  extension: bigint,
): Promise<{ fields: Omit<Block, 'account' | 'previous' | 'timestamp' | 'balance'>; cost: bigint }> {
  const cert = await leasing.certificate(lease.provider);
  if (!cert)
    throw new LeaseActionError(
      'no_certificate',
      'the node knows no certificate of the provider: the lease cannot be renewed now',
    );
  const cost = leaseCost(
    { vcpus: lease.vcpus, memory_mb: lease.memory_mb, disk_gb: lease.disk_gb, duration: extension },
    cert.price_multiplier_milli,
  );
  const [att, epochs] = await Promise.all([leasing.attestations(lease.lease_hash), leasing.epochs()]);
  return {
    cost,
    fields: {
      type: 'lease_renew',
      asset: 'XUSD',
      source: lease.lease_hash,
      amount: cost,
      duration: extension,
      certificate_hash: cert.hash,
      attestations: att.attestations,
      ...lockedParamsAt(epochs, att.median),
    },
  };
}
