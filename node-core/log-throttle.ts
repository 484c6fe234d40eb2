/**
 * Rate-limited logging of lines a client can cause (rejected requests, malformed HTTP): each kind
 * of line, named by a key, is written at most `linesPerInterval` times per interval; the rest are
 * counted, and one "suppressed K similar lines" line follows once the interval is over. However
 * fast a client sends bad requests, the log then grows by a bounded amount per interval.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** The part of a pino (or fastify) logger the throttle writes through. */
export type LevelLogger = { [L in LogLevel]: (obj: object, msg: string) => void } & {
  isLevelEnabled?: (level: string) => boolean;
};

export interface LogThrottleOptions {
  /** Lines of one key written per interval (default 10). */
  linesPerInterval?: number;
  /** Length of an interval in ms (default 60 s). */
  intervalMs?: number;
  /** Keys followed at once (default 1000); lines of further keys share one. */
  maxKeys?: number;
  /** Clock in ms (default Date.now); injectable for tests. */
  now?: () => number;
}

interface Window {
  readonly start: number;
  written: number;
  suppressed: number;
  /** Where and at what level the summary goes: as the last line of the key. */
  logger: LevelLogger;
  level: LogLevel;
}

/** The key lines of new keys share while maxKeys are followed. */
export const OVERFLOW_KEY = 'other';

export class LogThrottle {
  private readonly linesPerInterval: number;
  private readonly intervalMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;
  private readonly windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: LogThrottleOptions = {}) {
    this.linesPerInterval = opts.linesPerInterval ?? 10;
    this.intervalMs = opts.intervalMs ?? 60_000;
    this.maxKeys = opts.maxKeys ?? 1000;
    this.now = opts.now ?? Date.now;
    // Summaries of keys that went quiet are written by this sweep; unref: it keeps nothing alive.
    this.timer = setInterval(() => this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Writes `obj, msg` at `level` through `logger`, unless `key` has had its lines this interval. */
  log(logger: LevelLogger, level: LogLevel, key: string, obj: object, msg: string): void {
    if (logger.isLevelEnabled?.(level) === false) return; // written nowhere: nothing to count
    const now = this.now();
    let w = this.windows.get(key);
    if (w !== undefined && now - w.start >= this.intervalMs) {
      this.summarize(key, w);
      w = undefined;
    }
    if (w === undefined) {
      if (this.windows.size >= this.maxKeys && !this.windows.has(key)) {
        this.flush();
        if (this.windows.size >= this.maxKeys) key = OVERFLOW_KEY;
      }
      w = this.windows.get(key) ?? { start: now, written: 0, suppressed: 0, logger, level };
      this.windows.set(key, w);
    }
    w.logger = logger;
    w.level = level;
    if (w.written < this.linesPerInterval) {
      w.written += 1;
      logger[level](obj, msg);
    } else w.suppressed += 1;
  }

  /** Summarizes and forgets every key whose interval is over (or every key, with `all`). */
  flush(all = false): void {
    const now = this.now();
    for (const [key, w] of this.windows) {
      if (all || now - w.start >= this.intervalMs) this.summarize(key, w);
    }
  }

  /** Stops the sweep and writes what is still suppressed (the server calls this on close). */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.flush(true);
  }

  private summarize(key: string, w: Window): void {
    this.windows.delete(key);
    if (w.suppressed > 0) {
      w.logger[w.level](
        { log_key: key, suppressed: w.suppressed },
        `suppressed ${w.suppressed} similar lines`,
      );
    }
  }
}
