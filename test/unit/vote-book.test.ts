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
