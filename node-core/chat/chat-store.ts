import type { Database } from 'lmdb';
import { type ChatEnvelope, chatEnvelopeId } from '../protocol/payloads.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';

/**
 * Chat messages on disk (issue #13; the reference keeps them in memory only, reference-behavior.md
 * 9.5): each envelope is stored once by its id, and indexed under both parties' public keys by
 * timestamp, so an account's conversation reads newest first in one range scan. Retention is per
 * account: at most `maxPerAccount` messages and none older than `maxAgeNs`; a message goes when
 * neither party's index still holds it.
 *
 * Index keys are `<party key>:<timestamp, 20 digits>:<id>`: lexical order is time order, the id keeps
 * two messages of the same instant apart.
 */

export interface StoredMessage extends ChatEnvelope {
  id: string;
  signature: string;
  /** When this node stored it, Unix ns. */
  received_at: bigint;
}

export interface ChatRetention {
  /** Messages kept per account (both directions); the oldest go first (default 10,000). */
  maxPerAccount: number;
  /** Messages older than this are pruned, ns (default 90 days). */
  maxAgeNs: bigint;
}

export const DEFAULT_CHAT_RETENTION: Readonly<ChatRetention> = Object.freeze({
  maxPerAccount: 10_000,
  maxAgeNs: 90n * 24n * 3_600_000_000_000n,
});

export interface ChatPage {
  messages: StoredMessage[];
  /** Messages of the account newer than `since` in all (before paging). */
  total: number;
}

export interface ChatContact {
  /** The other party's public key. */
  key: string;
  last_timestamp: bigint;
  count: number;
}

const pad = (t: bigint): string => t.toString().padStart(20, '0');
const indexKey = (party: string, ts: bigint, id: string): string => `${party}:${pad(ts)}:${id}`;
const partyRange = (party: string) => ({ start: `${party}:`, end: `${party};` }); // ';' follows ':'

export class ChatStore {
  private readonly messages: Database<string, string>;
  private readonly index: Database<string, string>;
  private readonly transaction: <T>(fn: () => T) => Promise<T>;
  readonly retention: ChatRetention;

  constructor(
    dbs: {
      messages: Database<string, string>;
      index: Database<string, string>;
      transaction: <T>(fn: () => T) => Promise<T>;
    },
    retention: Partial<ChatRetention> = {},
  ) {
    this.messages = dbs.messages;
    this.index = dbs.index;
    this.transaction = dbs.transaction;
    this.retention = { ...DEFAULT_CHAT_RETENTION, ...retention };
  }

  has(id: string): boolean {
    return this.messages.get(id) !== undefined;
  }

  get(id: string): StoredMessage | undefined {
    const t = this.messages.get(id);
    return t === undefined ? undefined : decode(t);
  }

  /**
   * Stores a checked envelope durably (resolves once flushed: an acknowledged message survives a
   * crash); false when it was stored already (a duplicate is stored once). The sender's account over
   * its count is trimmed in the same transaction.
   */
  async put(env: ChatEnvelope & { signature: string }, receivedAt: bigint): Promise<StoredMessage | false> {
    const id = chatEnvelopeId(env);
    const msg: StoredMessage = { ...env, id, received_at: receivedAt };
    return this.transaction(() => {
      if (this.messages.get(id) !== undefined) return false;
      this.messages.putSync(id, encode(msg));
      for (const party of parties(msg)) {
        this.index.putSync(indexKey(party, msg.timestamp, id), '');
        this.trimCount(party);
      }
      return msg;
    });
  }

  /** An account's messages, both directions, newest first, newer than `since` (ns) when given. */
  list(account: string, opts: { since?: bigint; offset?: number; limit?: number } = {}): ChatPage {
    const { since, offset = 0, limit = 100 } = opts;
    const range = partyRange(account);
    if (since !== undefined) range.start = `${account}:${pad(since + 1n)}`;
    const out: StoredMessage[] = [];
    let total = 0;
    for (const key of this.index.getKeys({ start: range.end, end: range.start, reverse: true })) {
      total += 1;
      if (total <= offset || out.length >= limit) continue;
      const m = this.get(key.slice(key.lastIndexOf(':') + 1));
      if (m) out.push(m);
    }
    return { messages: out, total };
  }

  /** The parties an account exchanged messages with, most recent first. */
  contacts(account: string): ChatContact[] {
    const range = partyRange(account);
    const seen = new Map<string, ChatContact>();
    for (const key of this.index.getKeys({ start: range.end, end: range.start, reverse: true })) {
      const m = this.get(key.slice(key.lastIndexOf(':') + 1));
      if (!m) continue;
      const other = m.from === account ? m.to : m.from;
      const c = seen.get(other);
      if (c) c.count += 1;
      else seen.set(other, { key: other, last_timestamp: m.timestamp, count: 1 });
    }
    return [...seen.values()];
  }

  /** Every account (public key) with stored messages, sorted. */
  accounts(): string[] {
    const out: string[] = [];
    let last = '';
    for (const key of this.index.getKeys()) {
      const party = key.slice(0, key.indexOf(':'));
      if (party !== last) out.push(party);
      last = party;
    }
    return out;
  }

  /** Drops every message older than the retention age (by its timestamp); returns how many went. */
  async pruneOlderThan(now: bigint): Promise<number> {
    const cutoff = now - this.retention.maxAgeNs;
    return this.transaction(() => {
      let dropped = 0;
      for (const key of this.index.getKeys()) {
        const [, ts, id] = key.split(':') as [string, string, string];
        if (BigInt(ts) >= cutoff) continue;
        this.index.removeSync(key);
        if (this.dropIfUnreferenced(id)) dropped += 1;
      }
      return dropped;
    });
  }

  /** Inside a transaction: removes an account's oldest index entries beyond the count. */
  private trimCount(party: string): void {
    const range = partyRange(party);
    let n = 0;
    for (const key of this.index.getKeys({ start: range.end, end: range.start, reverse: true })) {
      n += 1;
      if (n <= this.retention.maxPerAccount) continue;
      this.index.removeSync(key);
      this.dropIfUnreferenced(key.slice(key.lastIndexOf(':') + 1));
    }
  }

  /** Inside a transaction: deletes a message neither party's index names any more. */
  private dropIfUnreferenced(id: string): boolean {
    const m = this.get(id);
    if (!m) return false;
    for (const party of parties(m)) {
      if (this.index.get(indexKey(party, m.timestamp, id)) !== undefined) return false;
    }
    this.messages.removeSync(id);
    return true;
  }
}

function parties(m: { from: string; to: string }): string[] {
  return m.from === m.to ? [m.from] : [m.from, m.to];
}

function encode(m: StoredMessage): string {
  return stringifyJson(m);
}

function decode(text: string): StoredMessage {
  const o = parseJson(text) as Record<string, unknown>;
  return {
    id: o.id as string,
    from: o.from as string,
    to: o.to as string,
    message: o.message as string,
    timestamp: BigInt(o.timestamp as bigint),
    signature: o.signature as string,
    ...(o.pow_nonce !== undefined ? { pow_nonce: BigInt(o.pow_nonce as bigint) } : {}),
    received_at: BigInt(o.received_at as bigint),
  };
}
