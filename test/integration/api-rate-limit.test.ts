import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type HttpResult, type Kit, kitOf } from '../helpers/ledger-kit.ts';
import { LimiterClock } from '../helpers/limiter-clock.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Rate limits per client and class (reads 200/s burst 1000, writes 10/s burst 50, probes 20/s
 * burst 100). Each test speaks as its own client through X-Forwarded-For, which the node believes
 * from a loopback peer, so every test starts with full buckets.
 */
describe('HTTP API: rate limits', () => {
  let t: TestNode;
  let kit: Kit;
  const clock = new LimiterClock();

  beforeAll(async () => {
    t = await startTestNode({ rateLimit: { now: clock.now } });
    kit = await kitOf(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  /**
   * Runs up to `max` requests, `concurrency` at a time, until 20 have been refused; returns the
   * results and the elapsed seconds (for the refill the limiter granted meanwhile).
   */
  async function flood(max: number, one: () => Promise<HttpResult>, concurrency = 32) {
    const started = performance.now();
    const results: HttpResult[] = [];
    let sent = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < max && refused < 20) {
          sent++;
          const r = await one();
          if (r.status === 429) refused++;
          results.push(r);
        }
      }),
    );
    return { results, seconds: (performance.now() - started) / 1000 };
  }

  function expectLimited(limited: HttpResult[]) {
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) {
      expect(r.body).toEqual({ error: 'rate limit exceeded' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  }

  it('writes: a burst of 50, then 429 with Retry-After; reads and other clients are unaffected', async () => {
    const client = { 'x-forwarded-for': '203.0.113.10' };
    const { results, seconds } = await flood(
      500,
      () => http(kit.url, 'POST', '/blocks/claim', '{}', client),
      16,
    );
    const limited = results.filter((r) => r.status === 429);
    const served = results.length - limited.length;
    expect(served).toBeGreaterThanOrEqual(50);
    expect(served).toBeLessThanOrEqual(50 + Math.ceil(10 * seconds) + 1);
    expectLimited(limited);
    // Served requests were answered by the route (an invalid body here), not by the limiter.
    expect(results.filter((r) => r.status !== 429).every((r) => r.status === 400)).toBe(true);
    expect((await http(kit.url, 'GET', '/node', undefined, client)).status).toBe(200);
    expect(
      (await http(kit.url, 'POST', '/blocks/claim', '{}', { 'x-forwarded-for': '203.0.113.11' })).status,
    ).toBe(400);
  });

  it('a forwarded IPv6 client is one client per /64; a forwarded IPv4-mapped address is its IPv4 one', async () => {
    // Every request from a new address of the same /64: keyed per address, none would be refused.
    let i = 0;
    const { results, seconds } = await flood(
      500,
      () =>
        http(kit.url, 'POST', '/blocks/claim', '{}', {
          'x-forwarded-for': `2001:db8:15:9:${(i++).toString(16)}::1`,
        }),
      16,
    );
    const limited = results.filter((r) => r.status === 429);
    expect(results.length - limited.length).toBeLessThanOrEqual(50 + Math.ceil(10 * seconds) + 1);
    expectLimited(limited);
    const post = (xff: string) => http(kit.url, 'POST', '/blocks/claim', '{}', { 'x-forwarded-for': xff });
    expect((await post('2001:db8:15:a::1')).status).toBe(400); // the next /64 has its own bucket
    // The proxy form's RateLimit headers tell whose bucket a request spent from (a refill during
    // the loop cannot make the count look fresh).
    const remaining = async (xff: string) =>
      Number(
        (await http(kit.url, 'POST', '/api/v1/blocks/claim', '{}', { 'x-forwarded-for': xff })).headers.get(
          'ratelimit-remaining',
        ),
      );
    // Held: however slow the 40 requests, the bucket cannot refill meanwhile.
    clock.hold();
    try {
      for (let n = 0; n < 40; n++) await post('203.0.113.40');
      expect(await remaining('::ffff:203.0.113.40')).toBe(9);
      expect(await remaining('::ffff:203.0.113.41')).toBe(49);
    } finally {
      clock.release();
    }
  });

  it('probes: /health and /ready share one bucket, a burst of 100', async () => {
    const client = { 'x-forwarded-for': '203.0.113.20' };
    let i = 0;
    const { results, seconds } = await flood(1000, () =>
      http(kit.url, 'GET', i++ % 2 === 0 ? '/health' : '/ready', undefined, client),
    );
    const limited = results.filter((r) => r.status === 429);
    const served = results.length - limited.length;
    expect(served).toBeGreaterThanOrEqual(100);
    expect(served).toBeLessThanOrEqual(100 + Math.ceil(20 * seconds) + 1);
    expectLimited(limited);
    expect((await http(kit.url, 'GET', '/node', undefined, client)).status).toBe(200);
  });

  it('reads: a burst of 1000 at 200/s', async () => {
    const client = { 'x-forwarded-for': '203.0.113.30' };
    const { results, seconds } = await flood(
      8000,
      () => http(kit.url, 'GET', '/statechain/keyset', undefined, client),
      64,
    );
    const limited = results.filter((r) => r.status === 429);
    const served = results.length - limited.length;
    expect(served).toBeGreaterThanOrEqual(1000);
    expect(served).toBeLessThanOrEqual(1000 + Math.ceil(200 * seconds) + 1);
    expectLimited(limited);
    expect((await http(kit.url, 'GET', '/health', undefined, client)).status).toBe(200);
  });
});
