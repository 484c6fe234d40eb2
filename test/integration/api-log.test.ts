import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { http, XE } from '../helpers/ledger-kit.ts';
import { startTestNode } from '../helpers/node.ts';
import { parseRawAnswer, rawExchange, rawHttp } from '../helpers/raw-http.ts';

interface LogLine {
  level: number;
  msg: string;
  status?: number;
  code?: string;
  error?: string;
  log_key?: string;
  suppressed?: number;
  err?: unknown;
}

/**
 * Issue #15 item 7: a client sending bad requests as fast as it can must not fill the disk through
 * the node's log. Expected rejections are one line each without a stack, at debug (info for 503s),
 * and each kind is written a bounded number of times per interval, then summarized.
 */
describe('HTTP API: logging of rejected requests', () => {
  it('stays bounded and free of stack traces, however many bad requests arrive', async () => {
    const text: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void text.push(l) });
    const t = await startTestNode({ logger, rateLimit: true });
    const port = Number(new URL(t.node.url).port);
    const N = 60;
    const sent: Record<string, number> = {};
    const count = (code: string, status: number, actual: number) => {
      expect(actual, code).toBe(status);
      sent[code] = (sent[code] ?? 0) + 1;
    };
    try {
      const wallet = await t.wallet();
      // A receive of a send nobody made: "may succeed later", a retryable 503.
      const receive = await wallet.prepare({
        type: 'receive',
        asset: 'XE',
        source: randomBytes(32).toString('hex'),
        balance: XE,
      });
      // Answers before the flood (the wallet's own look-ups) share the flood's log budget.
      for (const line of text.map((l) => JSON.parse(l) as LogLine)) {
        if (line.msg === 'request rejected') sent[line.code!] = (sent[line.code!] ?? 0) + 1;
      }
      for (let i = 0; i < N; i++) {
        // Each write from a forwarded client of its own, so that none is refused by the rate limits.
        const from = (net: number) => ({ 'x-forwarded-for': `10.${net}.0.${i}` });
        count('not_found', 404, (await http(t.node.url, 'GET', `/nope/${i}`, undefined, from(1))).status);
        count('invalid_body', 400, (await http(t.node.url, 'POST', '/blocks/claim', '{', from(2))).status);
        count(
          'block_rejected',
          503,
          (await http(t.node.url, 'POST', '/blocks/receive', receive, from(3))).status,
        );
        const foreign = await rawHttp(port, { path: '/node', headers: { host: 'evil.example' } });
        count('host_not_allowed', 403, foreign.status);
        const garbage = parseRawAnswer(await rawExchange(port, `GARBAGE ${i}\r\n\r\n`));
        count('bad_request', 400, garbage?.status ?? 0);
      }
      // Writes beyond the burst of one client: 429s.
      let limited = 0;
      for (let i = 0; limited < N; i++) {
        const r = await http(t.node.url, 'POST', '/blocks/claim', '{', { 'x-forwarded-for': '198.51.100.9' });
        if (r.status === 429) limited++;
        else sent.invalid_body! += 1;
      }
      sent.rate_limited = limited;
    } finally {
      await t.stop(); // the server's close writes the summaries still pending
    }

    const lines = text.map((l) => JSON.parse(l) as LogLine);
    for (const line of lines) {
      expect(line.err, line.msg).toBeUndefined();
      expect(JSON.stringify(line), line.msg).not.toContain('stack');
    }
    const rejected = lines.filter((l) => l.msg === 'request rejected');
    const summaries = lines.filter((l) => l.msg.startsWith('suppressed '));
    // Every answer is accounted for, written or summarized, and each kind was written at most 10 times.
    const total = Object.values(sent).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(6 * N);
    expect(Object.keys(sent)).toEqual(
      expect.arrayContaining([
        'not_found',
        'invalid_body',
        'block_rejected',
        'host_not_allowed',
        'bad_request',
        'rate_limited',
      ]),
    );
    expect(rejected.length).toBeLessThanOrEqual(10 * Object.keys(sent).length);
    for (const [code, n] of Object.entries(sent)) {
      const written = rejected.filter((l) => l.code === code).length;
      const suppressed = summaries.find((s) => s.log_key === code)?.suppressed ?? 0;
      expect(written, code).toBeLessThanOrEqual(10);
      expect(written + suppressed, code).toBe(n);
    }
    for (const line of rejected)
      expect(line.level, line.error).toBeLessThanOrEqual(line.status === 503 ? 30 : 20);
    expect(lines.length).toBeLessThan(total / 4);
  });
});
