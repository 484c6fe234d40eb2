import type { ProviderCapacity } from '../marketplace/capacity.ts';
import type { LeaseRecord } from '../records.ts';

/** The reference's default capacity (reference-behavior.md 8.1): 2 vCPUs, 2048 MB, 20 GB. */
export const DEFAULT_PROVIDE: Readonly<ProviderCapacity> = Object.freeze({
  vcpus: 2n,
  memory_mb: 2048n,
  disk_gb: 20n,
  max_concurrent_leases: 0n,
});

/**
 * The provider's lease policy (reference-behavior.md 8.1: `--min/max-lease-duration`,
 * `--min/max-lease-cost`): leases outside it are never provisioned nor accepted. Absent bounds do
 * not limit. Costs are whole XUSD on the command line, micro-XUSD here.
 */
export interface LeasePolicy {
  minDurationSecs?: bigint;
  maxDurationSecs?: bigint;
  minCost?: bigint;
  maxCost?: bigint;
}

/** Why a lease is outside the policy, or undefined when it is inside. */
export function policyRefusal(policy: LeasePolicy, lease: LeaseRecord): string | undefined {
  const { minDurationSecs, maxDurationSecs, minCost, maxCost } = policy;
  if (minDurationSecs !== undefined && lease.duration < minDurationSecs)
    return `duration ${lease.duration} s is below this provider's minimum ${minDurationSecs} s`;
  if (maxDurationSecs !== undefined && lease.duration > maxDurationSecs)
    return `duration ${lease.duration} s is above this provider's maximum ${maxDurationSecs} s`;
  if (minCost !== undefined && lease.cost < minCost)
    return `cost ${lease.cost} micro-XUSD is below this provider's minimum ${minCost}`;
  if (maxCost !== undefined && lease.cost > maxCost)
    return `cost ${lease.cost} micro-XUSD is above this provider's maximum ${maxCost}`;
  return undefined;
}
