import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../node-core/bounded-map.ts';

/** node-core/bounded-map.ts: at most `limit` entries, the oldest half forgotten at a time. */
describe('BoundedMap', () => {
  it('holds at most its limit and forgets the oldest half first', () => {
    const m = new BoundedMap<string, number>(10);
    for (let i = 0; i < 1000; i++) {
      m.set(`k${i}`, i);
      expect(m.size).toBeLessThanOrEqual(10);
    }
    // The last five are always held, with their values; what came long before is gone.
    for (let i = 995; i < 1000; i++) expect(m.get(`k${i}`)).toBe(i);
    expect(m.has('k0')).toBe(false);
    expect(m.get('k989')).toBeUndefined();
  });

  it('set again moves a key to the current half; delete and clear reach both halves', () => {
    const m = new BoundedMap<string, string>(4);
    m.set('a', '1').set('b', '2'); // the current half is full: a and b become the older one
    m.set('c', '3');
    m.set('a', 'again'); // back to the current half: c and a become the older one, b goes
    m.set('d', '4');
    expect([m.get('a'), m.get('b'), m.get('c'), m.get('d')]).toEqual(['again', undefined, '3', '4']);
    expect(m.size).toBe(3);
    // A key set again is held once: deleting it leaves no older copy behind.
    expect(m.delete('a')).toBe(true);
    expect(m.has('a')).toBe(false);
    expect(m.delete('a')).toBe(false);
    expect(m.delete('c')).toBe(true);
    m.clear();
    expect(m.size).toBe(0);
    expect(m.get('d')).toBeUndefined();
  });

  it('refuses a limit under 2', () => {
    expect(() => new BoundedMap(1)).toThrow(RangeError);
    expect(() => new BoundedMap(Number.NaN)).toThrow(RangeError);
  });
});
