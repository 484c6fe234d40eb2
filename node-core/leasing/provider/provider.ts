import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Attestation } from '../../protocol/block.ts';
import type { SignedBlock } from '../../protocol/block-sign.ts';
import type { BlockDraft } from '../../node-wallet.ts';
import type { DriverReport, ExecOptions, ExecResult, VmDriver, VmHandle } from '../../vm/driver.ts';
import { VmError } from '../../vm/driver.ts';
import { lowerMedian } from '../attestations.ts';
import { availability, fits, type ProviderCapacity } from '../marketplace/capacity.ts';
import type { LockedEmissionParams } from '../pricing.ts';
import { type LeaseRecord, TERMINAL_STATES } from '../records.ts';
import { leaseTotalEmission } from '../rules/settle.ts';
import { leaseExpiry, type LeaseTiming } from '../timing.ts';
import { type LeasePolicy, policyRefusal } from './policy.ts';
import type { VmBook, VmRecord } from './vm-book.ts';

/**
 * The provider's automation (reference-behavior.md 4.8, with its flaws fixed): for each lease
 * addressed to this node it provisions a VM first, then accepts with attestations gathered AFTER
 * provisioning (so a slow boot cannot stale them, LS-19); it settles in the window and tears the VM
 * down after settle, force-settle, cancel or expiry. A lease whose attempt failed is tried again with
 * back-off while it can still be accepted (LS-17), never with two VMs at once. VMs run detached and
 * are recorded in the store, so a restart finds them again and resumes settling (LS-18); a failed
 * accept never tears down a VM whose lease this node's own accept holds (LS-09).
 */

export interface ProviderDeps {
  /** This node's account: the provider of the leases it serves. */
  address: string;
  capacity: ProviderCapacity;
  driver: VmDriver;
  /** What the driver's probe found (for `/vms`, `/node` and the log). */
  report: DriverReport;
  book: VmBook;
  leases: {
    get(hash: string): LeaseRecord | undefined;
    list(
      filter: { provider?: string; state?: LeaseRecord['state'] },
      offset: number,
      limit: number,
    ): { leases: LeaseRecord[] };
  };
  /** The hash of this node's valid certificate now, if any: no accept without one. */
  certificateValid: (hash: string) => boolean;
  /** Whether this node's account has a chain: an accept cannot open one. */
  opened: () => boolean;
  /** Opens this node's account (a faucet claim where the network has one); throws when it cannot. */
  open: () => Promise<void>;
  /** This node's account balance of an asset now (the stake pre-check; write() checks again). */
  balance: (asset: string) => bigint;
  /** The stake an accept of a lease costing `cost` must lock. */
  stakeFor: (cost: bigint) => bigint;
  /** The emission parameters an accept attested at `t` locks (the covering epoch's). */
  lockedParamsAt: (t: bigint) => LockedEmissionParams;
  /** Timekeeper attestations of a lease gathered now. */
  attest: (leaseHash: string) => Promise<Attestation[]>;
  /** How many attestations a block needs (`sys.timekeepers` threshold). */
  threshold: () => number;
  /** Builds, signs, solves and submits a block of this node's account (NodeWallet.write). */
  write: (draft: (balance: (asset: string) => bigint) => BlockDraft) => Promise<SignedBlock>;
  timing: () => LeaseTiming;
  now: () => bigint;
  log?: Logger;
}

export interface ProviderOptions {
  policy?: LeasePolicy;
  /** How often leases are looked at (default 5 s; commits of lease blocks also trigger a look). */
  watchMs?: number;
  /** Back-off after a failed attempt: doubles from this (default 15 s) up to retryMaxMs (5 min). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Leave VMs running when the node stops, for a restart to find (default true). */
  keepVmsOnStop?: boolean;
  /** Exec time-out (default EXEC_TIMEOUT_MS) and output cap per stream (default EXEC_MAX_OUTPUT). */
  exec?: Partial<ExecOptions>;
  /** A running VM's health is checked at most this often (default 5 s), however often leases are looked at. */
  healthEveryMs?: number;
  /** Failed health checks in a row before a VM is taken for gone and started again (default 3). */
  goneAfterChecks?: number;
}

