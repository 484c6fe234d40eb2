/**
 * When consensus looks again at an account whose election stalled (its block's votes short of the
 * quorum) and nothing it listens to will announce a change: the fallback delay or the stability
 * window running out, representatives' weights drifting with commits. Each account waits for its
 * own moment, so a node with many open elections (a large representative offline: every block
 * waits for the fallback) pays for the ones due, not for all of them with every commit (issue #18;
 * that cost 18 µs an open election a commit and took ingest from 3,000 to 240 blocks/s).
 *
 * Votes, a source becoming final and the account's own commits still drive it at once; this is
 * the retry for the rest. A retry at the same height backs off (1 s, 2 s, ... up to `maxBackoffMs`).
 */
export interface RedriveScheduleOptions {
  /** Resolution of the schedule: due times are rounded up to this. */
  tickMs: number;
  /** First retry after this; doubled with each retry at the same height. */
  backoffMs: number;
  maxBackoffMs: number;
}

interface Entry {
  /** The tick it is due in. */
  tick: number;
  height: number;
  tries: number;
}

export class RedriveSchedule {
  private readonly entries = new Map<string, Entry>();
  /** Accounts by the tick they are due in; an account rescheduled earlier leaves a stale copy. */
  private readonly byTick = new Map<number, string[]>();

  private readonly opts: RedriveScheduleOptions;

  constructor(opts: RedriveScheduleOptions) {
    this.opts = opts;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * `account` stalled at `height` at `nowMs`: due after its backoff, or at `wakeAtMs` (when a timer
   * of its election runs out) if that is sooner. An account already due sooner keeps that.
   */
  add(account: string, height: number, nowMs: number, wakeAtMs = Infinity): void {
    const prev = this.entries.get(account);
    const tries = prev && prev.height === height ? prev.tries + 1 : 0;
    const backoff = Math.min(this.opts.backoffMs * 2 ** tries, this.opts.maxBackoffMs);
    const at = wakeAtMs > nowMs ? Math.min(nowMs + backoff, wakeAtMs) : nowMs + backoff;
    const tick = Math.ceil(at / this.opts.tickMs);
    if (prev && prev.tick <= tick && prev.tick * this.opts.tickMs > nowMs) {
      prev.tries = tries;
      prev.height = height;
      return;
    }
    this.entries.set(account, { tick, height, tries });
    let list = this.byTick.get(tick);
    if (!list) this.byTick.set(tick, (list = []));
    list.push(account);
  }

  /** Takes the accounts due by `nowMs` (each once; they stay known for their backoff). */
  takeDue(nowMs: number): string[] {
    const now = Math.floor(nowMs / this.opts.tickMs);
    const out: string[] = [];
    for (const [tick, list] of this.byTick) {
      if (tick > now) continue;
      this.byTick.delete(tick);
      for (const account of list) {
        const e = this.entries.get(account);
        if (e?.tick === tick) {
          out.push(account);
          // Due no more, but its tries are kept for a stall at the same height right after.
          e.tick = -1;
        }
      }
    }
    return out;
  }

  /** The account's election moved on (decided or gone): its backoff starts over next time. */
  forget(account: string): void {
    this.entries.delete(account);
  }
}
