import { describe, expect, it } from 'vitest';
import { isNetError } from '../../node-core/net/errors.ts';
import { DEFAULT_OUTBOUND_RATE, RequestPacer } from '../../node-core/net/request-pacer.ts';

/** Spacing this node's own requests to a peer so that they stay within the rate the peer accepts. */
describe('RequestPacer', () => {
  it('sends a burst at once, then spaces requests at the rate, one after the other', () => {
    let now = 0;
    const p = new RequestPacer({ rate: { perSecond: 10, burst: 3 }, now: () => now });
    expect([p.reserve('a'), p.reserve('a'), p.reserve('a')]).toEqual([0, 0, 0]);
    // Requests made at once queue up: 100 ms apart at 10/s.
    expect([p.reserve('a'), p.reserve('a'), p.reserve('a')]).toEqual([100, 200, 300]);
    expect(p.reserve('b')).toBe(0); // each peer has its own pace
    now += 1_000; // the debt of 3 is paid off, and the bucket refills up to the burst only
    expect([p.reserve('a'), p.reserve('a'), p.reserve('a'), p.reserve('a')]).toEqual([0, 0, 0, 100]);
  });

  it('defaults to 80 % of the rate a peer accepts by default (50/s, burst 200)', () => {
    expect(DEFAULT_OUTBOUND_RATE).toEqual({ perSecond: 40, burst: 160 });
    const p = new RequestPacer({ now: () => 0 });
    for (let i = 0; i < 160; i++) expect(p.reserve('a')).toBe(0);
    expect(p.reserve('a')).toBe(25);
  });

  it('forgets idle peers and refuses a rate that admits nothing', () => {
    let now = 0;
    const p = new RequestPacer({ rate: { perSecond: 10, burst: 2 }, sweepIntervalMs: 1_000, now: () => now });
    p.reserve('a');
    p.reserve('b');
    expect(p.size).toBe(2);
    now += 1_000;
    p.reserve('c');
    expect(p.size).toBe(1);
    let err: unknown;
    try {
      new RequestPacer({ rate: { perSecond: 0, burst: 1 } });
    } catch (e) {
      err = e;
    }
    expect(isNetError(err, 'ERR_BAD_OPTION')).toBe(true);
  });
});
