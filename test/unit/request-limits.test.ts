import { describe, expect, it } from 'vitest';
import { isNetError } from '../../node-core/net/errors.ts';
import {
  DEFAULT_GLOBAL_RATE,
  DEFAULT_PER_PEER_RATE,
  RequestLimiter,
} from '../../node-core/net/request-limits.ts';

/** The messenger's rate limits (spec 5.7, N-09) on their own; the libp2p wiring is tested with real nodes. */
describe('RequestLimiter', () => {
  it('has the spec defaults: 50/s burst 200 per peer, 200/s burst 400 in all', () => {
    expect(DEFAULT_PER_PEER_RATE).toEqual({ perSecond: 50, burst: 200 });
    expect(DEFAULT_GLOBAL_RATE).toEqual({ perSecond: 200, burst: 400 });
    let now = 0;
    const l = new RequestLimiter({ now: () => now });
    for (let i = 0; i < 200; i++) expect(l.take('a')).toBeUndefined();
    expect(l.take('a')).toBe('peer');
    for (let i = 0; i < 200; i++) expect(l.take('b')).toBeUndefined();
    expect(l.take('c')).toBe('global'); // 400 spent in all
    now += 20; // 50/s per peer: one token per 20 ms; 200/s in all: four
    expect(l.take('a')).toBeUndefined();
    expect(l.take('a')).toBe('peer');
  });

  it('refuses a peer over its burst, refills it with time, and leaves other peers alone', () => {
    let now = 1_000;
    const l = new RequestLimiter({
      perPeer: { perSecond: 10, burst: 3 },
      global: { perSecond: 1000, burst: 1000 },
      now: () => now,
    });
    for (let i = 0; i < 3; i++) expect(l.take('flood')).toBeUndefined();
    expect(l.take('flood')).toBe('peer');
    expect(l.take('flood')).toBe('peer');
    expect(l.take('honest')).toBeUndefined();
    expect(l.refusedPeer).toBe(2);
    now += 100; // one token at 10/s
    expect(l.take('flood')).toBeUndefined();
    expect(l.take('flood')).toBe('peer');
    now += 60_000; // refills up to the burst, not beyond
    for (let i = 0; i < 3; i++) expect(l.take('flood')).toBeUndefined();
    expect(l.take('flood')).toBe('peer');
  });

  it('bounds all peers together, and a refused request spends no shared token', () => {
    let now = 0;
    const l = new RequestLimiter({
      perPeer: { perSecond: 1, burst: 2 },
      global: { perSecond: 1, burst: 4 },
      now: () => now,
    });
    expect(l.take('a')).toBeUndefined();
    expect(l.take('a')).toBeUndefined();
    // A peer over its own limit hammers on: the shared bucket must not drain for the others.
    for (let i = 0; i < 50; i++) expect(l.take('a')).toBe('peer');
    expect(l.take('b')).toBeUndefined();
    expect(l.take('b')).toBeUndefined();
    expect(l.take('c')).toBe('global');
    expect(l.take('d')).toBe('global');
    expect(l.refusedGlobal).toBe(2);
    expect(l.refused).toBe(52);
    now += 1000;
    expect(l.take('c')).toBeUndefined();
    expect(l.take('d')).toBe('global');
  });

  it('drops idle peers lazily and refuses new peers beyond the tracking cap', () => {
    let now = 0;
    const l = new RequestLimiter({
      perPeer: { perSecond: 10, burst: 5 },
      maxPeers: 2,
      sweepIntervalMs: 1_000,
      now: () => now,
    });
    expect(l.take('a')).toBeUndefined();
    expect(l.take('b')).toBeUndefined();
    expect(l.take('c')).toBe('peer'); // two tracked already
    expect(l.size).toBe(2);
    now += 1_000; // both buckets full again: the next request sweeps them away
    expect(l.take('c')).toBeUndefined();
    expect(l.size).toBe(1);
  });

  it('refuses rates that admit nothing, with a typed error', () => {
    for (const perPeer of [
      { perSecond: 0, burst: 5 },
      { perSecond: 1, burst: 0.5 },
    ]) {
      let err: unknown;
      try {
        new RequestLimiter({ perPeer });
      } catch (e) {
        err = e;
      }
      expect(isNetError(err, 'ERR_BAD_OPTION')).toBe(true);
    }
    expect(() => new RequestLimiter({ global: { perSecond: Number.NaN, burst: 1 } })).toThrow(/perSecond/);
  });
});
