import { afterEach, describe, expect, it } from 'vitest';
import { clientIp, DEFAULT_RATES, isLoopback, RateLimiter } from '../../node-core/api/rate-limit.ts';

let limiters: RateLimiter[] = [];
function limiter(opts: ConstructorParameters<typeof RateLimiter>[0]): RateLimiter {
  const l = new RateLimiter(opts);
  limiters.push(l);
  return l;
}

afterEach(() => {
  for (const l of limiters) l.close();
  limiters = [];
});

describe('token buckets', () => {
  it('has the contract default rates', () => {
    expect(DEFAULT_RATES).toEqual({
      read: { perSecond: 200, burst: 1000 },
      write: { perSecond: 10, burst: 50 },
      probe: { perSecond: 20, burst: 100 },
    });
  });

  it('allows a burst, then refuses with a whole-second Retry-After, then refills with time', () => {
    let now = 1_000_000;
    const l = limiter({ now: () => now });
    for (let i = 0; i < 50; i++) expect(l.take('1.2.3.4', 'write').ok).toBe(true);
    expect(l.take('1.2.3.4', 'write')).toEqual({ ok: false, retryAfterSeconds: 1 });
    now += 100; // 10/s: one token per 100 ms
    expect(l.take('1.2.3.4', 'write').ok).toBe(true);
    expect(l.take('1.2.3.4', 'write').ok).toBe(false);
    now += 10_000; // refills up to the burst, not beyond
    for (let i = 0; i < 50; i++) expect(l.take('1.2.3.4', 'write').ok).toBe(true);
    expect(l.take('1.2.3.4', 'write').ok).toBe(false);
  });

  it('reports how long a slow bucket needs', () => {
    const l = limiter({ now: () => 0, rates: { write: { perSecond: 0.25, burst: 1 } } });
    expect(l.take('a', 'write').ok).toBe(true);
    expect(l.take('a', 'write')).toEqual({ ok: false, retryAfterSeconds: 4 });
  });

  it('keeps classes and clients apart', () => {
    const l = limiter({ now: () => 0, rates: { read: { perSecond: 1, burst: 1 } } });
    expect(l.take('a', 'read').ok).toBe(true);
    expect(l.take('a', 'read').ok).toBe(false);
    expect(l.take('a', 'write').ok).toBe(true);
    expect(l.take('a', 'probe').ok).toBe(true);
    expect(l.take('b', 'read').ok).toBe(true);
  });

  it('refuses new clients when full, and a sweep of idle full buckets makes room', () => {
    let now = 0;
    const l = limiter({ now: () => now, maxClients: 2, sweepIntervalMs: 60_000 });
    expect(l.take('a', 'read').ok).toBe(true);
    expect(l.take('b', 'read').ok).toBe(true);
    const refused = l.take('c', 'read');
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(l.take('a', 'read').ok).toBe(true); // known clients still served
    now += 1; // 'a' and 'b' are not yet full again
    expect(l.sweep()).toBe(0);
    now += 10_000;
    expect(l.sweep()).toBe(2);
    expect(l.size).toBe(0);
    expect(l.take('c', 'read').ok).toBe(true);
  });

  it('ignores a clock stepping backwards', () => {
    let now = 10_000;
    const l = limiter({ now: () => now, rates: { read: { perSecond: 1, burst: 1 } } });
    expect(l.take('a', 'read').ok).toBe(true);
    now = 0;
    expect(l.take('a', 'read').ok).toBe(false);
  });

  it('refuses nonsensical rates', () => {
    expect(() => new RateLimiter({ rates: { read: { perSecond: 0, burst: 1 } } })).toThrow(RangeError);
  });
});

describe('client IP', () => {
  it('uses the socket peer when it is not loopback, whatever the headers say', () => {
    const headers = { 'x-forwarded-for': '9.9.9.9', 'x-real-ip': '8.8.8.8' };
    expect(clientIp('203.0.113.7', headers)).toBe('203.0.113.7');
    expect(clientIp('::ffff:203.0.113.7', headers)).toBe('203.0.113.7');
  });

  it('from loopback, uses the rightmost X-Forwarded-For entry, then X-Real-IP', () => {
    expect(clientIp('127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' })).toBe('2.2.2.2');
    expect(clientIp('::1', { 'x-forwarded-for': '1.1.1.1,2001:DB8::1' })).toBe('2001:db8::1');
    expect(clientIp('::ffff:127.0.0.1', { 'x-real-ip': '3.3.3.3' })).toBe('3.3.3.3');
    expect(clientIp('127.0.0.1', { 'x-forwarded-for': 'garbage', 'x-real-ip': '3.3.3.3' })).toBe('3.3.3.3');
    expect(clientIp('127.0.0.1', { 'x-forwarded-for': 'garbage' })).toBe('127.0.0.1');
    expect(clientIp('127.0.0.1', {})).toBe('127.0.0.1');
    expect(clientIp(undefined, {})).toBe('unknown');
  });

  it('knows loopback addresses', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['10.0.0.1', '::2', '128.0.0.1', 'localhost', '']) expect(isLoopback(a)).toBe(false);
  });
});
