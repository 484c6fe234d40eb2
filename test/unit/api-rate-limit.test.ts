import { afterEach, describe, expect, it } from 'vitest';
import {
  clientIp,
  clientKey,
  DEFAULT_RATES,
  isLoopback,
  RateLimiter,
} from '../../node-core/api/rate-limit.ts';

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
    expect(l.take('1.2.3.4', 'write')).toMatchObject({ ok: false, retryAfterSeconds: 1 });
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
    expect(l.take('a', 'write')).toMatchObject({ ok: false, retryAfterSeconds: 4 });
  });

  it('keeps classes and clients apart', () => {
    const l = limiter({ now: () => 0, rates: { read: { perSecond: 1, burst: 1 } } });
    expect(l.take('a', 'read').ok).toBe(true);
    expect(l.take('a', 'read').ok).toBe(false);
    expect(l.take('a', 'write').ok).toBe(true);
    expect(l.take('a', 'probe').ok).toBe(true);
    expect(l.take('b', 'read').ok).toBe(true);
  });

  it('when full, drops the least recently used client once it is idle, instead of refusing newcomers', () => {
    let now = 0;
    const l = limiter({ now: () => now, maxClients: 2, rates: { read: { perSecond: 1, burst: 2 } } });
    expect(l.take('10.0.0.1', 'read').ok).toBe(true);
    expect(l.take('10.0.0.2', 'read').ok).toBe(true);
    // Both still refilling: evicting one would hand it a fresh burst, so the newcomer waits until
    // the oldest is idle.
    expect(l.take('10.0.0.3', 'read')).toMatchObject({ ok: false, retryAfterSeconds: 1 });
    now += 1000; // both full again, no sweep has run
    expect(l.take('10.0.0.1', 'read').ok).toBe(true); // used again: .2 is now the oldest
    expect(l.take('10.0.0.3', 'read').ok).toBe(true); // .2 made room
    expect(l.take('10.0.0.4', 'read').ok).toBe(false); // .1 and .3 are busy
    expect(l.size).toBe(2);
    // The busy client kept its standing: one token left, then refused.
    expect(l.take('10.0.0.1', 'read').ok).toBe(true);
    expect(l.take('10.0.0.1', 'read').ok).toBe(false);
  });

  it('at its bound, makes room for newcomers with constant work, oldest-used first, after sweeps too', () => {
    let now = 0;
    const l = limiter({ now: () => now, maxClients: 1000, rates: { read: { perSecond: 1000, burst: 1 } } });
    const order = (l as unknown as { orders: { read: { visited: number } } }).orders.read;
    for (let i = 0; i < 1000; i++) expect(l.take(`10.0.${i >> 8}.${i & 255}`, 'read').ok).toBe(true);
    // Churn at the bound: a known client seen again, then a newcomer taking the oldest idle one's place.
    const takes = 50_000;
    for (let i = 0; i < takes; i++) {
      now += 1; // every bucket refills within 1 ms: all idle
      const known = l.take(`10.0.${(i % 1000) >> 8}.${i % 256}`, 'read');
      const fresh = l.take(`10.9.${(i >> 8) & 255}.${i & 255}`, 'read');
      expect(known.ok && fresh.ok).toBe(true);
      if (i === 20_000) l.sweep(); // drops every idle client: the order passes over them
    }
    expect(l.size).toBe(1000);
    expect(order.visited).toBeLessThan(6 * takes);
    // The client used last is kept; the oldest goes first.
    now += 1;
    l.take('10.8.0.1', 'read'); // used now
    for (let i = 0; i < 999; i++) l.take(`10.7.${i >> 8}.${i & 255}`, 'read');
    expect(l.quota('10.8.0.1', 'read').remaining).toBe(0); // still tracked: its token is spent
  });

  it('sweeps idle buckets of every class', () => {
    let now = 0;
    const l = limiter({ now: () => now });
    l.take('a', 'read');
    l.take('a', 'write');
    l.take('b', 'probe');
    expect(l.size).toBe(3);
    now += 1; // not yet refilled
    expect(l.sweep()).toBe(0);
    now += 10_000;
    expect(l.sweep()).toBe(3);
    expect(l.size).toBe(0);
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as its IPv4 address', () => {
    const l = limiter({ now: () => 0, rates: { write: { perSecond: 1, burst: 1 } } });
    expect(l.take('2001:db8:1:2::1', 'write').ok).toBe(true);
    expect(l.take('2001:db8:1:2:ffff:ffff:ffff:ffff', 'write').ok).toBe(false); // same /64
    expect(l.take('2001:db8:1:3::1', 'write').ok).toBe(true); // the next /64
    expect(l.take('192.0.2.1', 'write').ok).toBe(true);
    expect(l.take('::ffff:192.0.2.1', 'write').ok).toBe(false);
    expect(l.take('::ffff:c000:202', 'write').ok).toBe(true); // 192.0.2.2, written in hex
    expect(l.take('192.0.2.2', 'write').ok).toBe(false);
    expect(l.take('::ffff:192.0.2.3', 'write').ok).toBe(true); // mapped addresses are not one client
    expect(l.quota('2001:db8:1:2::9', 'write').remaining).toBe(0);
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

  it('keys IPv4 addresses as they are and IPv6 addresses by their /64', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:DB8:0:1::5')).toBe('20010db800000001/64');
    expect(clientKey('2001:db8::1:0:0:5')).toBe('20010db800000000/64');
    expect(clientKey('::1')).toBe('0000000000000000/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80000000000000/64');
    expect(clientKey('unknown')).toBe('unknown');
  });

  it('knows loopback addresses', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['10.0.0.1', '::2', '128.0.0.1', 'localhost', '']) expect(isLoopback(a)).toBe(false);
  });
});
