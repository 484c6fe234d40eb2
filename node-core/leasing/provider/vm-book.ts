import type { Database } from 'lmdb';
import type { DurablePut } from '../../store/store.ts';
import type { VmDriverName, VmHandle, VmStatus } from '../../vm/driver.ts';

/**
 * The provider's record of each lease's VM, kept in the store (db `vms`) so that a restart finds its
 * running VMs again instead of deleting them (LS-18), and remembers failed attempts (LS-17). Local,
 * non-consensus state: written outside the ledger's transactions, one small JSON record per lease.
 */
export interface VmRecord {
  lease: string;
  driver: VmDriverName;
  status: VmStatus;
  /** Unix nanoseconds (digits) when provisioning began. */
  created_at: string;
  /** Resources as requested by the lease. */
  vcpus: number;
  memory_mb: number;
  disk_gb: number;
  /** The running VM, once it booted. */
  handle?: VmHandle;
  /** Why the VM is in `error` (or why the last attempt failed). */
  error?: string;
  /** Provisioning attempts so far, and when the next one is due (ms since epoch). */
  attempts: number;
  retry_at?: number;
  /** Unix nanoseconds (digits) when the VM was stopped. */
  stopped_at?: string;
}

export class VmBook {
  private readonly db: Database<string, string>;
  /** Writes the book's records, each durable before it resolves (Store.durablePut of `db`). */
  private readonly putDurable: DurablePut;

  constructor(db: Database<string, string>, putDurable: DurablePut) {
    this.db = db;
    this.putDurable = putDurable;
  }

  get(lease: string): VmRecord | undefined {
    const t = this.db.get(lease);
    return t === undefined ? undefined : (JSON.parse(t) as VmRecord);
  }

  /** Durable before it resolves: a VM that exists must be known after a crash. */
  async put(r: VmRecord): Promise<void> {
    await this.putDurable(r.lease, JSON.stringify(r));
  }

  async remove(lease: string): Promise<void> {
    await this.putDurable(lease, undefined);
  }

  all(): VmRecord[] {
    const out: VmRecord[] = [];
    for (const { value } of this.db.getRange()) out.push(JSON.parse(value) as VmRecord);
    return out;
  }
}
