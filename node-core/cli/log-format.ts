/**
 * Readable terminal logs: the node logs JSON lines with pino (what log collectors and `jq` want);
 * on a terminal a person reads them, so each line is turned into
 *
 *   19:30:15.123 INFO  ready  url=http://127.0.0.1:8080 network_id=devnet-1a2b3c4d
 *
 * `--log-format json` keeps the JSON, `pretty` always formats, `auto` (the default) formats only
 * when stderr is a terminal. The formatting is pure (formatLogLine); prettyDestination wraps a
 * writable for pino.
 */

export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface FormatOptions {
  /** ANSI colours (a terminal that is not told NO_COLOR). */
  color: boolean;
}

/** pino's numeric levels. */
const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

const LEVEL_COLORS: Record<string, string> = {
  TRACE: '90',
  DEBUG: '90',
  INFO: '32',
  WARN: '33',
  ERROR: '31',
  FATAL: '41;97',
};

/** Fields every line has, shown in their own columns or not at all (the same on every line). */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v']);

const paint = (on: boolean, code: string, text: string): string =>
  on ? `\x1b[${code}m${text}\x1b[0m` : text;

function clock(time: unknown): string {
  const d = typeof time === 'number' || typeof time === 'string' ? new Date(time) : new Date(NaN);
  if (Number.isNaN(d.getTime())) return '--:--:--.---';
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** A value as `key=value` shows it: bare when it is one plain word, else as JSON. */
function showValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? String(v);
}

interface LoggedError {
  type?: unknown;
  message?: unknown;
  stack?: unknown;
  code?: unknown;
}

function errorLines(key: string, err: LoggedError, color: boolean): string[] {
  const head = `${typeof err.type === 'string' ? err.type : 'Error'}: ${String(err.message ?? '')}`;
  const code = typeof err.code === 'string' ? ` (${err.code})` : '';
  const stack =
    typeof err.stack === 'string'
      ? err.stack
          .split('\n')
          .slice(1)
          .map((l) => `    ${l.trim()}`)
      : [];
  return [paint(color, '31', `  ${key}: ${head}${code}`), ...stack.map((l) => paint(color, '90', l))];
}

/**
 * One pino JSON line as a readable line (plus indented stack lines for an error), without the line
 * break. Text that is not a JSON object (a stray line from a library) is passed through unchanged.
 */
export function formatLogLine(line: string, opts: FormatOptions): string {
  let rec: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return line;
    rec = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof rec.level === 'number' ? (LEVEL_NAMES[rec.level] ?? `L${rec.level}`) : 'INFO';
  const parts = [
    paint(opts.color, '90', clock(rec.time)),
    paint(opts.color, LEVEL_COLORS[level] ?? '0', level.padEnd(5)),
    typeof rec.msg === 'string' ? paint(opts.color, '1', rec.msg) : '',
  ].filter((p) => p !== '');
  const fields: string[] = [];
  const extra: string[] = [];
  for (const [k, v] of Object.entries(rec)) {
    if (HIDDEN.has(k) || v === undefined) continue;
    if ((k === 'err' || k === 'error') && typeof v === 'object' && v !== null && 'message' in v) {
      extra.push(...errorLines(k, v as LoggedError, opts.color));
      continue;
    }
    fields.push(`${paint(opts.color, '36', k)}=${showValue(v)}`);
  }
  const head = fields.length > 0 ? `${parts.join(' ')}  ${fields.join(' ')}` : parts.join(' ');
  return [head, ...extra].join('\n');
}

/** Whether logs on this stream are formatted: `auto` formats for a terminal only. */
export function wantsPretty(format: LogFormat, isTty: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && isTty);
}

/** Colours for a terminal, unless NO_COLOR is set (https://no-color.org) or TERM is dumb. */
export function wantsColor(isTty: boolean, env: Record<string, string | undefined>): boolean {
  return isTty && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
}

/**
 * A pino destination that writes formatted lines to `out`. pino hands a destination one or more
 * whole JSON lines per write; a partial line is kept until its end arrives.
 */
export function prettyDestination(
  out: { write(text: string): unknown },
  opts: FormatOptions,
): { write(chunk: string): void } {
  let rest = '';
  return {
    write(chunk: string) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      const text = lines
        .filter((l) => l !== '')
        .map((l) => `${formatLogLine(l, opts)}\n`)
        .join('');
      if (text !== '') out.write(text);
    },
  };
}
