import { describe, expect, it } from 'vitest';
import { HELP, parseArgs } from '../../node-core/cli/args.ts';
import { formatLogLine, prettyDestination, wantsColor, wantsPretty } from '../../node-core/cli/log-format.ts';

const plain = { color: false };
// A fixed local time, so the clock column is known whatever the machine's time zone.
const at = new Date(2026, 10, 24, 9, 5, 7, 42).getTime();

describe('formatLogLine', () => {
  it('turns a pino line into time, level, message and key=value fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: at,
      pid: 1234,
      hostname: 'box',
      name: 'ledger-node',
      url: 'http://127.0.0.1:8080',
      network_id: 'devnet-1a2b',
      msg: 'ready',
    });
    expect(formatLogLine(line, plain)).toBe(
      '09:05:07.042 INFO  ready  url=http://127.0.0.1:8080 network_id=devnet-1a2b',
    );
  });

  it('quotes text with spaces, shows objects as JSON, names every level', () => {
    const line = JSON.stringify({
      level: 40,
      time: at,
      msg: 'slow',
      reason: 'peer gone away',
      n: 3,
      o: { a: 1 },
    });
    expect(formatLogLine(line, plain)).toBe('09:05:07.042 WARN  slow  reason="peer gone away" n=3 o={"a":1}');
    expect(formatLogLine(JSON.stringify({ level: 60, time: at, msg: 'x' }), plain)).toContain(' FATAL x');
    expect(formatLogLine(JSON.stringify({ level: 20, time: at, msg: 'x' }), plain)).toContain(' DEBUG x');
  });

  it('puts an error on its own line with its code and stack, indented', () => {
    const line = JSON.stringify({
      level: 50,
      time: at,
      msg: 'stop failed',
      err: {
        type: 'NodeStartError',
        message: 'port taken',
        code: 'EADDRINUSE',
        stack: 'NodeStartError: port taken\n    at a (x.ts:1:2)',
      },
    });
    expect(formatLogLine(line, plain).split('\n')).toEqual([
      '09:05:07.042 ERROR stop failed',
      '  err: NodeStartError: port taken (EADDRINUSE)',
      '    at a (x.ts:1:2)',
    ]);
  });

  it('colours only when asked', () => {
    const line = JSON.stringify({ level: 30, time: at, msg: 'ready', k: 'v' });
    expect(formatLogLine(line, { color: true })).toContain('\x1b[32mINFO ');
    expect(formatLogLine(line, plain)).not.toContain('\x1b');
  });

  it('passes through what is not a JSON object', () => {
    expect(formatLogLine('plain words', plain)).toBe('plain words');
    expect(formatLogLine('[1,2]', plain)).toBe('[1,2]');
  });
});

describe('prettyDestination', () => {
  it('formats whole lines and keeps a partial one until its end arrives', () => {
    const out: string[] = [];
    const dest = prettyDestination({ write: (t: string) => out.push(t) }, plain);
    const a = JSON.stringify({ level: 30, time: at, msg: 'one' });
    const b = JSON.stringify({ level: 30, time: at, msg: 'two' });
    dest.write(`${a}\n${b.slice(0, 10)}`);
    expect(out).toEqual(['09:05:07.042 INFO  one\n']);
    dest.write(`${b.slice(10)}\n`);
    expect(out).toEqual(['09:05:07.042 INFO  one\n', '09:05:07.042 INFO  two\n']);
  });
});

describe('choosing the format', () => {
  it('auto is pretty on a terminal only; pretty and json are what they say', () => {
    expect(wantsPretty('auto', true)).toBe(true);
    expect(wantsPretty('auto', false)).toBe(false);
    expect(wantsPretty('pretty', false)).toBe(true);
    expect(wantsPretty('json', true)).toBe(false);
  });

  it('colours a terminal unless NO_COLOR or a dumb terminal', () => {
    expect(wantsColor(true, {})).toBe(true);
    expect(wantsColor(false, {})).toBe(false);
    expect(wantsColor(true, { NO_COLOR: '1' })).toBe(false);
    expect(wantsColor(true, { TERM: 'dumb' })).toBe(false);
  });

  it('--log-format takes auto, pretty or json, and says so otherwise', () => {
    expect(parseArgs([]).logFormat).toBe('auto');
    expect(parseArgs(['--log-format', 'json']).logFormat).toBe('json');
    expect(parseArgs(['--log-format=pretty']).logFormat).toBe('pretty');
    expect(() => parseArgs(['--log-format', 'xml'])).toThrow('--log-format takes one of auto, pretty, json');
    expect(HELP).toContain('--log-format FORMAT');
  });
});
