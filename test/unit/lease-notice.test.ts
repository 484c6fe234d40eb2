import { describe, expect, it } from 'vitest';
import { LeaseAlertTracker } from '../../renderer/src/notify/lease-notice.ts';

/** Lease events told once per state (renderer/src/notify/lease-notice.ts), not on every poll. */
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

describe('lease alert notices', () => {
  it('tells each lease once per state, again when it enters another or comes back', () => {
    const t = new LeaseAlertTracker();
    const first = t.update([{ lease: A, kind: 'soon' }]);
    expect(first).toEqual([
      {
        lease: A,
        title: 'A lease runs out soon',
        body: 'Lease aaaaaaaa runs out soon: renew it, or turn on Hold, in Leasing.',
      },
    ]);
    expect(t.update([{ lease: A, kind: 'soon' }])).toEqual([]);
    expect(
      t
        .update([
          { lease: A, kind: 'expired' },
          { lease: B, kind: 'low_funds' },
        ])
        .map((n) => n.title),
    ).toEqual(['A lease has run out', 'A held lease cannot be renewed']);
    // Renewed: the alert goes; running low again later is told again.
    expect(t.update([{ lease: B, kind: 'low_funds' }])).toEqual([]);
    expect(
      t.update([
        { lease: A, kind: 'soon' },
        { lease: B, kind: 'low_funds' },
      ]),
    ).toHaveLength(1);
  });
});
