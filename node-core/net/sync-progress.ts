import type { Logger } from 'pino';

/** The progress fields a catch-up round keeps (a subset of SyncProgress in sync.ts). */
export interface RoundProgress {
  blocks_known: number;
  blocks_left: number;
  blocks_done: number;
  estimate_seconds: number | null;
}

/** A log line at most this often while a catch-up runs. */
export const SYNC_LOG_EVERY_MS = 5_000;
/** The rate behind the estimate is measured over about this long (recent pages count most). */
const RATE_WINDOW_MS = 20_000;

/**
 * Progress of one sync round: blocks known, done and left, and an estimate of the time left from
 * the rate of the last RATE_WINDOW_MS (null until a first page is applied: "unknown" rather than
 * a wild guess). While a catch-up runs, a line goes to the log every SYNC_LOG_EVERY_MS with the
 * same figures, so a headless node says how far it got.
 */
export class SyncReporter {
  private readonly p: RoundProgress;
  private readonly log: Logger | undefined;
  private readonly now: () => number;
  private readonly startedAt: number;
  private lastLog: number;
  /** (time, blocks done) samples inside the rate window, oldest first. */
  private readonly samples: [number, number][] = [];

  constructor(
    progress: RoundProgress,
    total: number,
    log?: Logger,
    now: () => number = () => performance.now(),
  ) {
    this.p = progress;
    this.log = log;
    this.now = now;
    this.startedAt = now();
    this.lastLog = this.startedAt;
    progress.blocks_known = total;
    progress.blocks_left = total;
    progress.blocks_done = 0;
    progress.estimate_seconds = null;
    this.samples.push([this.startedAt, 0]);
    if (total > 0) log?.info({ blocks_left: total }, `catching up: ${total} blocks to pull`);
  }

  /** `count` more blocks applied. */
  applied(count: number): void {
    const p = this.p;
    const t = this.now();
    p.blocks_done += count;
    p.blocks_left = Math.max(0, p.blocks_known - p.blocks_done);
    this.samples.push([t, p.blocks_done]);
    while (this.samples.length > 2 && t - this.samples[1]![0] > RATE_WINDOW_MS) this.samples.shift();
    const [t0, d0] = this.samples[0]!;
    const rate = t > t0 ? ((p.blocks_done - d0) * 1000) / (t - t0) : 0;
    p.estimate_seconds = rate > 0 ? Math.round(p.blocks_left / rate) : null;
    if (t - this.lastLog >= SYNC_LOG_EVERY_MS && p.blocks_left > 0) {
      this.lastLog = t;
      this.log?.info(
        {
          blocks_done: p.blocks_done,
          blocks_left: p.blocks_left,
          blocks_per_second: Math.round(rate),
          estimate_seconds: p.estimate_seconds,
        },
        `catching up: ${p.blocks_done} of ${p.blocks_known} blocks (${percent(p)} %), ${p.blocks_left} left, ${fmtEstimate(p.estimate_seconds)}`,
      );
    }
  }

  /** The round's pulls ended (every need met, or no pass could progress). */
  done(): void {
    const p = this.p;
    if (p.blocks_known === 0) return;
    const secs = (this.now() - this.startedAt) / 1000;
    this.log?.info(
      { blocks_done: p.blocks_done, blocks_left: p.blocks_left, seconds: Math.round(secs * 10) / 10 },
      `caught up: ${p.blocks_done} blocks in ${secs.toFixed(1)} s${p.blocks_left > 0 ? `, ${p.blocks_left} not applicable yet` : ''}`,
    );
  }
}

function percent(p: RoundProgress): number {
  return p.blocks_known === 0 ? 100 : Math.floor((p.blocks_done * 100) / p.blocks_known);
}

/** "about 2 min left", or "time left unknown" before there is a rate to go by. */
export function fmtEstimate(seconds: number | null): string {
  if (seconds === null) return 'time left unknown';
  if (seconds < 60) return `about ${Math.max(1, seconds)} s left`;
  if (seconds < 3600) return `about ${Math.round(seconds / 60)} min left`;
  return `about ${(seconds / 3600).toFixed(1)} h left`;
}
