import { describe, expect, it } from 'vitest';
import { RecencyQueue } from '../../node-core/recency-queue.ts';

/**
 * Least-recently-touched order beside a Map (node-core/recency-queue.ts, issue #18): the keys oldest
 * touch first, a key touched again moving to the back, removed keys passed over, and constant work a
 * touch however long the table has been at its bound (a Map kept in that order walked the slots V8
 * keeps for deleted entries: 20-150 µs a vote in the duplicate filter, 13-36 µs a new API client).
 */
function table() {
  const held = new Map<string, number>();
  let n = 0;
  const order = new RecencyQueue<string, number>(
    (k) => held.get(k),
    () => held.size,
  );
  return {
    held,
    order,
    touch(k: string) {
      held.set(k, ++n);
      order.touch(k, n);
    },
    dropOldest(): string | undefined {
      const k = order.oldest();
      if (k === undefined) return undefined;
      held.delete(k);
      order.shift();
      return k;
    },
  };
}

describe('RecencyQueue', () => {
  it('gives keys in the order they were last touched, passing over removed ones', () => {
    const t = table();
    for (const k of ['a', 'b', 'c', 'd']) t.touch(k);
    t.touch('a'); // touched again: now the newest
    t.held.delete('c'); // removed by its owner (a sweep)
    expect(t.dropOldest()).toBe('b');
    expect(t.dropOldest()).toBe('d');
    expect(t.dropOldest()).toBe('a');
    expect(t.dropOldest()).toBeUndefined();
    t.order.shift(); // nothing to pass over: nothing happens
    t.touch('e');
    expect(t.order.oldest()).toBe('e');
  });

  it('does constant work a touch at its bound, and keeps the order through compaction', () => {
    const t = table();
    const bound = 5_000;
    const touches = 200_000;
    for (let i = 0; i < touches; i++) {
      // Every third touch is of a key held already (a client seen again): it moves to the back.
      t.touch(i % 3 === 2 ? `k${Math.floor(i / 2)}` : `k${i}`);
      while (t.held.size > bound) t.dropOldest();
    }
    expect(t.held.size).toBe(bound);
    expect(t.order.visited).toBeLessThan(4 * touches);
    // Dropped in the order of their last touch: each one's stamp above the one before.
    let last = 0;
    while (t.held.size > 0) {
      const k = t.order.oldest()!;
      expect(t.held.get(k)!).toBeGreaterThan(last);
      last = t.held.get(k)!;
      t.dropOldest();
    }
  });
});
