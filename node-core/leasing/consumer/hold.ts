import type { DurablePut } from '../../store/store.ts';
import type { Logger } from 'pino';
import { LedgerError } from '../../ledger/errors.ts';
import { parseJson, stringifyJson } from '../../protocol/json.ts';
import { checkLeaseBounds, MAX_LEASE_DURATION_SECS } from '../pricing.ts';
import { type LeaseRecord, TERMINAL_STATES } from '../records.ts';
import { ConsumerError, expiryOf, type LeaseRenewals } from './renewals.ts';

/**
 * Lease holds: the node keeps a lease of its own account alive by renewing it in segments shortly
 * before it expires, while the node runs (the reference client's lease-hold helper: 60 s segments,
 * 30 s before expiry, reference-behavior.md 4.10). A hold stops when the account cannot pay the next
 * segment, when the lease ends, or when it is turned off; it warns, once, as soon as the balance
 * covers fewer than `lowFundsSegments` more segments, so the operator hears of it before a renewal
 * fails. Settings and warnings are kept in the store (`lease_holds`), so a restart resumes them.
 */

export const HOLD_SEGMENT_SECS = 60;
export const HOLD_RENEW_BEFORE_SECS = 30;
export const HOLD_CHECK_MS = 1_000;
export const HOLD_LOW_FUNDS_SEGMENTS = 3;

export interface HoldOptions {
  /** Segment length when the request names none (default 60 s). */
  segmentSecs?: number;
  /** Renew this long before the lease's expiry (default 30 s). */
  renewBeforeSecs?: number;
  /** How often holds are looked at (default 1 s). */
  checkMs?: number;
  /** Warn when the balance covers fewer than this many more segments (default 3). */
  lowFundsSegments?: number;
}

/** What is stored per lease. */
export interface HoldRecord {
  enabled: boolean;
  segment_secs: bigint;
  /** Why the hold stopped by itself, or the low-funds warning. */
  warning?: string;
}

/** What `GET /leases/{hash}` shows as `hold`. */
export interface HoldView {
  enabled: boolean;
  segment_secs: bigint;
  /** When the next renewal is due (Unix ns); null when none is (off, or not accepted yet). */
  next_renewal_at: bigint | null;
  warning?: string;
}

/** The named LMDB database holding the records (store.leaseHolds). */
export interface HoldDb {
  get(key: string): string | undefined;
  getRange(opts: object): Iterable<{ key: string; value: string }>;
}

export interface LeaseHoldsDeps {
  db: HoldDb;
  /** Writes a record to `db`, durable before it resolves (a hold turned off stays off after a crash). */
  put: DurablePut;
  renewals: LeaseRenewals;
  lease(hash: string): LeaseRecord | undefined;
  /** The node account's XUSD balance. */
  balance(): bigint;
  minDurationSecs(): bigint;
  now: () => bigint;
  log?: Logger;
}

const SECOND_NS = 1_000_000_000n;

function decode(text: string): HoldRecord {
  const o = parseJson(text) as { enabled: boolean; segment_secs: number | bigint; warning?: string };
  return {
    enabled: o.enabled === true,
    segment_secs: BigInt(o.segment_secs),
    ...(typeof o.warning === 'string' ? { warning: o.warning } : {}),
  };
}

export class LeaseHolds {
  private readonly d: LeaseHoldsDeps;
  private readonly segmentSecs: bigint;
  private readonly leadNs: bigint;
  private readonly checkMs: number;
  private readonly lowFunds: bigint;
  private readonly holds = new Map<string, HoldRecord>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(deps: LeaseHoldsDeps, opts: HoldOptions = {}) {
    this.d = deps;
    this.segmentSecs = BigInt(opts.segmentSecs ?? HOLD_SEGMENT_SECS);
    this.leadNs = BigInt(opts.renewBeforeSecs ?? HOLD_RENEW_BEFORE_SECS) * SECOND_NS;
    this.checkMs = opts.checkMs ?? HOLD_CHECK_MS;
    this.lowFunds = BigInt(opts.lowFundsSegments ?? HOLD_LOW_FUNDS_SEGMENTS);
  }