/** `POST /vms/{lease}/exec` gives up after 30 s (408) and keeps at most 1 MiB of each stream. */
export const EXEC_TIMEOUT_MS = 30_000;
export const EXEC_MAX_OUTPUT = 1024 * 1024;
/** Provisioning runs at most this many VMs at once: each boot takes a core under emulation. */
const MAX_PARALLEL_PROVISIONING = 2;
/** Records of stopped VMs are kept this long for `/vms`, then dropped. */
const STOPPED_KEEP_MS = 24 * 3600_000;

export type ProviderErrorCode = 'vm_not_found' | 'vm_not_running';

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  constructor(code: ProviderErrorCode, message: string) {
    super(message);
    this.name = 'ProviderError';
    this.code = code;
  }
}

export class Provider {
  private readonly d: ProviderDeps;
  private readonly o: Required<Omit<ProviderOptions, 'policy' | 'exec'>> & {
    policy: LeasePolicy;
    exec: ExecOptions;
  };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  /** Leases being provisioned or accepted now, with the means to abort their launch. */
  private readonly inflight = new Map<string, AbortController>();
  /** Leases being settled or torn down now. */
  private readonly closing = new Set<string>();
  /** Policy refusals already logged (once per lease). */
  private readonly refused = new Set<string>();
  /** Work started by ticks, awaited by stop(). */
  private readonly work = new Set<Promise<unknown>>();
  /** Per running VM: when its health was last checked and how many checks in a row failed. */
  private readonly health = new Map<string, { at: number; failures: number }>();

  constructor(deps: ProviderDeps, opts: ProviderOptions = {}) {
    this.d = deps;
    this.o = {
      policy: opts.policy ?? {},
      watchMs: opts.watchMs ?? 5_000,
      retryBaseMs: opts.retryBaseMs ?? 15_000,
      retryMaxMs: opts.retryMaxMs ?? 300_000,
      healthEveryMs: opts.healthEveryMs ?? 5_000,
      goneAfterChecks: opts.goneAfterChecks ?? 3,
      keepVmsOnStop: opts.keepVmsOnStop ?? true,
      exec: {
        timeoutMs: opts.exec?.timeoutMs ?? EXEC_TIMEOUT_MS,
        maxOutputBytes: opts.exec?.maxOutputBytes ?? EXEC_MAX_OUTPUT,
      },
    };
  }

  get report(): DriverReport {
    return this.d.report;
  }

  get capacity(): ProviderCapacity {
    return this.d.capacity;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const { driver, report } = this.d;
    this.d.log?.info(
      { driver: driver.name, vm_boundary: report.vmBoundary, detail: report.detail },
      report.vmBoundary
        ? `provider: running lease VMs with the ${driver.name} driver`
        : `provider: running lease VMs with the ${driver.name} driver, which has NO VM boundary`,
    );
    this.timer = setInterval(() => this.poke(), this.o.watchMs);
    this.timer.unref();
    this.poke();
  }

  /** Stops watching; aborts launches in progress; leaves running VMs unless told otherwise. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.inflight.values()) c.abort();
    await this.running;
    await Promise.allSettled([...this.work]);
    if (!this.o.keepVmsOnStop) await this.destroyAll();
  }

  /** Stops and removes every VM this provider runs (tests; the operator leaving the market). */
  async destroyAll(): Promise<void> {
    for (const r of this.d.book.all()) if (r.handle) await this.destroy(r, 'removed by the operator');
  }

