import type { SignedBlock } from '../../protocol/block-sign.ts';
import { MIN_PRICE_MULTIPLIER_MILLI } from '../../protocol/certificate.ts';
import type { MarketplaceOffer } from '../../protocol/marketplace.ts';
import type { BlockDraft } from '../../node-wallet.ts';
import type { HoldOptions } from '../consumer/hold.ts';
import { checkLeaseBounds, leaseCost } from '../pricing.ts';
import type { LeaseWant } from './marketplace.ts';

/**
 * `POST /lease/request` (reference-behavior.md 4.9): the operator's lease, paid from the node's
 * own account. The balance is checked before anything is published; a request nobody could answer
 * (no peer, and this node cannot lease to itself) fails at once; the marketplace finds the cheapest
 * valid offer the account can pay (the reference takes the first, 4.9); the node builds the `lease`
 * block from that offer and submits it, and the answer is the hash of that very block (decisions
 * D17, LS-20).
 *
 * An offer from this node itself is never taken: the node's account is the consumer, and the
 * ledger refuses a lease to oneself ("cannot lease to self").
 */

export type LeaseRequestErrorCode =
  | 'insufficient_balance' // the node's account cannot pay the cheapest possible (or offered) price
  | 'no_providers'; // no valid offer within the deadline

export class LeaseRequestError extends Error {
  readonly code: LeaseRequestErrorCode;
  constructor(code: LeaseRequestErrorCode, message: string) {
    super(message);
    this.name = 'LeaseRequestError';
    this.code = code;
  }
}

export interface LeaseRequestDeps {
  findOffer(
    want: LeaseWant,
    opts: { deadlineMs?: number; acceptable?: (offer: MarketplaceOffer) => boolean },
  ): Promise<MarketplaceOffer | undefined>;
  /** Whether a request of the node's account reaches anyone who could offer (default: yes). */
  canAsk?: () => boolean;
  /** The network's shortest lease, seconds (default: the protocol's 60 s). */
  minDurationSecs?: () => bigint;
  wallet: {
    readonly address: string;
    balance(asset: string): bigint;
    write(draft: (balance: (asset: string) => bigint) => BlockDraft): Promise<SignedBlock>;
  };
}

export interface LeaseRequestOptions {
  /** How long to wait for an offer (default: the marketplace's, 30 s). */
  offerDeadlineMs?: number;
  /** Lease holds of the node account (leasing/consumer/hold.ts): segment, lead, check interval. */
  hold?: HoldOptions;
}

export class LeaseRequests {
  private readonly deps: LeaseRequestDeps;
  private readonly opts: LeaseRequestOptions;

  constructor(deps: LeaseRequestDeps, opts: LeaseRequestOptions = {}) {
    this.deps = deps;
    this.opts = opts;
  }

  /**
   * Leases `want` for `accessPubKey`; resolves with the submitted lease block. Throws
   * LeaseRequestError, LeasingError for dimensions out of bounds, or the ledger's LedgerError
   * when it refuses the block.
   */
  async request(want: LeaseWant, accessPubKey: string): Promise<SignedBlock> {
    const { wallet } = this.deps;
    // LeasingError 'lease_bounds': the ledger would refuse the lease.
    checkLeaseBounds(want, this.deps.minDurationSecs?.());
    // No provider can price below the lowest multiplier a certificate may carry.
    const floor = leaseCost(want, MIN_PRICE_MULTIPLIER_MILLI);
    const held = wallet.balance('XUSD');
    if (held < floor) {
      throw new LeaseRequestError(
        'insufficient_balance',
        `insufficient XUSD balance: the node account ${wallet.address} holds ${held} micro-XUSD, the lease costs at least ${floor}`,
      );
    }
    if (this.deps.canAsk && !this.deps.canAsk())
      throw new LeaseRequestError(
        'no_providers',
        'no providers: this node has no peers to ask, and it cannot lease from itself',
      );
    let cheapestRefused: bigint | undefined;
    const offer = await this.deps.findOffer(want, {
      deadlineMs: this.opts.offerDeadlineMs,
      acceptable: (o) => {
        if (o.total_cost <= wallet.balance('XUSD')) return true;
        if (cheapestRefused === undefined || o.total_cost < cheapestRefused) cheapestRefused = o.total_cost;
        return false;
      },
    });
    if (!offer) {
      if (cheapestRefused !== undefined) {
        throw new LeaseRequestError(
          'insufficient_balance',
          `insufficient XUSD balance: the node account ${wallet.address} holds ${wallet.balance('XUSD')} micro-XUSD, the cheapest offer costs ${cheapestRefused}`,
        );
      }
      throw new LeaseRequestError('no_providers', 'no providers: no provider offered this lease in time');
    }
    return wallet.write((balance) => {
      // Another write may have spent the funds since the offer was taken.
      if (balance('XUSD') < offer.total_cost)
        throw new LeaseRequestError(
          'insufficient_balance',
          `insufficient XUSD balance: the node account ${wallet.address} holds ${balance('XUSD')} micro-XUSD, the offer costs ${offer.total_cost}`,
        );
      return {
        type: 'lease',
        asset: 'XUSD',
        destination: offer.provider,
        amount: offer.total_cost,
        vcpus: want.vcpus,
        memory_mb: want.memory_mb,
        disk_gb: want.disk_gb,
        duration: want.duration,
        access_pub_key: accessPubKey,
        certificate_hash: offer.certificate_hash,
        balance: balance('XUSD') - offer.total_cost,
      };
    });
  }
}
