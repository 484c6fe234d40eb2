import { describe, expect, it } from 'vitest';
import { SeenFilter } from '../../node-core/consensus/seen-filter.ts';

/**
 * The vote duplicate filter's memory (consensus/seen-filter.ts, issue #18): the newest timestamp of
 * each key, the keys oldest-marked first, a key marked again moving to the back, and constant work a
 * mark however long the filter has been at its bound (a Map kept in that order cost 20-150 µs a vote
 * there, walking the slots V8 keeps for deleted entries).
 */
describe('SeenFilter', () => {
  it('keeps the newest timestamp, and the keys in the order they were last marked', () => {
    const f = new SeenFilter();
    f.mark('a', 1n);
    f.mark('b', 2n);
    f.mark('c', 3n);
    f.mark('a', 4n); // marked again: now the newest
    expect(f.size).toBe(3);
    expect(f.get('a')).toBe(4n);
    expect(f.oldest()).toEqual({ key: 'b', ts: 2n });
    f.dropOldest();
    expect(f.oldest()).toEqual({ key: 'c', ts: 3n });
    f.dropOldest();
    expect(f.oldest()).toEqual({ key: 'a', ts: 4n });
    f.dropOldest();
    expect(f.oldest()).toBeUndefined();
    expect(f.size).toBe(0);
    f.dropOldest(); // nothing to drop: nothing happens
    expect(f.get('a')).toBeUndefined();
  });

  it('does constant work a mark at its bound, whatever is marked again, and keeps the order through compaction', () => {
    const f = new SeenFilter();
    const bound = 5_000;
    const marks = 200_000;
    let expectedOldest = 0;
    for (let i = 0; i < marks; i++) {
      // Every third mark is a key marked again (a fresher copy of a vote): it moves to the back.
      const again = i % 3 === 2 && i > bound;
      f.mark(again ? `k${i - 1}` : `k${i}`, BigInt(i));
      while (f.size > bound) f.dropOldest();
      if (i === marks - 1) expectedOldest = i;
    }
    expect(f.size).toBe(bound);
    // Places looked at by `oldest` stay within a small multiple of the marks made.
    expect(f.visited).toBeLessThan(4 * marks);
    // The oldest kept is bound-many marks back, in marking order.
    const oldest = f.oldest()!;
    expect(Number(oldest.ts)).toBeGreaterThan(expectedOldest - 2 * bound);
    let last = -1n;
    while (f.size > 0) {
      const o = f.oldest()!;
      expect(o.ts).toBeGreaterThan(last);
      expect(f.get(o.key)).toBe(o.ts);
      last = o.ts;
      f.dropOldest();
    }
  });
});
