import type { ChatDelivery, ChatMessage } from '../../../node-core/client/chat.ts';

/**
 * The pure rules of the chat view: what state an outgoing message is in (from a send answer, the
 * node's delivery record or a delivery event, never going backwards), how messages group into
 * conversations by the other party, and what counts as unread. No storage, no React.
 */

/** Where an outgoing message stands, as the user sees it; `received` for an incoming one. */
export type MessageStatus = 'sending' | 'sent' | 'queued' | 'delivered' | 'failed' | 'received';

export interface UiMessage {
  id: string;
  from: string;
  to: string;
  message: string;
  timestamp: bigint;
  status: MessageStatus;
  /** While sending: the proof of work runs, or the node is being asked. */
  phase?: 'work' | 'post';
  error?: string;
  /** Delivery attempts the node made (a message it forwards to the recipient's node). */
  attempts?: number;
  /** The node holds it (a failed delivery is retried there); false: the send itself failed. */
  stored: boolean;
}

export interface Conversation {
  /** The other party's public key. */
  peer: string;
  /** Oldest first. */
  messages: UiMessage[];
  last: bigint;
  unread: number;
}

/** The state a send answer puts a message in. */
export function sendStatus(delivery: string): MessageStatus {
  if (delivery === 'delivered') return 'delivered';
  if (delivery === 'queued') return 'queued';
  if (delivery === 'failed') return 'failed';
  return 'sent';
}

/** How far along each state is: an answer that arrives after a newer event never moves a message back. */
const RANK: Readonly<Record<MessageStatus, number>> = {
  sending: 0,
  sent: 1,
  queued: 1,
  received: 1,
  failed: 2,
  delivered: 3,
};

/** Whether a send answer's state may replace the state a message shows now. */
export function answerApplies(now: MessageStatus | undefined, answer: MessageStatus): boolean {
  return now === undefined || RANK[answer] >= RANK[now];
}

export function deliveryStatus(d: Pick<ChatDelivery, 'state'>): MessageStatus {
  return d.state === 'delivered' ? 'delivered' : d.state === 'failed' ? 'failed' : 'queued';
}

/**
 * A message read from the node (event stream or page) merged with what the window already holds.
 * Without a delivery record the node says only "stored", which never overrides a state a send
 * answer or a delivery event gave; delivered stays delivered unless the node says failed.
 */
export function mergeFromNode(held: UiMessage | undefined, m: ChatMessage, accountKey: string): UiMessage {
  const mine = m.from === accountKey;
  let status: MessageStatus = !mine ? 'received' : m.delivery ? deliveryStatus(m.delivery) : 'sent';
  if (held && mine) {
    if (!m.delivery && held.status !== 'sending') status = held.status;
    else if (held.status === 'delivered' && status !== 'failed') status = 'delivered';
  }
  const error =
    m.delivery && m.delivery.state !== 'delivered'
      ? m.delivery.error
      : !m.delivery && held && status === held.status
        ? held.error
        : undefined;
  const attempts = m.delivery?.attempts ?? held?.attempts;
  return {
    id: m.id,
    from: m.from,
    to: m.to,
    message: m.message,
    timestamp: m.timestamp,
    status,
    ...(error !== undefined ? { error } : {}),
    ...(attempts !== undefined ? { attempts } : {}),
    stored: true,
  };
}

/** A delivery change (event frame or read) applied to a held outgoing message. */
export function applyDelivery(
  m: UiMessage,
  d: Pick<ChatDelivery, 'state' | 'attempts' | 'error'>,
): UiMessage {
  const next: UiMessage = { ...m, status: deliveryStatus(d), attempts: d.attempts, stored: true };
  delete next.error;
  delete next.phase;
  if (d.state !== 'delivered' && d.error !== undefined) next.error = d.error;
  return next;
}

const byTime = (x: UiMessage, y: UiMessage): number =>
  x.timestamp < y.timestamp ? -1 : x.timestamp > y.timestamp ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0;

/** The key last-read times are kept under. */
export const readKey = (accountKey: string, peer: string): string => `${accountKey}:${peer}`;

/**
 * An account's messages by the other party, the most recent conversation first, each oldest
 * message first. `read` holds the last-read time (ns, digits) per readKey; incoming messages after
 * it are unread. `extraPeers` are conversations to list even without messages (one being started).
 */
export function groupConversations(
  messages: Iterable<UiMessage>,
  accountKey: string,
  read: Readonly<Record<string, string>>,
  extraPeers: readonly string[] = [],
): Conversation[] {
  const byPeer = new Map<string, UiMessage[]>();
  for (const p of extraPeers) byPeer.set(p, []);
  for (const m of messages) {
    const peer = m.from === accountKey ? m.to : m.from;
    let list = byPeer.get(peer);
    if (!list) byPeer.set(peer, (list = []));
    list.push(m);
  }
  const out: Conversation[] = [];
  for (const [peer, list] of byPeer) {
    list.sort(byTime);
    const seen = lastReadOf(read, accountKey, peer);
    let unread = 0;
    for (const m of list) if (m.status === 'received' && m.timestamp > seen) unread += 1;
    out.push({ peer, messages: list, last: list.at(-1)?.timestamp ?? 0n, unread });
  }
  // Newest first; a conversation being started (no messages yet) on top.
  return out.sort((x, y) =>
    x.messages.length === 0 && y.messages.length > 0
      ? -1
      : y.messages.length === 0 && x.messages.length > 0
        ? 1
        : x.last > y.last
          ? -1
          : x.last < y.last
            ? 1
            : 0,
  );
}

function lastReadOf(read: Readonly<Record<string, string>>, accountKey: string, peer: string): bigint {
  const v = read[readKey(accountKey, peer)];
  return v !== undefined && /^\d{1,30}$/.test(v) ? BigInt(v) : 0n;
}

/**
 * The last-read time once a conversation is seen, or undefined when nothing changes (no incoming
 * message newer than what was already read).
 */
export function readUpTo(c: Conversation, read: Readonly<Record<string, string>>, accountKey: string) {
  let newest: bigint | undefined;
  for (const m of c.messages)
    if (m.status === 'received' && (newest === undefined || m.timestamp > newest)) newest = m.timestamp;
  if (newest === undefined || newest <= lastReadOf(read, accountKey, c.peer)) return undefined;
  return newest;
}

/** A message's time for its bubble: the time of day today, with the date before that. */
export function messageTime(ns: bigint, now: Date = new Date(), locale?: string): string {
  const d = new Date(Number(ns / 1_000_000n));
  const time = d.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit' });
  const sameDay =
    d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  if (sameDay) return time;
  const date = d.toLocaleDateString(locale, {
    day: 'numeric',
    month: 'short',
    ...(d.getFullYear() !== now.getFullYear() ? { year: 'numeric' } : {}),
  });
  return `${date}, ${time}`;
}
