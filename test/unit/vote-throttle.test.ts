import { describe, expect, it } from 'vitest';
import { VoteThrottle } from '../../node-core/consensus/vote-throttle.ts';

/** The per-election converge-vote budget (C-07) on its own, with an injected clock. */
describe('VoteThrottle', () => {
  it('allows `limit` votes per representative per election per window, then drops and counts', () => {
    let now = 0;
    const t = new VoteThrottle({ limit: 3, windowMs: 1000, nowMs: () => now });
    for (let i = 0; i < 3; i++) {
      expect(t.allows('rep', 'e1')).toBe(true);
      t.charge('rep', 'e1');
    }
    expect(t.allows('rep', 'e1')).toBe(false);
    expect(t.allows('rep', 'e1')).toBe(false);
    expect(t.dropped).toBe(2);
    // Other representatives and other elections have budgets of their own.
    expect(t.allows('other', 'e1')).toBe(true);
    expect(t.allows('rep', 'e2')).toBe(true);
    // A new window starts afresh.
    now = 1000;
    expect(t.allows('rep', 'e1')).toBe(true);
    t.charge('rep', 'e1');
    expect(t.size).toBe(1);
  });

  it('checking does not charge: only charged (verified) votes use the budget', () => {
    const t = new VoteThrottle({ limit: 1, windowMs: 1000, nowMs: () => 0 });
    for (let i = 0; i < 10; i++) expect(t.allows('rep', 'e')).toBe(true);
    t.charge('rep', 'e');
    expect(t.allows('rep', 'e')).toBe(false);
  });

  it('forgets a decided election, and stays bounded under a flood of elections', () => {
    let now = 0;
    const t = new VoteThrottle({ limit: 1, windowMs: 1000, maxEntries: 100, nowMs: () => now });
    t.charge('rep', 'e');
    t.forget('e');
    expect(t.allows('rep', 'e')).toBe(true);
    expect(t.size).toBe(0);
    for (let i = 0; i < 1000; i++) t.charge('rep', `flood-${i}`);
    expect(t.size).toBeLessThanOrEqual(100);
    now = 5000;
    t.charge('rep', 'late');
    expect(t.size).toBeLessThanOrEqual(100);
  });

  it('walks the table at most once per quarter of it filled, when windows expire one by one', () => {
    // A vote a millisecond into new elections, each window 95 ms: 95 live, 5 expired, at the bound.
    let now = 0;
    const t = new VoteThrottle({ limit: 1, windowMs: 95, maxEntries: 100, nowMs: () => now });
    for (let i = 0; i < 2000; i++) {
      now = i;
      t.charge('rep', `e-${i}`);
      expect(t.size).toBeLessThanOrEqual(100);
    }
    // Freeing the few expired each time walked the table every few votes: 317 walks.
    expect(t.prunes).toBeLessThanOrEqual(2000 / 25);
    // The budget still holds within a window between walks.
    t.charge('rep', 'x');
    expect(t.allows('rep', 'x')).toBe(false);
  });
});
