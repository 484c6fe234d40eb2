import { type JsonValue, parseJson, stringifyJson } from '../protocol/json.ts';

/**
 * The node's recent log lines, kept in memory for the Node page (`GET /node/log`, its live stream):
 * a bounded ring, so a chatty node never grows it past `capacity` lines, each cut at
 * MAX_LINE_CHARS. It is a pino destination (`write(line)`), fed the JSON lines the node's logger
 * writes (log-tee.ts). Lines can name peers' addresses and accounts: the routes serving them are
 * admin only.
 */

/** pino's numeric levels by name. */
export const LOG_LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;
export const LOG_LEVEL_NAMES = Object.keys(LOG_LEVELS) as LogLevelName[];

export const DEFAULT_LOG_CAPACITY = 2000;
/** Longest line kept: a huge error object must not make one line cost as much as the whole ring. */
export const MAX_LINE_CHARS = 4096;
/** Longest text filter accepted: the filter runs over every line in the ring. */
export const MAX_FILTER_CHARS = 200;

export interface LogLine {
  /** Position in the node's log since start, from 1; the live stream's event id. */
  seq: number;
  /** Unix milliseconds (pino's `time`). */
  time: number;
  level: number;
  level_name: LogLevelName | 'unknown';
  msg: string;
  /**
   * The other fields of the line (bindings such as `name` left out), as pino wrote them, read
   * losslessly: a nanosecond time in a field stays exact (bigint).
   */
  fields: Record<string, JsonValue>;
  /** True when the line was longer than MAX_LINE_CHARS and `fields` only says so. */
  truncated?: true;
}

export interface LogFilter {
  /** Lowest level shown (default: all). */
  level?: LogLevelName;
  /** Case-insensitive text that the message or a field must contain. */
  text?: string;
}

export interface LogQuery extends LogFilter {
  /** Only lines after this seq (oldest first); without it, the newest `limit` lines. */
  after?: number;
  limit?: number;
}

/** Fields pino adds to every line, which the line's own fields should not repeat. */
const BINDINGS = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'name']);

function levelName(n: number): LogLine['level_name'] {
  for (const name of LOG_LEVEL_NAMES) if (LOG_LEVELS[name] === n) return name;
  return 'unknown';
}

/** A pino JSON line as a LogLine; a line that is not JSON is kept as its text. */
export function parseLogLine(seq: number, raw: string): LogLine {
  const text = raw.endsWith('\n') ? raw.slice(0, -1) : raw;
  if (text.length > MAX_LINE_CHARS) {
    // The head is still worth reading: level and message come first in pino's output.
    const head = /"level":(\d+)/.exec(text.slice(0, 200));
    const msg = /"msg":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1] ?? '';
    const level = head ? Number(head[1]) : LOG_LEVELS.info;
    return {
      seq,
      time: Date.now(),
      level,
      level_name: levelName(level),
      msg: msg.slice(0, 500),
      fields: { note: `line of ${text.length} characters cut to its message` },
      truncated: true,
    };
  }
  let obj: Record<string, JsonValue>;
  try {
    const parsed: unknown = parseJson(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    obj = parsed as Record<string, JsonValue>;
  } catch {
    return { seq, time: Date.now(), level: LOG_LEVELS.info, level_name: 'info', msg: text, fields: {} };
  }
  const level = typeof obj.level === 'number' ? obj.level : LOG_LEVELS.info;
  const fields: Record<string, JsonValue> = {};
  for (const [k, v] of Object.entries(obj)) if (!BINDINGS.has(k)) fields[k] = v;
  return {
    seq,
    time: typeof obj.time === 'number' ? obj.time : Date.now(),
    level,
    level_name: levelName(level),
    msg: typeof obj.msg === 'string' ? obj.msg : '',
    fields,
  };
}

/** Whether a line passes a filter (the text is lower-cased by the caller). */
function passes(line: LogLine, minLevel: number, needle: string | undefined): boolean {
  if (line.level < minLevel) return false;
  if (needle === undefined || needle === '') return true;
  if (line.msg.toLowerCase().includes(needle)) return true;
  return stringifyJson(line.fields).toLowerCase().includes(needle);
}

/** A compiled filter: one function, so the live stream does not redo the set-up per line. */
export function logFilter(f: LogFilter): (line: LogLine) => boolean {
  const minLevel = f.level === undefined ? 0 : LOG_LEVELS[f.level];
  const needle = f.text?.toLowerCase();
  return (line) => passes(line, minLevel, needle);
}

export class LogRing {
  readonly capacity: number;
  private readonly lines: (LogLine | undefined)[];
  /** Seq of the newest line (0: none yet). */
  private last = 0;
  private readonly listeners = new Set<(line: LogLine) => void>();

  constructor(capacity = DEFAULT_LOG_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('log capacity must be a positive integer');
    this.capacity = capacity;
    this.lines = new Array<LogLine | undefined>(capacity);
  }

  /** pino's destination interface: one JSON line per call. */
  write(raw: string): boolean {
    const line = parseLogLine(this.last + 1, raw);
    this.last = line.seq;
    this.lines[line.seq % this.capacity] = line;
    for (const l of this.listeners) {
      try {
        l(line);
      } catch {
        // A listener's fault must not reach the logger (it would throw inside a log call).
      }
    }
    return true;
  }

  /** Seq of the newest line; 0 before the first. */
  get lastSeq(): number {
    return this.last;
  }

  /** Seq of the oldest line still held. */
  get firstSeq(): number {
    return this.last === 0 ? 0 : Math.max(1, this.last - this.capacity + 1);
  }

  /** Lines no longer held (pushed out by newer ones). */
  get dropped(): number {
    return Math.max(0, this.last - this.capacity);
  }

  /** Matching lines, oldest first: those after `after`, else the newest `limit`. */
  query(q: LogQuery = {}): LogLine[] {
    const limit = q.limit ?? 200;
    const ok = logFilter(q);
    const out: LogLine[] = [];
    if (q.after !== undefined) {
      for (let s = Math.max(this.firstSeq, q.after + 1); s <= this.last && out.length < limit; s++) {
        const line = this.lines[s % this.capacity]!;
        if (ok(line)) out.push(line);
      }
      return out;
    }
    for (let s = this.last; s >= this.firstSeq && s > 0 && out.length < limit; s--) {
      const line = this.lines[s % this.capacity]!;
      if (ok(line)) out.push(line);
    }
    return out.reverse();
  }

  /** Calls `fn` with every line written from now on; returns the unsubscription. */
  subscribe(fn: (line: LogLine) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}
