import { useSyncExternalStore } from 'react';
import type { ChatDelivery, ChatMessage } from '../../../node-core/client/chat.ts';
import { keystore } from '../keystore/index.ts';
import { localStore } from '../store.ts';

/**
 * What the window knows of each account's chat: every message seen (from the event stream's replay
 * and live events, and the ones being sent), by conversation, with each outgoing message's state.
 * One store for the page, the sidebar's and tray's unread counts, and the notifications.
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
  error?: string;
  /** The node holds it (a failed delivery is retried there); false: the send itself failed. */
  stored: boolean;
}

export interface Conversation {
  /** The other party's public key. */
  peer: string;
  messages: UiMessage[];
  last: bigint;
  unread: number;
}

interface AccountChat {
  /** The account's public key. */
  key: string;
  messages: Map<string, UiMessage>;
}

/** Last-read timestamps (ns, as digits) per `<account key>:<peer key>`, kept across restarts. */
const lastRead = localStore<Record<string, string>>('ledger-desktop.chat-read.v1', {}, (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, string>) : undefined,
);

function statusOf(m: ChatMessage, accountKey: string): MessageStatus {
  if (m.from !== accountKey) return 'received';
  if (!m.delivery) return 'sent';
  return deliveryStatus(m.delivery);
}

function deliveryStatus(d: ChatDelivery): MessageStatus {
  return d.state === 'delivered' ? 'delivered' : d.state === 'failed' ? 'failed' : 'queued';
}

export class ChatState {
  private readonly accounts = new Map<string, AccountChat>();
  private readonly listeners = new Set<() => void>();
  private version = 0;
  private pending: ReturnType<typeof setTimeout> | undefined;

  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    const off = lastRead.subscribe(() => this.changed());
    return () => {
      this.listeners.delete(l);
      off();
    };
  };

  getVersion = (): number => this.version;

  /** Listeners run once per burst of changes (a replay of thousands of messages is one render). */
  private changed(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.version += 1;
      for (const l of this.listeners) l();
    }, 16);
  }

  private account(key: string): AccountChat {
    let a = this.accounts.get(key);
    if (!a) {
      a = { key, messages: new Map() };
      this.accounts.set(key, a);
    }
    return a;
  }

  has(accountKey: string, id: string): boolean {
    return this.accounts.get(accountKey)?.messages.has(id) ?? false;
  }

  message(accountKey: string, id: string): UiMessage | undefined {
    return this.accounts.get(accountKey)?.messages.get(id);
  }

  /** A message from the node (stream or read): added, or its state brought up to date. */
  put(accountKey: string, m: ChatMessage): void {
    const a = this.account(accountKey);
    const held = a.messages.get(m.id);
    const status = statusOf(m, accountKey);
    // A live `sent` (no delivery record) never downgrades what a send answer or delivery event said.
    if (held && m.delivery === undefined && held.status !== 'sending') return;
    a.messages.set(m.id, {
      id: m.id,
      from: m.from,
      to: m.to,
      message: m.message,
      timestamp: m.timestamp,
      status: held?.status === 'delivered' && status !== 'failed' ? 'delivered' : status,
      ...(m.delivery?.error !== undefined && m.delivery.state !== 'delivered'
        ? { error: m.delivery.error }
        : {}),
      stored: true,
    });
    this.changed();
  }

  /** A message being sent (before the node has it), or the outcome of a send. */
  local(accountKey: string, m: UiMessage): void {
    this.account(accountKey).messages.set(m.id, m);
    this.changed();
  }

  delivery(accountKey: string, id: string, d: ChatDelivery): void {
    const m = this.accounts.get(accountKey)?.messages.get(id);
    if (!m) return;
    m.status = deliveryStatus(d);
    if (d.state === 'delivered') delete m.error;
    else if (d.error !== undefined) m.error = d.error;
    this.account(accountKey).messages.set(id, { ...m });
    this.changed();
  }

  /** The account's conversations, the most recent first. */
  conversations(accountKey: string, extraPeers: readonly string[] = []): Conversation[] {
    const a = this.accounts.get(accountKey);
    const byPeer = new Map<string, UiMessage[]>();
    for (const p of extraPeers) byPeer.set(p, []);
    for (const m of a?.messages.values() ?? []) {
      const peer = m.from === accountKey ? m.to : m.from;
      let list = byPeer.get(peer);
      if (!list) byPeer.set(peer, (list = []));
      list.push(m);
    }
    const read = lastRead.get();
    const out: Conversation[] = [];
    for (const [peer, messages] of byPeer) {
      messages.sort((x, y) => (x.timestamp < y.timestamp ? -1 : x.timestamp > y.timestamp ? 1 : 0));
      const seen = BigInt(read[`${accountKey}:${peer}`] ?? '0');
      const unread = messages.filter((m) => m.status === 'received' && m.timestamp > seen).length;
      out.push({ peer, messages, last: messages.at(-1)?.timestamp ?? 0n, unread });
    }
    return out.sort((x, y) => (x.last > y.last ? -1 : x.last < y.last ? 1 : 0));
  }

  unread(accountKey: string): number {
    return this.conversations(accountKey).reduce((n, c) => n + c.unread, 0);
  }

  /** Everything up to the conversation's newest message is read. */
  markRead(accountKey: string, peer: string): void {
    const c = this.conversations(accountKey).find((x) => x.peer === peer);
    const last = c?.messages.filter((m) => m.status === 'received').at(-1)?.timestamp;
    const k = `${accountKey}:${peer}`;
    if (last === undefined || BigInt(lastRead.get()[k] ?? '0') >= last) return;
    lastRead.set((r) => ({ ...r, [k]: last.toString() }));
  }

  /** Forgets an account's messages (the keystore locked). */
  clear(): void {
    this.accounts.clear();
    this.changed();
  }
}

let instance: ChatState | undefined;
export function chatState(): ChatState {
  instance ??= new ChatState();
  return instance;
}

/** Re-renders on every change of the chat state; returns the state. */
export function useChatState(): ChatState {
  const s = chatState();
  useSyncExternalStore(s.subscribe, s.getVersion);
  return s;
}

/** An account's unread count (0 while its key cannot be read: locked meanwhile). */
export function safeUnread(state: ChatState, address: string): number {
  try {
    return state.unread(keystore().publicKeyOf(address));
  } catch {
    return 0;
  }
}
