import { describe, expect, it } from 'vitest';
import { type SignedVote, VoteBook } from '../../node-core/consensus/vote-book.ts';

/** The vote bookkeeping on its own: slots, duplicates, phantoms and sweeping (reference-behavior.md 2.2). */
const at = `${'aa'.repeat(32)}:${'00'.repeat(32)}`;
const [x, y] = ['11'.repeat(32), '22'.repeat(32)];
const vote = (hash: string, timestamp: bigint, final = false, rep = 'r1'): SignedVote => ({
  rep_pub_key: `${rep}-key`,
  block_hash: hash,
  account: 'aa'.repeat(32),
  previous: '0',
  timestamp,
  final,
  signature: 'ff'.repeat(64),
});
const voters = (book: VoteBook, hash: string) => [...book.votesFor(hash)];

describe('VoteBook', () => {
  it('keeps one slot per representative and position: newer converge votes move, final ones stay', () => {
    const book = new VoteBook();
    expect(book.record(vote(x, 10n), 'r1', at)).toBe(true);
    expect(book.record(vote(y, 11n), 'r1', at)).toBe(true);
    expect(voters(book, x)).toEqual([]);
    expect(voters(book, y)).toEqual([['r1', false]]);
    expect(book.record(vote(x, 9n), 'r1', at)).toBe(false); // older, arriving late
    expect(book.record(vote(y, 12n, true), 'r1', at)).toBe(true);
    expect(book.record(vote(x, 13n), 'r1', at)).toBe(false); // after a final vote elsewhere
    expect(book.record(vote(y, 14n), 'r1', at)).toBe(false); // a converge vote after its final one
    expect(voters(book, y)).toEqual([['r1', true]]);
    // Another representative has a slot of its own.
    expect(book.record(vote(x, 15n, false, 'r2'), 'r2', at)).toBe(true);
    expect(voters(book, x)).toEqual([['r2', false]]);
    expect([...book.ballotsAt(at)].map((v) => [v.rep_pub_key, v.block_hash, v.final])).toEqual([
      ['r1-key', y, true],
      ['r2-key', x, false],
    ]);
  });

  it('remembers the newest timestamp per representative, hash and phase', () => {
    const book = new VoteBook();
    book.record(vote(x, 10n), 'r1', at);
    expect(book.lastSeen('r1-key', x, false)).toBe(10n);
    expect(book.lastSeen('r1-key', x, true)).toBeUndefined();
    book.markSeen(vote(x, 20n));
    expect(book.lastSeen('r1-key', x, false)).toBe(20n);
    expect(book.positionOf(x)).toBe(at);
  });

  it('forgets a vote once its timestamp has left the vote window, a few per vote counted', () => {
    let now = 1_000n;
    const book = new VoteBook({ now: () => now, windowNs: 100n });
    for (let i = 0; i < 10; i++) book.markSeen(vote(`${i}`.padStart(64, '0'), 950n + BigInt(i)));
    expect(book.seenCount).toBe(10);
    // Within the window (now - 100 = 900): all kept.
    book.markSeen(vote(x, 1_000n));
    expect(book.seenCount).toBe(11);
    // At 1,056 the first six (950-955) have left it; a vote counted drops at most four of them.
    now = 1_056n;
    book.markSeen(vote(y, 1_056n));
    expect(book.seenCount).toBe(8);
    expect(book.lastSeen('r1-key', '0'.padStart(64, '0'), false)).toBeUndefined();
    expect(book.lastSeen('r1-key', '4'.padStart(64, '0'), false)).toBe(954n);
    book.markSeen(vote(y, 1_056n, true));
    expect(book.seenCount).toBe(7);
    expect(book.lastSeen('r1-key', '5'.padStart(64, '0'), false)).toBeUndefined();
    // Still inside: kept, however many votes are counted.
    for (let i = 0; i < 5; i++) book.markSeen(vote(y, 1_060n + BigInt(i)));
    expect(book.lastSeen('r1-key', '6'.padStart(64, '0'), false)).toBe(956n);
    expect(book.lastSeen('r1-key', x, false)).toBe(1_000n);
  });

  it('keeps a vote counted again in the window, as its newest copy says', () => {
    let now = 1_000n;
    const book = new VoteBook({ now: () => now, windowNs: 100n });
    book.markSeen(vote(x, 950n));
    book.markSeen(vote(y, 960n));
    // x is counted again (a fresher copy): it moves behind y, with its new timestamp.
    book.markSeen(vote(x, 1_040n));
    now = 1_070n; // y (960) has left the window, x (1,040) has not
    book.markSeen(vote(y, 1_070n, true));
    expect(book.lastSeen('r1-key', y, false)).toBeUndefined();
    expect(book.lastSeen('r1-key', x, false)).toBe(1_040n);
  });

  it('drops the oldest vote past its bound, not every vote it holds', () => {
    const book = new VoteBook();
    const n = 200_000;
    for (let i = 0; i <= n; i++) book.markSeen(vote(i.toString(16).padStart(64, '0'), 10n));
    expect(book.seenCount).toBe(n);
    expect(book.lastSeen('r1-key', '0'.padStart(64, '0'), false)).toBeUndefined();
    expect(book.lastSeen('r1-key', '1'.padStart(64, '0'), false)).toBe(10n);
    expect(book.lastSeen('r1-key', n.toString(16).padStart(64, '0'), false)).toBe(10n);
  });

  it('drops the oldest voted hash and ballot position at their bounds, with constant work a vote', () => {
    const book = new VoteBook();
    const n = 50_000 + 2_000;
    const hashOf = (i: number) => i.toString(16).padStart(64, '0');
    const positionOf = (i: number) => `${hashOf(i + 1e9)}:${'00'.repeat(32)}`;
    for (let i = 0; i < n; i++) {
      const v = { ...vote(hashOf(i), 10n), account: hashOf(i + 1e9) };
      book.record(v, 'r1', positionOf(i));
      // Decided elections are forgotten on the way (consensus does), leaving gaps behind.
      if (i % 50 === 0 && i > 10) {
        book.forgetHash(hashOf(i - 10));
        book.forgetPosition(positionOf(i - 10));
      }
    }
    const inside = book as unknown as { hashOrder: { visited: number }; ballotOrder: { visited: number } };
    expect(inside.hashOrder.visited + inside.ballotOrder.visited).toBeLessThan(6 * n);
    // The oldest still held went first; the newest are kept.
    expect(voters(book, hashOf(1))).toEqual([]);
    expect([...book.ballotsAt(positionOf(1))]).toEqual([]);
    expect(voters(book, hashOf(n - 1))).toEqual([['r1', false]]);
    expect([...book.ballotsAt(positionOf(n - 1))]).toHaveLength(1);
    expect(book.ballotPositions).toBeLessThanOrEqual(50_000);
  });

  it('lists phantoms past their age, and forgets an abandoned one for good', async () => {
    const book = new VoteBook();
    book.record(vote(x, 10n), 'r1', at);
    book.record(vote(y, 10n, false, 'r2'), 'r2', at);
    expect(book.phantoms(60_000, 10, () => false)).toEqual([]); // too young
    await new Promise((r) => setTimeout(r, 5));
    expect(book.phantoms(1, 10, (h) => h === y)).toEqual([x]);
    book.abandon(x);
    expect(book.isAbandoned(x)).toBe(true);
    expect(voters(book, x)).toEqual([]);
    expect([...book.ballotsAt(at)].map((v) => v.block_hash)).toEqual([y]);
  });

  it('sweeps what it keeps for settled positions', () => {
    const book = new VoteBook();
    const other = `${'bb'.repeat(32)}:${'00'.repeat(32)}`;
    book.record(vote(x, 10n), 'r1', at);
    book.record({ ...vote(y, 10n), account: 'bb'.repeat(32) }, 'r1', other);
    const forgotten: string[] = [];
    expect(
      book.sweep(
        (p) => p === at,
        (p) => forgotten.push(p),
      ),
    ).toBe(2);
    expect(forgotten).toEqual([at]);
    expect(voters(book, x)).toEqual([]);
    expect(book.positionOf(x)).toBeUndefined();
    expect(voters(book, y)).toEqual([['r1', false]]);
  });

  it('tells which representatives were heard from since a time', () => {
    const book = new VoteBook();
    const before = Date.now();
    book.heardFrom('r1');
    expect(book.heardSince('r1', before)).toBe(true);
    expect(book.heardSince('r1', Date.now() + 1000)).toBe(false);
    expect(book.heardSince('r2', 0)).toBe(false);
  });
});
