import type { LeaseRecord } from '../records.ts';
import { TERMINAL_STATES } from '../records.ts';

/**
 * What a provider offers (`--provide-vcpus`, `--provide-memory-mb`, `--provide-disk-gb`,
 * `--max-concurrent-leases`), and what is left of it once the leases it holds are counted.
 */
export interface ProviderCapacity {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  /** At most this many leases that are not terminal at once; 0 = no cap besides the dimensions. */
  max_concurrent_leases: bigint;
}

export interface Availability {
  /** Leases of this provider that are not terminal (created or accepted). */
  active_leases: bigint;
  available_vcpus: bigint;
  available_memory_mb: bigint;
  available_disk_gb: bigint;
}

export interface LeaseDemand {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
}

const left = (total: bigint, used: bigint): bigint => (used >= total ? 0n : total - used);

/**
 * Free capacity of a provider. A `created` lease counts as well as an `accepted` one: the provider
 * may still accept it, so its resources are reserved until it is cancelled or expires
 * (reference-behavior.md 1.5 counts every lease that is not terminal).
 */
export function availability(cap: ProviderCapacity, leases: Iterable<LeaseRecord>): Availability {
  let active = 0n;
  let vcpus = 0n;
  let memory = 0n;
  let disk = 0n;
  for (const l of leases) {
    if (TERMINAL_STATES.has(l.state)) continue;
    active += 1n;
    vcpus += l.vcpus;
    memory += l.memory_mb;
    disk += l.disk_gb;
  }
  return {
    active_leases: active,
    available_vcpus: left(cap.vcpus, vcpus),
    available_memory_mb: left(cap.memory_mb, memory),
    available_disk_gb: left(cap.disk_gb, disk),
  };
}

/** Whether a lease of `want` fits in what is available under the provider's lease cap. */
export function fits(cap: ProviderCapacity, avail: Availability, want: LeaseDemand): boolean {
  if (cap.max_concurrent_leases > 0n && avail.active_leases >= cap.max_concurrent_leases) return false;
  return (
    want.vcpus <= avail.available_vcpus &&
    want.memory_mb <= avail.available_memory_mb &&
    want.disk_gb <= avail.available_disk_gb
  );
}
