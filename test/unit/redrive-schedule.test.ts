import { describe, expect, it } from 'vitest';
import { RedriveSchedule } from '../../node-core/consensus/redrive-schedule.ts';

const opts = { tickMs: 250, backoffMs: 1_000, maxBackoffMs: 8_000 };

/** The times (ms from 0, on the tick grid) at which `account` comes due, stalling again each time. */
function dueTimes(s: RedriveSchedule, account: string, height: number, until: number, wakeAt = Infinity) {
  const out: number[] = [];
  s.add(account, height, 0, wakeAt);
  for (let now = 0; now <= until; now += 250) {
    if (s.takeDue(now).includes(account)) {
      out.push(now);
      s.add(account, height, now, wakeAt);
    }
  }
  return out;
}

describe('stalled-election schedule', () => {
  it('retries an election stalled at one height with a doubling backoff, capped', () => {
    const s = new RedriveSchedule(opts);
    expect(dueTimes(s, 'a', 5, 40_000)).toEqual([1_000, 3_000, 7_000, 15_000, 23_000, 31_000, 39_000]);
  });

  it('is due at an election timer (the fallback) if that comes before the backoff', () => {
    const s = new RedriveSchedule(opts);
    // The fallback at 4.1 s falls between the second and third retries; it is rounded up to the tick.
    const times = dueTimes(s, 'a', 5, 9_000, 4_100);
    expect(times).toEqual([1_000, 3_000, 4_250]);
    // A timer already past is no reason to look again at once.
    const t = new RedriveSchedule(opts);
    t.add('b', 1, 5_000, 4_000);
    expect(t.takeDue(5_750)).toEqual([]);
    expect(t.takeDue(6_000)).toEqual(['b']);
  });

  it('starts the backoff over when the election moves to another height or is forgotten', () => {
    const s = new RedriveSchedule(opts);
    s.add('a', 5, 0);
    expect(s.takeDue(1_000)).toEqual(['a']);
    s.add('a', 5, 1_000); // second try at height 5: 2 s
    expect(s.takeDue(2_750)).toEqual([]);
    expect(s.takeDue(3_000)).toEqual(['a']);
    s.add('a', 6, 3_000); // a new height: 1 s again
    expect(s.takeDue(4_000)).toEqual(['a']);
    s.add('a', 6, 4_000);
    s.forget('a');
    expect(s.size).toBe(0);
    expect(s.takeDue(100_000)).toEqual([]);
    s.add('a', 6, 100_000);
    expect(s.takeDue(101_000)).toEqual(['a']);
  });

  it('takes each account once however often it stalled meanwhile, and only those due', () => {
    const s = new RedriveSchedule(opts);
    for (let i = 0; i < 1_000; i++) s.add(`acct${i}`, 1, 0, i % 2 === 0 ? 500 : Infinity);
    // Stalling again while already due sooner keeps the earlier time.
    for (let i = 0; i < 1_000; i++) s.add(`acct${i}`, 1, 100, i % 2 === 0 ? 500 : Infinity);
    const first = s.takeDue(500);
    expect(first).toHaveLength(500);
    expect(new Set(first).size).toBe(500);
    expect(first.every((a) => Number(a.slice(4)) % 2 === 0)).toBe(true);
    expect(s.takeDue(750)).toEqual([]);
    const second = s.takeDue(1_000);
    expect(second).toHaveLength(500);
    expect(second.every((a) => Number(a.slice(4)) % 2 === 1)).toBe(true);
    expect(s.takeDue(60_000)).toEqual([]);
  });

  it('an account rescheduled earlier is not taken twice (its later slot is stale)', () => {
    const s = new RedriveSchedule(opts);
    s.add('a', 1, 0); // due at 1 s
    expect(s.takeDue(1_000)).toEqual(['a']);
    s.add('a', 1, 1_000); // due at 3 s
    s.add('a', 2, 1_100, 1_600); // moved on, due at its timer: 1.75 s
    expect(s.takeDue(1_750)).toEqual(['a']);
    expect(s.takeDue(3_000)).toEqual([]);
  });
});
