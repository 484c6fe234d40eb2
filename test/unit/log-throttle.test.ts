import { afterEach, describe, expect, it } from 'vitest';
import { ErrorLog } from '../../node-core/api/error-log.ts';
import { ApiError } from '../../node-core/api/errors.ts';
import { type LevelLogger, LogThrottle, type LogThrottleOptions } from '../../node-core/log-throttle.ts';

interface Line {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

/** A logger that keeps its lines; `enabled` says which levels it writes. */
function memoryLogger(enabled = (_level: string) => true): LevelLogger & { lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (obj: object, msg: string) =>
    void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return {
    lines,
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    isLevelEnabled: enabled,
  };
}

let closers: { close(): void }[] = [];
afterEach(() => {
  for (const c of closers) c.close();
  closers = [];
});

function throttle(opts: LogThrottleOptions): LogThrottle {
  const t = new LogThrottle(opts);
  closers.push(t);
  return t;
}

describe('LogThrottle', () => {
  it('writes a key N times per interval, then one summary of what it suppressed', () => {
    let now = 0;
    const log = memoryLogger();
    const t = throttle({ linesPerInterval: 3, intervalMs: 1000, now: () => now });
    for (let i = 0; i < 10; i++) t.log(log, 'debug', 'bad', { i }, 'rejected');
    expect(log.lines.map((l) => l.obj.i)).toEqual([0, 1, 2]);
    now += 1000;
    t.log(log, 'debug', 'bad', { i: 10 }, 'rejected'); // a new interval: the summary comes first
    expect(log.lines.slice(3)).toEqual([
      { level: 'debug', obj: { log_key: 'bad', suppressed: 7 }, msg: 'suppressed 7 similar lines' },
      { level: 'debug', obj: { i: 10 }, msg: 'rejected' },
    ]);
  });

  it('summarizes a key that went quiet when the sweep runs, and once more on close', () => {
    let now = 0;
    const log = memoryLogger();
    const t = throttle({ linesPerInterval: 1, intervalMs: 1000, now: () => now });
    for (let i = 0; i < 4; i++) t.log(log, 'info', 'a', {}, 'a');
    t.log(log, 'info', 'b', {}, 'b');
    t.flush(); // the interval is not over: nothing yet
    expect(log.lines).toHaveLength(2);
    now += 1000;
    t.flush();
    expect(log.lines[2]).toEqual({
      level: 'info',
      obj: { log_key: 'a', suppressed: 3 },
      msg: 'suppressed 3 similar lines',
    });
    expect(log.lines).toHaveLength(3); // 'b' suppressed nothing
    t.log(log, 'info', 'a', {}, 'a');
    t.log(log, 'info', 'a', {}, 'a');
    t.close();
    expect(log.lines.at(-1)?.msg).toBe('suppressed 1 similar lines');
  });

  it('keeps keys apart, and lets keys beyond maxKeys share one', () => {
    const log = memoryLogger();
    const t = throttle({ linesPerInterval: 2, maxKeys: 3, now: () => 0 });
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'a'])
      for (let i = 0; i < 2; i++) t.log(log, 'warn', key, { key }, key);
    // a, b, c twice each and a twice more (suppressed); d, e, f share the overflow key's two lines.
    expect(log.lines.map((l) => l.msg).join('')).toBe('aabbccdd');
    t.close();
    expect(log.lines.slice(8).map((l) => l.obj)).toEqual([
      { log_key: 'a', suppressed: 2 },
      { log_key: 'other', suppressed: 4 },
    ]);
  });

  it('counts nothing at a level the logger does not write', () => {
    const log = memoryLogger((level) => level !== 'debug');
    const t = throttle({ linesPerInterval: 1, now: () => 0 });
    for (let i = 0; i < 5; i++) t.log(log, 'debug', 'k', {}, 'quiet');
    t.log(log, 'info', 'k', {}, 'loud');
    t.close();
    expect(log.lines.map((l) => l.msg)).toEqual(['loud']);
  });
});

describe('ErrorLog', () => {
  it('logs rejections in one line without a stack, and internal errors with their cause', () => {
    const log = memoryLogger();
    const errors = new ErrorLog({ now: () => 0 });
    closers.push(errors);
    const request = { method: 'GET', originalUrl: `/nope/${'x'.repeat(500)}` };
    errors.answered(log, ApiError.notFound(), request);
    errors.answered(log, ApiError.blockRejected('previous block not found', true), request);
    errors.answered(log, ApiError.badRequest('malformed HTTP request'));
    const cause = new Error('disk on fire');
    errors.answered(log, ApiError.internal(cause), request);
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([
      ['debug', 'request rejected'],
      ['info', 'request rejected'],
      ['debug', 'request rejected'],
      ['error', 'request failed'],
    ]);
    expect(log.lines[0]?.obj).toEqual({
      status: 404,
      code: 'not_found',
      error: 'not found',
      method: 'GET',
      url: `/nope/${'x'.repeat(194)}...`,
    });
    expect(log.lines[2]?.obj).toEqual({ status: 400, code: 'bad_request', error: 'malformed HTTP request' });
    for (const line of log.lines.slice(0, 3)) expect(JSON.stringify(line)).not.toMatch(/stack|err"/);
    expect(log.lines[3]?.obj.err).toBe(cause);
  });
});
