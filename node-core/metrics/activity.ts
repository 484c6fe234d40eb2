/**
 * The node's activity over time, for the Node page's chart (`GET /node/activity`): how many blocks
 * it committed and how many peers it had, sampled by the node itself so the history does not
 * depend on a window being open. Two rings: fine samples (every 5 s for the last 10 minutes), so a
 * node just started already shows something, and one sample a minute for the last 24 hours. Both
 * are bounded: memory stays the same however long the node runs.
 */

export interface ActivitySample {
  /** When the sample was taken (node clock, Unix ns). */
  at: bigint;
  /** Blocks in the ledger at that time. */
  blocks: number;
  /** Blocks committed since the previous sample of the same ring (0 for the first). */
  new_blocks: number;
  /** Connected peers (passed netcheck) at that time. */
  peers: number;
}

export interface ActivityOptions {
  /** Fine sampling interval, ms (default 5 s). */
  fineMs?: number;
  /** Fine samples kept (default 120: 10 minutes). */
  fineKeep?: number;
  /** Coarse sampling interval, ms (default 60 s). */
  coarseMs?: number;
  /** Coarse samples kept (default 1440: 24 hours). */
  coarseKeep?: number;
}

export interface ActivityDeps {
  blocks(): number;
  peers(): number;
  now(): bigint;
}

export interface ActivitySeries {
  interval_ms: number;
  capacity: number;
  samples: ActivitySample[];
}

/** A bounded series of samples, oldest first. */
class SampleRing {
  private readonly items: ActivitySample[] = [];
  readonly capacity: number;
  constructor(capacity: number) {
    this.capacity = capacity;
  }

  add(at: bigint, blocks: number, peers: number): void {
    const prev = this.items[this.items.length - 1];
    // A ledger never loses blocks; a negative difference would only come from a counter reset.
    const added = prev === undefined ? 0 : Math.max(0, blocks - prev.blocks);
    this.items.push({ at, blocks, new_blocks: added, peers });
    if (this.items.length > this.capacity) this.items.shift();
  }

  list(): ActivitySample[] {
    return this.items.slice();
  }
}

export class ActivitySampler {
  readonly fineMs: number;
  readonly coarseMs: number;
  private readonly fineRing: SampleRing;
  private readonly coarseRing: SampleRing;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly deps: ActivityDeps;

  constructor(deps: ActivityDeps, opts: ActivityOptions = {}) {
    this.deps = deps;
    this.fineMs = positive(opts.fineMs ?? 5_000, 'fineMs');
    this.coarseMs = positive(opts.coarseMs ?? 60_000, 'coarseMs');
    this.fineRing = new SampleRing(positive(opts.fineKeep ?? 120, 'fineKeep'));
    this.coarseRing = new SampleRing(positive(opts.coarseKeep ?? 1440, 'coarseKeep'));
  }

  /** Takes the first sample of both rings now, then keeps sampling on timers that never hold the process. */
  start(): void {
    this.sample(this.fineRing);
    this.sample(this.coarseRing);
    const fine = setInterval(() => this.sample(this.fineRing), this.fineMs);
    const coarse = setInterval(() => this.sample(this.coarseRing), this.coarseMs);
    fine.unref();
    coarse.unref();
    this.timers.push(fine, coarse);
  }

  stop(): void {
    for (const t of this.timers.splice(0)) clearInterval(t);
  }

  get fine(): ActivitySeries {
    return { interval_ms: this.fineMs, capacity: this.fineRing.capacity, samples: this.fineRing.list() };
  }

  get minutes(): ActivitySeries {
    return {
      interval_ms: this.coarseMs,
      capacity: this.coarseRing.capacity,
      samples: this.coarseRing.list(),
    };
  }

  private sample(ring: SampleRing): void {
    ring.add(this.deps.now(), this.deps.blocks(), this.deps.peers());
  }
}

function positive(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`activity ${name} must be a positive integer`);
  return n;
}
