import type { Logger } from 'pino';
import type { LeaseBook } from './lease-book.ts';
import type { LeaseTiming } from './timing.ts';

/**
 * The local archive sweep (reference-behavior.md 4.3, LS-04): every 10 s it looks for accepted,
 * unsettled leases past expiry + escrow expiry + archive gap by the local clock, and has the ledger
 * expire them in its group commit (Ledger.archiveLeases), which checks each again in the write. The
 * result is node-local (no block), which is why only the long-final past is ever archived.
 */
export interface ArchiveSweepDeps {
  leases: Pick<LeaseBook, 'expiredBefore'>;
  archive(hashes: string[], now: bigint): Promise<string[]>;
  /** Node clock, Unix ns. */
  now(): bigint;
  timing(): LeaseTiming;
  log?: Logger;
}

export const ARCHIVE_SWEEP_MS = 10_000;

export class ArchiveSweep {
  private readonly d: ArchiveSweepDeps;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | undefined;
  /** Leases this node has archived since it started. */
  archived = 0;

  constructor(deps: ArchiveSweepDeps, opts: { intervalMs?: number } = {}) {
    this.d = deps;
    this.intervalMs = opts.intervalMs ?? ARCHIVE_SWEEP_MS;
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a sweep under way (its write is queued before the store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  /** One sweep; sweeps never overlap. Resolves with the hashes archived. */
  sweep(): Promise<string[]> {
    this.running ??= this.once().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async once(): Promise<string[]> {
    const now = this.d.now();
    const timing = this.d.timing();
    // archiveEligible: now > expiry + escrow expiry + archive gap, i.e. expiry before the difference.
    // Read from the expiry index: the running leases whose time has come, not every running one.
    const due = this.d.leases.expiredBefore(now - timing.escrow_expiry_ns - timing.archive_gap_ns);
    if (due.length === 0) return [];
    try {
      const done = await this.d.archive(due, now);
      this.archived += done.length;
      if (done.length > 0) this.d.log?.info({ leases: done }, 'leases archived: expired past their escrow');
      return done;
    } catch (err) {
      this.d.log?.warn({ err: (err as Error).message }, 'archive sweep failed');
      return [];
    }
  }
}
