import { describe, expect, it } from 'vitest';
import { isNetError } from '../../node-core/net/errors.ts';
import { PeerSlots } from '../../node-core/net/peer-slots.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('PeerSlots', () => {
  it('gives a peer its slots at once, queues the rest in order, and keeps peers apart', async () => {
    const slots = new PeerSlots(2);
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const takes = Array.from({ length: 5 }, (_, i) =>
      slots.take('a').then((release) => {
        order.push(i);
        releases[i] = release;
      }),
    );
    await tick();
    expect(order).toEqual([0, 1]);
    expect(slots.open('a')).toBe(2);
    // Another peer is not held up by the first one's queue.
    const other = await slots.take('b');
    expect(slots.open('b')).toBe(1);
    releases[1]!();
    releases[1]!(); // a second release of the same slot gives nothing more
    await tick();
    expect(order).toEqual([0, 1, 2]);
    releases[0]!();
    await tick();
    expect(order).toEqual([0, 1, 2, 3]);
    expect(slots.open('a')).toBe(2);
    releases[2]!();
    releases[3]!();
    await Promise.all(takes);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    releases[4]!();
    other();
    // Idle peers are forgotten: the map does not grow with every peer ever asked.
    expect(slots.size).toBe(0);
  });

  it('refuses a bound under one slot with a coded error', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      let err: unknown;
      try {
        new PeerSlots(bad);
      } catch (e) {
        err = e;
      }
      expect(isNetError(err, 'ERR_BAD_OPTION')).toBe(true);
    }
  });
});
