/**
 * Per-election vote throttle (reference-behavior.md 9.2 C-07, "vote storms"): at most `limit`
 * converge votes per representative per election are processed in a window of `windowMs`. A
 * representative that keeps changing its mind, or a peer replaying its votes with fresh timestamps,
 * cannot make this node verify and tally without bound. Final votes never pass through here: they
 * are irrevocable and decide elections, so they are never dropped.
 *
 * The check (`allows`) is separate from the charge (`charge`): the caller checks before verifying a
 * signature, so an over-budget vote is dropped cheaply, and charges only once the signature
 * verified, so forged votes naming a real representative cannot use up that representative's budget.
 */
export interface VoteThrottleOptions {
  /** Converge votes per representative per election per window (default 8). */
  limit?: number;
  /** Window length in milliseconds (default 10 s). */
  windowMs?: number;
  /** Elections x representatives tracked at once before expired entries are pruned (default 100,000). */
  maxEntries?: number;
  /** Clock in milliseconds (tests may inject one). */
  nowMs?: () => number;
}

interface Window {
  start: number;
  count: number;
}

export const DEFAULT_THROTTLE_LIMIT = 8;
export const DEFAULT_THROTTLE_WINDOW_MS = 10_000;

export class VoteThrottle {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly nowMs: () => number;
  /** election -> representative -> its current window. */
  private readonly windows = new Map<string, Map<string, Window>>();
  private entries = 0;
  /** Votes dropped because their representative was over budget in that election. */
  dropped = 0;
  /** Walks of the whole table (tests). */
  prunes = 0;

  constructor(opts: VoteThrottleOptions = {}) {
    this.limit = opts.limit ?? DEFAULT_THROTTLE_LIMIT;
    this.windowMs = opts.windowMs ?? DEFAULT_THROTTLE_WINDOW_MS;
    this.maxEntries = opts.maxEntries ?? 100_000;
    this.nowMs = opts.nowMs ?? Date.now;
  }

  /** True when one more converge vote of `rep` in `election` may be processed; counts a drop otherwise. */
  allows(rep: string, election: string): boolean {
    const w = this.windows.get(election)?.get(rep);
    if (!w || this.nowMs() - w.start >= this.windowMs || w.count < this.limit) return true;
    this.dropped += 1;
    return false;
  }

  /** Charges one processed (signature-checked) converge vote of `rep` in `election`. */
  charge(rep: string, election: string): void {
    const now = this.nowMs();
    let reps = this.windows.get(election);
    const w = reps?.get(rep);
    if (w && now - w.start < this.windowMs) {
      w.count += 1;
      return;
    }
    if (!w && this.entries >= this.maxEntries) {
      this.prune(now);
      reps = this.windows.get(election);
    }
    if (!reps) this.windows.set(election, (reps = new Map()));
    if (!w) this.entries += 1;
    reps.set(rep, { start: now, count: 1 });
  }

  /** Forgets an election (decided: its votes no longer matter). */
  forget(election: string): void {
    const reps = this.windows.get(election);
    if (!reps) return;
    this.entries -= reps.size;
    this.windows.delete(election);
  }

  /**
   * Drops expired windows; if most are live (a flood), starts over rather than grow without bound.
   * Most, not all: a walk that freed only a few entries was followed by another as soon as they
   * filled again, a walk of the whole table every few votes (issue #18). Starting over once three
   * quarters stay live leaves at least a quarter of the table to fill before the next walk.
   */
  private prune(now: number): void {
    this.prunes += 1;
    for (const [election, reps] of this.windows) {
      for (const [rep, w] of reps) {
        if (now - w.start < this.windowMs) continue;
        reps.delete(rep);
        this.entries -= 1;
      }
      if (reps.size === 0) this.windows.delete(election);
    }
    if (this.entries * 4 >= this.maxEntries * 3) {
      this.windows.clear();
      this.entries = 0;
    }
  }

  /** Representative windows tracked (for tests and bounds). */
  get size(): number {
    return this.entries;
  }
}
