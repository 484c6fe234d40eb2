import type { Attestation } from '../../protocol/block.ts';
import type { SignedBlock } from '../../protocol/block-sign.ts';
import type { PerformanceCertificate } from '../../protocol/certificate.ts';
import type { BlockDraft } from '../../node-wallet.ts';
import { lowerMedian, type TimekeeperConfig } from '../attestations.ts';
import {
  checkLeaseBounds,
  type LeaseDimensions,
  leaseCost,
  type LockedEmissionParams,
  MAX_LEASE_DURATION_SECS,
} from '../pricing.ts';
import type { LeaseRecord } from '../records.ts';
import { leaseExpiry } from '../timing.ts';

/**
 * The consumer side of a lease kept by this node (decisions D7: `lease_renew` is an extension of
 * this node, reference-behavior.md 4.10). Two services:
 *
 * - attestations of a lease for a client building its own `lease_renew` or `lease_force_settle`
 *   (the GUI signs with the user's key; the node only gathers the timekeepers' signatures), enough
 *   for the threshold, with their lower median;
 * - the renewal of a lease whose consumer is the node's own account: at the provider's current
 *   certificate price, with fresh attestations, signed and submitted by the node wallet.
 */

export type ConsumerErrorCode =
  | 'lease_not_found' // no such lease on this node
  | 'not_consumer' // the lease is not the node account's
  | 'lease_state' // not accepted, or settled, or expired
  | 'lease_bounds' // the extension the ledger would refuse (duration, total)
  | 'no_certificate' // the provider has no valid certificate this node knows
  | 'insufficient_balance' // the node account cannot pay the extension
  | 'too_few_attestations'; // fewer timekeepers answered than the threshold (retryable)

export class ConsumerError extends Error {
  readonly code: ConsumerErrorCode;
  /** Whether the same call may succeed later (too few timekeepers answered this time). */
  readonly retryable: boolean;
  constructor(code: ConsumerErrorCode, message: string, retryable = false) {
    super(message);
    this.name = 'ConsumerError';
    this.code = code;
    this.retryable = retryable;
  }
}

export interface GatheredAttestations {
  attestations: Attestation[];
  /** Their lower median: the time a block carrying them is attested at. */
  median: bigint;
}

export interface RenewalResult {
  block: SignedBlock;
  renew_hash: string;
  cost: bigint;
  /** The lease's expiry after the renewal (Unix ns). */
  expires_at: bigint;
}

export interface LeaseRenewalsDeps {
  lease(hash: string): LeaseRecord | undefined;
  /** The newest certificate of `provider` valid at `now`. */
  certificate(provider: string, now: bigint): PerformanceCertificate | undefined;
  /** Timekeeper attestations of `subject` now: this node's own and its peers' (valid, listed keys). */
  gather(subject: string): Promise<Attestation[]>;
  timekeepers(): TimekeeperConfig | undefined;
  /** The emission parameters a block attested at `t` locks (the epoch covering `t`, or the fallback). */
  lockedAt(t: bigint): LockedEmissionParams;
  /** The network's minimum lease duration (seconds). */
  minDurationSecs(): bigint;
  wallet: {
    readonly address: string;
    balance(asset: string): bigint;
    write(draft: (balance: (asset: string) => bigint) => BlockDraft): Promise<SignedBlock>;
  };
  now: () => bigint;
}

/** The expiry of an accepted lease (start + duration), or undefined before the accept. */
export function expiryOf(lease: LeaseRecord): bigint | undefined {
  return lease.state === 'accepted' || lease.start_time > 0n
    ? leaseExpiry(lease.start_time, lease.duration)
    : undefined;
}

export class LeaseRenewals {
  private readonly d: LeaseRenewalsDeps;

  constructor(deps: LeaseRenewalsDeps) {
    this.d = deps;
  }

  get address(): string {
    return this.d.wallet.address;
  }

  /**
   * Timekeeper attestations of `leaseHash` now, at least the threshold: throws ConsumerError
   * 'lease_not_found' for a lease this node does not know, 'too_few_attestations' (retryable) when
   * not enough timekeepers answered.
   */
  async attestations(leaseHash: string): Promise<GatheredAttestations> {
    if (!this.d.lease(leaseHash)) throw new ConsumerError('lease_not_found', 'lease not found');
    const tk = this.d.timekeepers();
    const got = await this.d.gather(leaseHash);
    const need = tk?.threshold ?? 1;
    if (tk === undefined || got.length < need || got.length === 0)
      throw new ConsumerError(
        'too_few_attestations',
        `too few timekeeper attestations: ${got.length} answered, need ${need}; retry later`,
        true,
      );
    return { attestations: got, median: lowerMedian(got.map((a) => a.timestamp)) };
  }