  /** A lease block naming this provider was committed (or anything else worth a look): look now. */
  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.tick()
      .catch((e: unknown) => this.d.log?.error({ err: e }, 'provider: lease watch failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  // ---- the watch ---------------------------------------------------------------------------------

  private async tick(): Promise<void> {
    const { leases, address } = this.d;
    // VMs first: tear down what no live lease needs, check that accepted leases still have theirs.
    for (const r of this.d.book.all()) await this.reconcile(r);
    const created = leases.list({ provider: address, state: 'created' }, 0, 10_000).leases;
    for (const lease of created) {
      if (this.stopped) return;
      if (this.inflight.size >= MAX_PARALLEL_PROVISIONING) break;
      if (this.inflight.has(lease.lease_hash)) continue;
      if (!this.due(lease)) continue;
      this.track(this.serve(lease));
    }
    const now = this.d.now();
    const timing = this.d.timing();
    for (const lease of leases.list({ provider: address, state: 'accepted' }, 0, 10_000).leases) {
      if (this.closing.has(lease.lease_hash)) continue;
      const expiry = leaseExpiry(lease.start_time, lease.duration);
      if (now >= expiry && now <= expiry + timing.settle_grace_ns) this.track(this.settle(lease));
    }
  }

  private track(p: Promise<unknown>): void {
    this.work.add(p);
    void p.finally(() => this.work.delete(p));
  }

  /** Whether a created lease should be attempted now: not refused, not waiting for a retry. */
  private due(lease: LeaseRecord): boolean {
    const refusal = policyRefusal(this.o.policy, lease) ?? this.unservable(lease);
    if (refusal !== undefined) {
      if (!this.refused.has(lease.lease_hash)) {
        this.refused.add(lease.lease_hash);
        this.d.log?.info({ lease: lease.lease_hash }, `provider: not serving lease: ${refusal}`);
      }
      return false;
    }
    const r = this.d.book.get(lease.lease_hash);
    return r === undefined || r.retry_at === undefined || Date.now() >= r.retry_at;
  }

  /** A reason this node cannot serve the lease at all (no key, no certificate, no room now). */
  private unservable(lease: LeaseRecord): string | undefined {
    if (!lease.access_pub_key) return 'the lease has no access key';
    if (!lease.certificate_hash || !this.d.certificateValid(lease.certificate_hash))
      return 'the lease names no valid certificate of this provider';
    return undefined;
  }

  /** Capacity left for `lease`: accepted leases and the launches in flight count (not `created` ones). */
  private roomFor(lease: LeaseRecord): boolean {
    const { leases, address, capacity } = this.d;
    const held = leases
      .list({ provider: address, state: 'accepted' }, 0, 10_000)
      .leases.filter((l) => l.lease_hash !== lease.lease_hash);
    for (const h of this.inflight.keys()) {
      const l = h === lease.lease_hash ? undefined : leases.get(h);
      if (l && l.state === 'created') held.push(l);
    }
    return fits(capacity, availability(capacity, held), lease);
  }

  // ---- serving a lease ---------------------------------------------------------------------------

  /** Provision, attest, accept; on failure clean up and schedule a retry while the lease is open. */
  private async serve(lease: LeaseRecord): Promise<void> {
    const hash = lease.lease_hash;
    const abort = new AbortController();
    this.inflight.set(hash, abort);
    const prior = this.d.book.get(hash);
    const attempts = (prior?.attempts ?? 0) + 1;
    try {
      if (!this.roomFor(lease)) throw new Error('no capacity left for this lease now');
      if (!this.d.opened()) await this.d.open();
      const stake = this.d.stakeFor(lease.cost);
      if (stake > 0n && this.d.balance('XUSD') < stake) throw new Error(`cannot stake ${stake} micro-XUSD`);
      let record: VmRecord =
        prior?.handle && prior.status === 'running' ? prior : await this.launch(lease, attempts, abort);
      // Attestations gathered after the VM booted: however long that took, they are fresh (LS-19).
      const attestations = await this.d.attest(hash);
      if (attestations.length < this.d.threshold())
        throw new Error(`only ${attestations.length} of ${this.d.threshold()} timekeeper attestations`);
      const start = lowerMedian(attestations.map((a) => a.timestamp));
      const locked = this.d.lockedParamsAt(start);
      await this.d.write((balance) => ({
        type: 'lease_accept',
        asset: 'XUSD',
        source: hash,
        amount: stake,
        balance: balance('XUSD') - stake,
        attestations,
        certificate_hash: lease.certificate_hash,
        ...locked,
      }));
      record = { ...record, attempts, retry_at: undefined, error: undefined };
      await this.d.book.put(record);
      this.d.log?.info({ lease: hash, driver: record.driver }, 'provider: lease accepted, VM running');
    } catch (e) {
      await this.failed(hash, attempts, e);
    } finally {
      this.inflight.delete(hash);
    }
  }

  private async launch(lease: LeaseRecord, attempts: number, abort: AbortController): Promise<VmRecord> {
    const hash = lease.lease_hash;
    const base: VmRecord = {
      lease: hash,
      driver: this.d.driver.name,
      status: 'creating',
      created_at: String(this.d.now()),
      vcpus: Number(lease.vcpus),
      memory_mb: Number(lease.memory_mb),
      disk_gb: Number(lease.disk_gb),
      attempts,
    };
    await this.d.book.put(base);
    const started = Date.now();
    const handle = await this.d.driver.create(
      {
        lease: hash,
        vcpus: Number(lease.vcpus),
        memoryMb: Number(lease.memory_mb),
        diskGb: Number(lease.disk_gb),
        accessPubKey: lease.access_pub_key!,
      },
      { signal: abort.signal, onProgress: (msg) => this.d.log?.debug({ lease: hash }, `provider: ${msg}`) },
    );
    const record: VmRecord = { ...base, status: 'running', handle };
    await this.d.book.put(record);
    this.d.log?.info({ lease: hash, ms: Date.now() - started }, 'provider: VM booted');
    return record;
  }

  /**
   * A failed attempt. If this node's own accept of the lease stands (a duplicate attempt failed),
   * the VM is in use and stays (LS-09); otherwise it goes, and the lease is tried again later.
   */
  private async failed(hash: string, attempts: number, e: unknown): Promise<void> {
    const reason = e instanceof Error ? e.message : String(e);
    const lease = this.d.leases.get(hash);
    const record = this.d.book.get(hash);
    if (lease?.state === 'accepted' && lease.provider === this.d.address) {
      this.d.log?.warn(
        { lease: hash, err: reason },
        'provider: attempt failed, but the lease is accepted: VM kept',
      );
      return;
    }
    if (record?.handle) await this.d.driver.destroy(record.handle).catch(() => {});
    const delay = Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** Math.min(attempts - 1, 16));
    await this.d.book.put({
      lease: hash,
      driver: this.d.driver.name,
      status: 'error',
      created_at: record?.created_at ?? String(this.d.now()),
      vcpus: record?.vcpus ?? Number(lease?.vcpus ?? 0n),
      memory_mb: record?.memory_mb ?? Number(lease?.memory_mb ?? 0n),
      disk_gb: record?.disk_gb ?? Number(lease?.disk_gb ?? 0n),
      attempts,
      retry_at: Date.now() + delay,
      error: reason,
    });
    this.d.log?.warn(
      { lease: hash, attempts, retry_in_ms: delay, err: reason },
      'provider: could not serve lease; will retry while it is open',
    );
  }

  // ---- settling and tearing down -----------------------------------------------------------------

  /** Settles an accepted lease inside [expiry, expiry + grace] by the timekeepers' clock. */
  private async settle(lease: LeaseRecord): Promise<void> {
    const hash = lease.lease_hash;
    this.closing.add(hash);
    try {
      const attestations = await this.d.attest(hash);
      if (attestations.length < this.d.threshold()) return; // next look tries again
      const t = lowerMedian(attestations.map((a) => a.timestamp));
      const expiry = leaseExpiry(lease.start_time, lease.duration);
      if (t < expiry) return; // the timekeepers' clock is behind ours: not yet
      if (t > expiry + this.d.timing().settle_grace_ns) {
        this.d.log?.warn({ lease: hash }, 'provider: settle window missed; the consumer may force-settle');
        return;
      }
      const amount = leaseTotalEmission(lease);
      await this.d.write((balance) => ({
        type: 'lease_settle',
        asset: 'XE',
        source: hash,
        amount,
        balance: balance('XE') + amount,
        attestations,
      }));
      this.d.log?.info({ lease: hash, emission: String(amount) }, 'provider: lease settled');
      const r = this.d.book.get(hash);
      if (r) await this.destroy(r, 'lease settled');
    } catch (e) {
      this.d.log?.warn({ lease: hash, err: (e as Error).message }, 'provider: settle failed; will retry');
    } finally {
      this.closing.delete(hash);
    }
  }

  /** Brings one VM record in line with its lease. */
  private async reconcile(r: VmRecord): Promise<void> {
    if (this.inflight.has(r.lease) || this.closing.has(r.lease)) return;
    const lease = this.d.leases.get(r.lease);
    if (r.status === 'stopped' || (r.status === 'error' && !r.handle)) {
      const open = lease?.state === 'created';
      const old = Date.now() - Number(BigInt(r.stopped_at ?? r.created_at) / 1_000_000n) > STOPPED_KEEP_MS;
      if (!open && old) await this.d.book.remove(r.lease);
      return;
    }
    if (lease === undefined || TERMINAL_STATES.has(lease.state)) {
      await this.destroy(r, lease === undefined ? 'lease rolled back' : `lease ${lease.state}`);
      return;
    }
    if (lease.state !== 'accepted' || lease.provider !== this.d.address || !r.handle) return;
    if (!(await this.gone(r.lease, r.handle))) return;
    // The VM is gone (a host reboot): the lease still runs, so it gets a fresh one.
    this.d.log?.warn({ lease: r.lease }, 'provider: VM of an accepted lease is gone; starting it again');
    await this.d.driver.destroy(r.handle).catch(() => {});
    const abort = new AbortController();
    this.inflight.set(r.lease, abort);
    this.track(
      this.launch(lease, r.attempts + 1, abort)
        .catch(async (e: unknown) => {
          await this.d.book.put({ ...r, status: 'error', handle: undefined, error: (e as Error).message });
        })
        .finally(() => this.inflight.delete(r.lease)),
    );
  }

  /**
   * Whether a running VM is gone for good. One failed check is not enough: under load its SSH server
   * can miss the check's 1.5 s, or refuse a connection while earlier checks' sessions linger, and
   * starting the VM again would throw away a consumer's running machine. So checks run at most every
   * healthEveryMs, and only goneAfterChecks failures in a row count as gone.
   */
  private async gone(lease: string, handle: VmHandle): Promise<boolean> {
    const h = this.health.get(lease) ?? { at: 0, failures: 0 };
    if (Date.now() - h.at < this.o.healthEveryMs) return false;
    const alive = await this.d.driver.alive(handle);
    const failures = alive ? 0 : h.failures + 1;
    if (!alive)
      this.d.log?.warn(
        { lease, failures },
        'provider: VM of an accepted lease did not answer its health check',
      );
    if (failures >= this.o.goneAfterChecks) {
      this.health.delete(lease);
      return true;
    }
    this.health.set(lease, { at: Date.now(), failures });
    return false;
  }

  private async destroy(r: VmRecord, why: string): Promise<void> {
    this.health.delete(r.lease);
    this.closing.add(r.lease);
    try {
      if (r.handle) await this.d.driver.destroy(r.handle);
      await this.d.book.put({
        ...r,
        status: 'stopped',
        handle: undefined,
        retry_at: undefined,
        stopped_at: String(this.d.now()),
      });
      this.d.log?.info({ lease: r.lease }, `provider: VM stopped (${why})`);
    } catch (e) {
      this.d.log?.error({ lease: r.lease, err: e }, 'provider: could not stop VM');
    } finally {
      this.closing.delete(r.lease);
    }
  }

  // ---- access ------------------------------------------------------------------------------------

  /** The VMs this provider runs or ran (newest first). */
  vms(): VmRecord[] {
    return this.d.book.all().sort((a, b) => (BigInt(b.created_at) > BigInt(a.created_at) ? 1 : -1));
  }

  vm(lease: string): VmRecord | undefined {
    return this.d.book.get(lease);
  }

  /** Runs a command in a lease's running VM (POST /vms/{lease}/exec). */
  async exec(lease: string, command: string): Promise<ExecResult> {
    return this.d.driver.exec(this.runningHandle(lease), command, this.o.exec);
  }

  /** A TCP connection to the SSH server of a lease's running VM (the tunnel's far end). */
  async connect(lease: string): Promise<Socket> {
    return this.d.driver.connect(this.runningHandle(lease));
  }

  private runningHandle(lease: string): VmHandle {
    const r = this.d.book.get(lease);
    if (r === undefined) throw new ProviderError('vm_not_found', 'vm not found');
    if (r.status !== 'running' || !r.handle)
      throw new ProviderError('vm_not_running', `vm is ${r.status}${r.error ? `: ${r.error}` : ''}`);
    return r.handle;
  }
}

export { VmError };
