import type { LedgerNode } from '../../node.ts';
import type { MarketplaceDeps } from '../marketplace/marketplace.ts';
import { lockedParamsFor } from '../pricing.ts';
import type { Reputation } from '../reputation.ts';
import { type HoldOptions, LeaseHolds } from './hold.ts';
import { LeaseRenewals } from './renewals.ts';

/**
 * How the node wires the consumer side (node.ts startMarketplace): what the marketplace needs to
 * know whether anyone can be asked and how providers rank on a price tie, and the renewals and
 * holds of the node account's leases, built from the node's parts.
 */

/** A provider's standing for ties: leases it settled minus leases it left unfulfilled. */
export function providerStanding(r: Reputation | undefined): bigint {
  return r === undefined ? 0n : r.leases_settled_as_provider - r.leases_unfulfilled_as_provider;
}

/** The marketplace's consumer-side deps: a connected peer to ask, and provider reputation. */
export function consumerMarketDeps(
  node: LedgerNode,
): Pick<MarketplaceDeps, 'reachable' | 'reputation' | 'minDurationSecs'> {
  return {
    minDurationSecs: () => node.leaseTiming.min_duration_secs,
    reachable: () => (node.p2p?.peers().length ?? 0) > 0,
    reputation: (provider) => providerStanding(node.ledger.reputation.get(provider)),
  };
}

/** The renewals and the (started) holds of the node account's leases. */
export function startConsumer(
  node: LedgerNode,
  opts: HoldOptions = {},
): { renewals: LeaseRenewals; holds: LeaseHolds } {
  const renewals = new LeaseRenewals({
    lease: (h) => node.ledger.leases.get(h),
    certificate: (provider, now) => node.certificates.newestValid(provider, now),
    gather: (subject) => node.gatherAttestations(subject),
    timekeepers: () => node.statechain.timekeepers,
    lockedAt: (t) => lockedParamsFor(node.ledger.leasing.epochCandidates(t)?.[0]),
    minDurationSecs: () => node.leaseTiming.min_duration_secs,
    wallet: node.nodeWallet,
    now: node.now,
  });
  const holds = new LeaseHolds(
    {
      db: node.store.leaseHolds,
      put: node.store.durablePut(node.store.leaseHolds),
      renewals,
      lease: (h) => node.ledger.leases.get(h),
      balance: () => node.nodeWallet.balance('XUSD'),
      minDurationSecs: () => node.leaseTiming.min_duration_secs,
      now: node.now,
      log: node.log,
    },
    opts,
  );
  holds.start();
  return { renewals, holds };
}
