import { describe, expect, it } from 'vitest';
import { ChatState } from '../../renderer/src/chat/state.ts';

/** The window's chat store: messages in, states kept, conversations cached but never stale. */
const ME = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const S = 1_000_000_000n;
const id = (i: number) => i.toString(16).padStart(64, '0');

describe('chat state', () => {
  it('keeps a send answer over the stream saying "stored", and follows delivery events', () => {
    const s = new ChatState();
    s.local(ME, {
      id: id(1),
      from: ME,
      to: BOB,
      message: 'hi',
      timestamp: S,
      status: 'queued',
      stored: true,
    });
    s.put(ME, { id: id(1), from: ME, to: BOB, message: 'hi', timestamp: S });
    expect(s.message(ME, id(1))!.status).toBe('queued');
    s.delivery(ME, id(1), { state: 'delivered', attempts: 2 });
    expect(s.message(ME, id(1))).toMatchObject({ status: 'delivered', attempts: 2 });
    // A delivery frame for a message not held (or not own) changes nothing.
    s.delivery(ME, id(9), { state: 'failed', attempts: 1 });
    expect(s.has(ME, id(9))).toBe(false);
  });

  it('gives fresh conversations after every change, the same list while nothing changed', () => {
    const s = new ChatState();
    s.put(ME, { id: id(2), from: BOB, to: ME, message: 'one', timestamp: 2n * S });
    const first = s.conversations(ME);
    expect(s.conversations(ME)).toBe(first);
    expect(s.unread(ME)).toBe(1);
    s.put(ME, { id: id(3), from: BOB, to: ME, message: 'two', timestamp: 3n * S });
    expect(s.conversations(ME)).not.toBe(first);
    expect(s.unread(ME)).toBe(2);
    s.markRead(ME, BOB);
    expect(s.unread(ME)).toBe(0);
    s.put(ME, { id: id(4), from: BOB, to: ME, message: 'three', timestamp: 4n * S });
    expect(s.unread(ME)).toBe(1);
    // Another account's view is its own.
    expect(s.unread(BOB)).toBe(0);
    s.remove(ME, id(4));
    expect(s.unread(ME)).toBe(0);
    s.clear();
    expect(s.conversations(ME)).toEqual([]);
  });

  it('tells its listeners once per burst of changes', async () => {
    const s = new ChatState();
    let calls = 0;
    const off = s.subscribe(() => (calls += 1));
    for (let i = 10; i < 1010; i++)
      s.put(ME, { id: id(i), from: BOB, to: ME, message: 'x', timestamp: BigInt(i) * S });
    await new Promise((r) => setTimeout(r, 40));
    expect(calls).toBe(1);
    expect(s.conversations(ME)[0]!.messages).toHaveLength(1000);
    off();
  });
});