  /** Loads the stored holds and looks at them every `checkMs`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    for (const { key, value } of this.d.db.getRange({})) this.holds.set(key, decode(value));
    this.timer = setInterval(() => this.tick(), this.checkMs);
    this.timer.unref();
    this.tick();
  }

  /**
   * Reads the stored holds again, replacing those held in memory (an agent rollback rewrote the
   * `lease_holds` database, agent/checkpoints.ts), and looks at them at once when running. A renewal
   * under way finishes; its outcome may then be stored over what was read.
   */
  reload(): void {
    this.holds.clear();
    for (const { key, value } of this.d.db.getRange({})) this.holds.set(key, decode(value));
    this.tick();
  }

  /** Stops the timer and waits for renewals under way (the store must outlive them). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** The hold of `leaseHash` as shown, or undefined when none was ever set. */
  view(leaseHash: string): HoldView | undefined {
    const h = this.holds.get(leaseHash);
    if (!h) return undefined;
    const lease = h.enabled ? this.d.lease(leaseHash) : undefined;
    const expiry = lease && lease.state === 'accepted' ? expiryOf(lease) : undefined;
    return {
      enabled: h.enabled,
      segment_secs: h.segment_secs,
      next_renewal_at: expiry === undefined ? null : expiry - this.leadNs,
      ...(h.warning !== undefined ? { warning: h.warning } : {}),
    };
  }

  /**
   * Turns the hold of the node account's lease on (with `segmentSecs`, default the option's) or
   * off. Throws ConsumerError: not found, not the node's lease, a lease that has ended, a segment
   * the ledger would refuse.
   */
  async set(leaseHash: string, enabled: boolean, segmentSecs?: bigint): Promise<HoldView> {
    const lease = this.d.lease(leaseHash);
    if (!lease) throw new ConsumerError('lease_not_found', 'lease not found');
    if (lease.consumer !== this.d.renewals.address)
      throw new ConsumerError(
        'not_consumer',
        `the node account ${this.d.renewals.address} is not this lease's consumer: only its consumer can hold it`,
      );
    const held = this.holds.get(leaseHash);
    const segment = segmentSecs ?? held?.segment_secs ?? this.segmentSecs;
    if (enabled) {
      if (ended(lease))
        throw new ConsumerError(
          'lease_state',
          `cannot hold a lease in ${lease.settled ? 'settled' : lease.state} state`,
        );
      const expiry = expiryOf(lease);
      if (expiry !== undefined && this.d.now() >= expiry)
        throw new ConsumerError('lease_state', 'lease expired: it can no longer be renewed');
      try {
        checkLeaseBounds({ ...lease, duration: segment }, this.d.minDurationSecs());
      } catch (e) {
        throw new ConsumerError('lease_bounds', `segment_secs: ${(e as Error).message}`);
      }
    }
    // On disk first, then in effect: the timer acts on no setting that a crash could still take back.
    const h = { enabled, segment_secs: segment };
    await this.write(leaseHash, h);
    this.holds.set(leaseHash, h);
    if (enabled) {
      this.fundsCheck(leaseHash, lease);
      this.process(leaseHash);
    }
    return this.view(leaseHash)!;
  }

  private tick(): void {
    if (!this.running) return;
    for (const [hash, h] of this.holds) if (h.enabled) this.process(hash);
  }

  /** One look at an enabled hold: stop it, warn, or renew when due. */
  private process(hash: string): void {
    if (!this.running || this.inFlight.has(hash)) return;
    const h = this.holds.get(hash);
    if (!h?.enabled) return;
    const lease = this.d.lease(hash);
    if (!lease || ended(lease)) {
      this.halt(hash, 'hold stopped: the lease has ended');
      return;
    }
    const expiry = expiryOf(lease);
    if (lease.state !== 'accepted' || expiry === undefined) return; // not accepted yet: nothing to renew
    const now = this.d.now();
    if (now >= expiry) {
      this.halt(hash, 'hold stopped: the lease expired before it could be renewed');
      return;
    }
    if (lease.duration + h.segment_secs > MAX_LEASE_DURATION_SECS) {
      this.halt(hash, `hold stopped: a lease lasts at most ${MAX_LEASE_DURATION_SECS} seconds in all`);
      return;
    }
    if (now < expiry - this.leadNs) return;
    const cost = this.costOf(hash, lease, h.segment_secs);
    if (cost === undefined) return; // no certificate now: warned, tried again next tick
    const balance = this.d.balance();
    if (balance < cost) {
      this.halt(
        hash,
        `hold stopped: insufficient funds: the node account holds ${balance} micro-XUSD, the next renewal of ${h.segment_secs} s costs ${cost}`,
      );
      return;
    }
    const run = this.renewOnce(hash, h.segment_secs).finally(() => this.inFlight.delete(hash));
    this.inFlight.set(hash, run);
  }

