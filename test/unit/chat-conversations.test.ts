import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../node-core/client/chat.ts';
import {
  answerApplies,
  applyDelivery,
  groupConversations,
  mergeFromNode,
  messageTime,
  readKey,
  readUpTo,
  sendStatus,
  type UiMessage,
} from '../../renderer/src/chat/conversations.ts';

/** The chat page's rules: message states, conversations by the other party, unread counts, times. */
const ME = 'aa'.repeat(32);
const BOB = 'bb'.repeat(32);
const CAROL = 'cc'.repeat(32);
const S = 1_000_000_000n;

let n = 0;
function msg(from: string, to: string, ts: bigint, extra: Partial<UiMessage> = {}): UiMessage {
  n += 1;
  return {
    id: n.toString(16).padStart(64, '0'),
    from,
    to,
    message: `m${n}`,
    timestamp: ts,
    status: from === ME ? 'sent' : 'received',
    stored: true,
    ...extra,
  };
}

const fromNode = (m: UiMessage, extra: Partial<ChatMessage> = {}): ChatMessage => ({
  id: m.id,
  from: m.from,
  to: m.to,
  message: m.message,
  timestamp: m.timestamp,
  ...extra,
});

describe('message states', () => {
  it('maps send answers: local is sent, queued waits, delivered, failed', () => {
    expect(sendStatus('local')).toBe('sent');
    expect(sendStatus('queued')).toBe('queued');
    expect(sendStatus('delivered')).toBe('delivered');
    expect(sendStatus('failed')).toBe('failed');
    // An answer of a newer node with a state this window does not know yet: the node took it.
    expect(sendStatus('something-new')).toBe('sent');
  });

  it('never lets a late send answer move a message back', () => {
    expect(answerApplies(undefined, 'sent')).toBe(true);
    expect(answerApplies('sending', 'queued')).toBe(true);
    expect(answerApplies('sent', 'queued')).toBe(true);
    expect(answerApplies('delivered', 'queued')).toBe(false);
    expect(answerApplies('failed', 'queued')).toBe(false);
    expect(answerApplies('failed', 'delivered')).toBe(true);
  });

  it('a message from the node: incoming is received; an own one without a record is sent', () => {
    const theirs = msg(BOB, ME, 5n * S);
    expect(mergeFromNode(undefined, fromNode(theirs), ME).status).toBe('received');
    const mine = msg(ME, BOB, 6n * S, { status: 'sending', stored: false });
    const merged = mergeFromNode(mine, fromNode(mine), ME);
    expect(merged.status).toBe('sent');
    expect(merged.stored).toBe(true);
  });

  it('the node saying only "stored" keeps what a send answer or an event said', () => {
    const mine = msg(ME, BOB, 6n * S, { status: 'queued', error: 'their node is offline', attempts: 2 });
    const merged = mergeFromNode(mine, fromNode(mine), ME);
    expect(merged.status).toBe('queued');
    expect(merged.error).toBe('their node is offline');
    expect(merged.attempts).toBe(2);
  });

  it("the node's delivery record wins, but delivered only gives way to failed", () => {
    const mine = msg(ME, BOB, 6n * S, { status: 'delivered' });
    const pending = { state: 'pending' as const, attempts: 1, updated_at: 1n };
    expect(mergeFromNode(mine, fromNode(mine, { delivery: pending }), ME).status).toBe('delivered');
    const failed = { state: 'failed' as const, attempts: 9, updated_at: 2n, error: 'expired after 7 days' };
    const f = mergeFromNode(mine, fromNode(mine, { delivery: failed }), ME);
    expect(f.status).toBe('failed');
    expect(f.error).toBe('expired after 7 days');
    const queued = msg(ME, BOB, 7n * S, { status: 'sent' });
    expect(mergeFromNode(queued, fromNode(queued, { delivery: pending }), ME).status).toBe('queued');
  });

  it('a delivery event sets the state and attempts, dropping an old error once delivered', () => {
    const m = msg(ME, BOB, 6n * S, { status: 'failed', error: 'timed out', phase: 'post' });
    const again = applyDelivery(m, { state: 'pending', attempts: 3, error: 'refused' });
    expect(again).toMatchObject({ status: 'queued', attempts: 3, error: 'refused', stored: true });
    expect(again.phase).toBeUndefined();
    const done = applyDelivery(again, { state: 'delivered', attempts: 4 });
    expect(done.status).toBe('delivered');
    expect(done.error).toBeUndefined();
    expect(m.status).toBe('failed'); // the input is left as it was
  });
});

describe('conversations', () => {
  const b1 = msg(BOB, ME, 10n * S);
  const m1 = msg(ME, BOB, 11n * S);
  const c1 = msg(CAROL, ME, 12n * S);
  const b2 = msg(BOB, ME, 13n * S);

  it('groups by the other party, newest conversation first, each oldest message first', () => {
    const list = groupConversations([b2, c1, m1, b1], ME, {});
    expect(list.map((c) => c.peer)).toEqual([BOB, CAROL]);
    expect(list[0]!.messages.map((m) => m.id)).toEqual([b1.id, m1.id, b2.id]);
    expect(list[0]!.last).toBe(13n * S);
  });

  it('counts incoming messages after the last-read time as unread, never own ones', () => {
    const none = groupConversations([b1, m1, c1, b2], ME, {});
    expect(none.find((c) => c.peer === BOB)!.unread).toBe(2);
    expect(none.find((c) => c.peer === CAROL)!.unread).toBe(1);
    const read = { [readKey(ME, BOB)]: (10n * S).toString() };
    const some = groupConversations([b1, m1, c1, b2], ME, read);
    expect(some.find((c) => c.peer === BOB)!.unread).toBe(1);
    // A damaged stored value counts as never read, not as a crash.
    const damaged = groupConversations([b1], ME, { [readKey(ME, BOB)]: 'x1' });
    expect(damaged[0]!.unread).toBe(1);
  });

  it('lists a conversation being started, on top, with no messages', () => {
    const list = groupConversations([b1, c1], ME, {}, [CAROL, 'dd'.repeat(32)]);
    expect(list[0]!.peer).toBe('dd'.repeat(32));
    expect(list[0]!.messages).toEqual([]);
    expect(list.filter((c) => c.peer === CAROL)).toHaveLength(1);
  });

  it('reading a conversation moves its last-read time to its newest incoming message, once', () => {
    const [bob] = groupConversations([b1, m1, b2], ME, {});
    expect(readUpTo(bob!, {}, ME)).toBe(13n * S);
    expect(readUpTo(bob!, { [readKey(ME, BOB)]: (13n * S).toString() }, ME)).toBeUndefined();
    const [onlyMine] = groupConversations([m1], ME, {});
    expect(readUpTo(onlyMine!, {}, ME)).toBeUndefined();
  });
});

describe('message times', () => {
  const now = new Date(2026, 10, 24, 17, 30);
  const ns = (d: Date) => BigInt(d.getTime()) * 1_000_000n;

  it('shows the time of day for today, the date before that, the year for another year', () => {
    const today = messageTime(ns(new Date(2026, 10, 24, 9, 5)), now, 'en-GB');
    expect(today).toBe('09:05');
    const earlier = messageTime(ns(new Date(2026, 10, 20, 9, 5)), now, 'en-GB');
    expect(earlier).toBe('20 Nov, 09:05');
    const lastYear = messageTime(ns(new Date(2025, 0, 2, 23, 59)), now, 'en-GB');
    expect(lastYear).toBe('2 Jan 2025, 23:59');
  });
});
