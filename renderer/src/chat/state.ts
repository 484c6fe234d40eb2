import { useSyncExternalStore } from 'react';
import type { ChatDelivery, ChatMessage } from '../../../node-core/client/chat.ts';
import { keystore } from '../keystore/index.ts';
import { windowDoc } from '../window-store/index.ts';
import {
  applyDelivery,
  type Conversation,
  groupConversations,
  mergeFromNode,
  readKey,
  readUpTo,
  type UiMessage,
} from './conversations.ts';

export type { Conversation, MessageStatus, UiMessage } from './conversations.ts';

/**
 * What the window knows of each account's chat: every message seen (from the event stream's replay
 * and live events, and the ones being sent), with each outgoing message's state. One store for the
 * page, the sidebar's and tray's unread counts, and the notifications. The rules live in
 * conversations.ts; this holds the messages and tells React when they change.
 */

/** Last-read timestamps (ns, as digits) per `<account key>:<peer key>`, kept across restarts. */
const lastRead = windowDoc<Record<string, string>>('chat_read', {}, (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, string>) : undefined,
);

export class ChatState {
  private readonly accounts = new Map<string, Map<string, UiMessage>>();
  private readonly listeners = new Set<() => void>();
  private version = 0;
  private pending: ReturnType<typeof setTimeout> | undefined;
  /** Changes so far (the cache's stamp; `version` moves only when listeners are told). */
  private mutations = 0;
  /** Grouping 1,500 messages on every render of the sidebar would not do: kept until a change. */
  private readonly cache = new Map<
    string,
    { mutations: number; read: Record<string, string>; extra: string; list: Conversation[] }
  >();

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
    this.mutations += 1;
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.version += 1;
      for (const l of this.listeners) l();
    }, 16);
  }

  private account(key: string): Map<string, UiMessage> {
    let a = this.accounts.get(key);
    if (!a) this.accounts.set(key, (a = new Map()));
    return a;
  }

  has(accountKey: string, id: string): boolean {
    return this.accounts.get(accountKey)?.has(id) ?? false;
  }

  message(accountKey: string, id: string): UiMessage | undefined {
    return this.accounts.get(accountKey)?.get(id);
  }

  /** A message from the node (stream or read): added, or its state brought up to date. */
  put(accountKey: string, m: ChatMessage): void {
    const a = this.account(accountKey);
    a.set(m.id, mergeFromNode(a.get(m.id), m, accountKey));
    this.changed();
  }

  /** A message being sent (before the node has it), or the outcome of a send. */
  local(accountKey: string, m: UiMessage): void {
    this.account(accountKey).set(m.id, m);
    this.changed();
  }

  /** Forgets one message (a failed send replaced by a new one). */
  remove(accountKey: string, id: string): void {
    if (this.accounts.get(accountKey)?.delete(id)) this.changed();
  }

  /** A delivery change of one of the account's outgoing messages (ignored for one not held). */
  delivery(accountKey: string, id: string, d: Pick<ChatDelivery, 'state' | 'attempts' | 'error'>): void {
    const a = this.accounts.get(accountKey);
    const m = a?.get(id);
    if (!a || !m || m.from !== accountKey) return;
    a.set(id, applyDelivery(m, d));
    this.changed();
  }

  /** The account's conversations, the most recent first. */
  conversations(accountKey: string, extraPeers: readonly string[] = []): Conversation[] {
    const read = lastRead.get();
    const extra = extraPeers.join(',');
    const hit = this.cache.get(accountKey);
    if (hit && hit.mutations === this.mutations && hit.read === read && hit.extra === extra) return hit.list;
    const messages = this.accounts.get(accountKey)?.values() ?? [];
    const list = groupConversations(messages, accountKey, read, extraPeers);
    this.cache.set(accountKey, { mutations: this.mutations, read, extra, list });
    return list;
  }

  unread(accountKey: string): number {
    return this.conversations(accountKey).reduce((n, c) => n + c.unread, 0);
  }

  /** Everything up to the conversation's newest incoming message is read. */
  markRead(accountKey: string, peer: string): void {
    const c = this.conversations(accountKey).find((x) => x.peer === peer);
    if (!c) return;
    const upTo = readUpTo(c, lastRead.get(), accountKey);
    if (upTo === undefined) return;
    lastRead.set((r) => ({ ...r, [readKey(accountKey, peer)]: upTo.toString() }));
  }

  /** Forgets every account's messages (the keystore locked, or the accounts changed). */
  clear(): void {
    this.accounts.clear();
    this.cache.clear();
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