  private async renewOnce(hash: string, segment: bigint): Promise<void> {
    try {
      const r = await this.d.renewals.renew(hash, segment);
      this.d.log?.info(
        {
          lease: hash,
          renew_hash: r.renew_hash,
          cost: r.cost.toString(),
          expires_at: r.expires_at.toString(),
        },
        'lease hold renewed the lease',
      );
      const lease = this.d.lease(hash);
      if (lease) this.fundsCheck(hash, lease);
    } catch (e) {
      const retryable =
        (e instanceof ConsumerError && e.retryable) || (e instanceof LedgerError && e.retryable);
      if (retryable || !(e instanceof ConsumerError || e instanceof LedgerError)) {
        this.d.log?.warn({ lease: hash, err: (e as Error).message }, 'lease hold: renewal failed, retrying');
        return;
      }
      this.halt(hash, `hold stopped: ${e.message}`);
    }
  }

  /** The cost of one segment, or undefined (and a warning) when the provider has no valid certificate. */
  private costOf(hash: string, lease: LeaseRecord, segment: bigint): bigint | undefined {
    try {
      return this.d.renewals.price(lease, segment).cost;
    } catch (e) {
      if (!(e instanceof ConsumerError)) throw e;
      this.warn(hash, `cannot renew yet: ${e.message}`);
      return undefined;
    }
  }

  /** Warns (once) when the balance covers fewer than `lowFundsSegments` more segments; clears it after. */
  private fundsCheck(hash: string, lease: LeaseRecord): void {
    const h = this.holds.get(hash);
    if (!h?.enabled) return;
    const cost = this.costOf(hash, lease, h.segment_secs);
    if (cost === undefined) return;
    const balance = this.d.balance();
    if (balance >= this.lowFunds * cost) {
      if (h.warning !== undefined) this.persist(hash, { enabled: true, segment_secs: h.segment_secs });
      return;
    }
    const left = cost === 0n ? 0n : balance / cost;
    this.warn(
      hash,
      `low funds: the node account holds ${balance} micro-XUSD, enough for ${left} more renewal${left === 1n ? '' : 's'} of ${h.segment_secs} s at ${cost} each`,
    );
  }

  /** Sets the hold's warning, logged once: only when it changes. */
  private warn(hash: string, warning: string): void {
    const h = this.holds.get(hash);
    if (!h || h.warning === warning) return;
    this.d.log?.warn({ lease: hash }, `lease hold: ${warning}`);
    this.persist(hash, { ...h, warning });
  }

  /** save() from a timer: a failed write is logged (the in-memory state stands until the next one). */
  private persist(hash: string, h: HoldRecord): void {
    this.save(hash, h).catch((e: unknown) =>
      this.d.log?.error({ lease: hash, err: (e as Error).message }, 'lease hold: could not store the hold'),
    );
  }

  /** Turns the hold off by itself, saying why (logged once). */
  private halt(hash: string, reason: string): void {
    const h = this.holds.get(hash);
    if (!h?.enabled) return;
    this.d.log?.warn({ lease: hash }, `lease ${reason}`);
    this.persist(hash, { enabled: false, segment_secs: h.segment_secs, warning: reason });
  }

  /** In effect at once (the timer's own changes: warnings, stops), then on disk. */
  private async save(hash: string, h: HoldRecord): Promise<void> {
    this.holds.set(hash, h);
    await this.write(hash, h);
  }

  private async write(hash: string, h: HoldRecord): Promise<void> {
    await this.d.put(
      hash,
      stringifyJson({
        enabled: h.enabled,
        segment_secs: h.segment_secs,
        ...(h.warning !== undefined ? { warning: h.warning } : {}),
      }),
    );
  }
}

function ended(lease: LeaseRecord): boolean {
  return lease.settled || TERMINAL_STATES.has(lease.state);
}