  /** The cost of extending `lease` by `duration` seconds at its provider's current price. */
  price(
    lease: LeaseRecord,
    duration: bigint,
    now = this.d.now(),
  ): { cost: bigint; cert: PerformanceCertificate } {
    const cert = this.d.certificate(lease.provider, now);
    if (!cert)
      throw new ConsumerError(
        'no_certificate',
        `the provider ${lease.provider} has no valid performance certificate known to this node`,
      );
    return { cost: leaseCost(dims(lease, duration), cert.price_multiplier_milli), cert };
  }

  /**
   * Extends the node account's lease `leaseHash` by `duration` seconds: checks it can (the node's
   * lease, accepted, not settled, not expired, bounds, a certificate, funds), gathers attestations,
   * builds the `lease_renew` from the node wallet and submits it. Throws ConsumerError, or the
   * ledger's LedgerError when it refuses the block.
   */
  async renew(leaseHash: string, duration: bigint): Promise<RenewalResult> {
    const lease = this.check(leaseHash, duration);
    const { cost, cert } = this.price(lease, duration);
    const held = this.d.wallet.balance('XUSD');
    if (held < cost)
      throw new ConsumerError(
        'insufficient_balance',
        `insufficient XUSD balance: the node account ${this.address} holds ${held} micro-XUSD, the renewal costs ${cost}`,
      );
    const { attestations, median } = await this.attestations(leaseHash);
    const expiry = expiryOf(lease)!;
    if (median >= expiry)
      throw new ConsumerError('lease_state', 'lease expired: a renewal must be attested before its expiry');
    const locked = this.d.lockedAt(median);
    const block = await this.d.wallet.write((balance) => {
      if (balance('XUSD') < cost)
        throw new ConsumerError(
          'insufficient_balance',
          `insufficient XUSD balance: the node account ${this.address} holds ${balance('XUSD')} micro-XUSD, the renewal costs ${cost}`,
        );
      return {
        type: 'lease_renew',
        asset: 'XUSD',
        source: leaseHash,
        amount: cost,
        duration,
        balance: balance('XUSD') - cost,
        attestations,
        certificate_hash: cert.hash,
        ...locked,
      };
    });
    return {
      block,
      renew_hash: block.hash,
      cost,
      expires_at: leaseExpiry(lease.start_time, lease.duration + duration),
    };
  }

  /** The lease, when the node account may extend it by `duration` now; else ConsumerError. */
  check(leaseHash: string, duration: bigint): LeaseRecord {
    const lease = this.d.lease(leaseHash);
    if (!lease) throw new ConsumerError('lease_not_found', 'lease not found');
    if (lease.consumer !== this.address)
      throw new ConsumerError(
        'not_consumer',
        `the node account ${this.address} is not this lease's consumer: only its consumer can renew it`,
      );
    if (lease.state === 'created')
      throw new ConsumerError(
        'lease_state',
        'lease not yet accepted: it can be renewed once the provider accepts it',
      );
    if (lease.state !== 'accepted' || lease.settled)
      throw new ConsumerError(
        'lease_state',
        `cannot renew a lease in ${lease.settled ? 'settled' : lease.state} state`,
      );
    if (this.d.now() >= expiryOf(lease)!)
      throw new ConsumerError('lease_state', 'lease expired: a renewal must come before its expiry');
    try {
      checkLeaseBounds(dims(lease, duration), this.d.minDurationSecs());
    } catch (e) {
      throw new ConsumerError('lease_bounds', (e as Error).message);
    }
    if (lease.duration + duration > MAX_LEASE_DURATION_SECS)
      throw new ConsumerError(
        'lease_bounds',
        `a lease lasts at most ${MAX_LEASE_DURATION_SECS} seconds in all`,
      );
    return lease;
  }
}

function dims(lease: LeaseRecord, duration: bigint): LeaseDimensions {
  return { vcpus: lease.vcpus, memory_mb: lease.memory_mb, disk_gb: lease.disk_gb, duration };
}
