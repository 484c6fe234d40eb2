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
 *
 * Each stored message also gets a sequence number, assigned in the transaction that stores it: the
 * event stream's id (`GET /chat/events`), so a client that reconnects with the last id it saw gets
 * every message stored since, in order. Timestamps cannot serve: they are the sender's and neither
 * unique nor in storage order. The last number assigned is kept apart from the entries, so pruning
 * never lets a number be handed out twice.
 *
 * The sequence database also indexes each number under both parties (`p:<party key>:<seq>` -> id):
 * a stream of one account's messages (`GET /chat/events?account=`) reads that account's numbers, not
 * every message stored since its last id. Reading them all to pick one account's took 465 ms of the
 * node's thread, in one call, for a client resuming among 100,000 messages of other accounts
 * (issue #18, target 6). A store from before the index is indexed when opened.
 */

export interface StoredMessage extends ChatEnvelope {
  id: string;
  signature: string;
  /** When this node stored it, Unix ns. */
  received_at: bigint;
  /**
   * Storage order on this node, from 1 (the event stream's id). Absent when the store was opened
   * without the sequence database (tools and tests of the store alone): such a message is never
   * streamed.
   */
  seq?: bigint;
}

/** A message as the event stream reads it: always with its sequence number. */
export type SequencedMessage = StoredMessage & { seq: bigint };

/**
 * A message's way to the recipient's node, kept by the sender's node when the recipient is
 * registered elsewhere (chat/chat-outbox.ts): `pending` while in the outbox, then `delivered` once
 * that node acknowledged it, or `failed` (refused for good, or out of time) until retried.
 */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface Delivery {
  state: DeliveryState;
  /** Attempts made so far. */
  attempts: number;
  /** When the state last changed, Unix ns. */
  updated_at: bigint;
  /** When the next attempt is due, Unix ns (pending only). */
  next_at?: bigint;
  /** Why the last attempt failed. */
  error?: string;
}

/**
 * One message as a snapshot keeps it (agent checkpoints, agent/checkpoints.ts): its stored JSON
 * without the sequence number (canonical: the same message always gives the same text), and the
 * JSON of its delivery record when it has one.
 */
export interface ChatSnapshotEntry {
  message: string;
  delivery?: string;
}

/** What a restore changed. */
export interface ChatRestoreResult {
  /** Ids of the messages removed (stored now, not in the snapshot). */
  removed: string[];
  /** Messages put back (in the snapshot, not stored now), with their new sequence numbers. */
  restored: StoredMessage[];
  /** Ids of messages kept whose delivery record was put back as the snapshot had it. */
  deliveries: string[];
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
/** Key of the last sequence number assigned, in the sequence database: it sorts after every number. */
const LAST_SEQ = 'last';
/** End of the number range in the sequence database: ':' follows '9', precedes 'last'. */
const SEQ_END = ':';
/** A party's entry in the sequence database: sorts after every number and after 'last'. */
const partySeqKey = (party: string, seq: bigint): string => `p:${party}:${pad(seq)}`;
/**
 * Key of the last sequence number whose party entries are written. Equal to LAST_SEQ's number once
 * the index is complete; a store from before the index (or written meanwhile by a version without
 * it) lags, and opening it indexes the numbers in between.
 */
const PARTIES_INDEXED = 'indexed';
/**
 * A pending delivery's entry in the delivery database, beside its record (message ids are hex, so
 * `~` keys sort after every record): the outbox's start reads these, not every delivery kept.
 */
const pendingEntry = (id: string): string => `~p:${id}`;
const PENDING_START = '~p:';
const PENDING_END = '~p;'; // ';' follows ':'
/**
 * Key, in the delivery database, of the last sequence number whose message's delivery has its
 * pending entry written when due. Equal to LAST_SEQ's number once the entries are complete; a store
 * from before them has none (opening it looks at every record once), and one a version without
 * them wrote to lags (opening it looks at the messages numbered since). Not caught: a failed message
 * such a version put back in the outbox (a retry numbers nothing) and left pending when it stopped
 * stays pending here, outside the outbox. Every version released has the entries.
 */
const PENDING_INDEXED = '~indexed';

export class ChatStore {
  private readonly messages: Database<string, string>;
  private readonly index: Database<string, string>;
  private readonly seqs: Database<string, string> | undefined;
  private readonly deliveries: Database<string, string> | undefined;
  private readonly transaction: <T>(fn: () => T) => Promise<T>;
  readonly retention: ChatRetention;

  constructor(
    dbs: {
      messages: Database<string, string>;
      index: Database<string, string>;
      /** `<seq, 20 digits>` -> message id, and `last` -> the last seq assigned (optional: no streaming). */
      seqs?: Database<string, string>;
      /** message id -> its Delivery (optional: a node that never forwards, tools, tests). */
      deliveries?: Database<string, string>;
      transaction: <T>(fn: () => T) => Promise<T>;
    },
    retention: Partial<ChatRetention> = {},
  ) {
    this.messages = dbs.messages;
    this.index = dbs.index;
    this.seqs = dbs.seqs;
    this.deliveries = dbs.deliveries;
    this.transaction = dbs.transaction;
    this.retention = { ...DEFAULT_CHAT_RETENTION, ...retention };
    this.indexParties();
    this.indexPending();
  }

  /**
   * Writes the party entries of the numbers assigned past PARTIES_INDEXED (a store from before the
   * index, or one a version without it wrote to), in one transaction at open. Entries a version
   * without the index left behind (their message dropped) are skipped by `after`.
   */
  private indexParties(): void {
    const seqs = this.seqs;
    if (!seqs) return;
    const last = this.lastSeq();
    const held = seqs.get(PARTIES_INDEXED);
    const from = held === undefined ? 0n : BigInt(held);
    if (from >= last) return;
    seqs.transactionSync(() => {
      for (const { key, value: id } of seqs.getRange({ start: pad(from + 1n), end: SEQ_END })) {
        const m = this.get(id);
        if (m === undefined) continue;
        for (const party of parties(m)) seqs.putSync(partySeqKey(party, BigInt(key)), id);
      }
      seqs.putSync(PARTIES_INDEXED, last.toString());
    });
  }

  /**
   * Writes the pending entries missing at open (see PENDING_INDEXED), in one transaction: of every
   * delivery for a store from before them, of the messages numbered since the mark otherwise.
   */
  private indexPending(): void {
    const db = this.deliveries;
    if (!db) return;
    const last = this.lastSeq();
    const held = db.get(PENDING_INDEXED);
    if (held !== undefined && BigInt(held) >= last) return;
    db.transactionSync(() => {
      const mark = (id: string, text: string | undefined) => {
        if (text !== undefined && isPendingText(text)) db.putSync(pendingEntry(id), '');
      };
      if (held === undefined) {
        for (const { key, value } of db.getRange({ end: '~' })) mark(key, value);
      } else {
        for (const { value: id } of this.seqs!.getRange({ start: pad(BigInt(held) + 1n), end: SEQ_END }))
          mark(id, db.get(id));
      }
      db.putSync(PENDING_INDEXED, last.toString());
    });
  }

  /**
   * Inside a transaction: a message's delivery record (none: `text` undefined), its pending entry in
   * step. Nothing without the delivery database.
   */
  private writeDelivery(id: string, text: string | undefined): void {
    const db = this.deliveries;
    if (!db) return;
    if (text === undefined) db.removeSync(id);
    else db.putSync(id, text);
    if (text !== undefined && isPendingText(text)) db.putSync(pendingEntry(id), '');
    else db.removeSync(pendingEntry(id));
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
   * its count is trimmed in the same transaction. A message this node forwards is stored with its
   * delivery (state `pending`) in the same transaction: once acknowledged, it is in the outbox.
   */
  async put(
    env: ChatEnvelope & { signature: string },
    receivedAt: bigint,
    delivery?: Delivery,
  ): Promise<StoredMessage | false> {
    const id = chatEnvelopeId(env);
    if (delivery && !this.deliveries) throw new Error('chat store opened without the delivery database');
    return this.transaction(() => {
      if (this.messages.get(id) !== undefined) return false;
      if (delivery) this.writeDelivery(id, stringifyJson(delivery));
      const seq = this.nextSeq(id, env);
      const msg: StoredMessage = {
        ...env,
        id,
        received_at: receivedAt,
        ...(seq !== undefined ? { seq } : {}),
      };
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
    // LMDB counts the range and skips to the page itself: reading 10,000 entries one by one for the
    // total took 7-10 ms a page. Fresh options each: lmdb's getCount marks its own as count-only.
    const newestFirst = () => ({ start: range.end, end: range.start, reverse: true });
    const total = this.index.getCount(newestFirst());
    for (const key of this.index.getKeys({ ...newestFirst(), offset, limit })) {
      const m = this.get(key.slice(key.lastIndexOf(':') + 1));
      if (m) out.push(m);
    }
    return { messages: out, total };
  }

  /**
   * Messages stored after sequence number `after`, in storage order: every message, or those from or
   * to `party` (a public key; read from its own entries). At most `limit` are returned (the event
   * stream reads in pages).
   */
  after(after: bigint, opts: { party?: string; limit?: number } = {}): SequencedMessage[] {
    const { party, limit = 100 } = opts;
    const out: SequencedMessage[] = [];
    if (!this.seqs) return out;
    const range =
      party === undefined
        ? { start: pad(after + 1n), end: SEQ_END }
        : { start: partySeqKey(party, after + 1n), end: `p:${party};` };
    for (const { key, value: id } of this.seqs.getRange(range)) {
      const m = this.get(id);
      // An entry whose message went (or came back under another number) is not that message's.
      if (m?.seq === undefined || pad(m.seq) !== key.slice(key.length - 20)) continue;
      out.push(m as SequencedMessage);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** A forwarded message's delivery; undefined for one that was never forwarded. */
  delivery(id: string): Delivery | undefined {
    const t = this.deliveries?.get(id);
    return t === undefined ? undefined : decodeDelivery(t);
  }

  /** Records a delivery's new state durably; false when the message is gone (pruned). */
  async setDelivery(id: string, d: Delivery): Promise<boolean> {
    const db = this.deliveries;
    if (!db) throw new Error('chat store opened without the delivery database');
    return this.transaction(() => {
      if (this.messages.get(id) === undefined) return false;
      this.writeDelivery(id, stringifyJson(d));
      return true;
    });
  }

  /**
   * Every message still in the outbox (state `pending`), read once at start from the pending entries:
   * reading every delivery kept took 58-82 ms of the start at 100,000 (of them 100 pending). An entry
   * whose record is no longer pending (a version without the entries moved it on) is passed over.
   */
  pendingDeliveries(): { id: string; delivery: Delivery }[] {
    const out: { id: string; delivery: Delivery }[] = [];
    if (!this.deliveries) return out;
    for (const key of this.deliveries.getKeys({ start: PENDING_START, end: PENDING_END })) {
      const id = key.slice(PENDING_START.length);
      const d = this.delivery(id);
      if (d?.state === 'pending') out.push({ id, delivery: d });
    }
    return out;
  }

  /** The last sequence number assigned (0 before the first message). */
  lastSeq(): bigint {
    const last = this.seqs?.get(LAST_SEQ);
    return last === undefined ? 0n : BigInt(last);
  }

  /** The parties an account exchanged messages with, most recent first. */
  contacts(account: string): ChatContact[] {
    const range = partyRange(account);
    const seen = new Map<string, ChatContact>();
    const tsAt = account.length + 1;
    for (const key of this.index.getKeys({ start: range.end, end: range.start, reverse: true })) {
      const text = this.messages.get(key.slice(key.lastIndexOf(':') + 1));
      if (text === undefined) continue;
      // The parties alone, not the whole message (parsing 10,000 took most of a 61 ms answer).
      const m = partiesOf(text);
      const other = m.from === account ? m.to : m.from;
      const c = seen.get(other);
      if (c) c.count += 1;
      // The index key holds the message's timestamp.
      else seen.set(other, { key: other, last_timestamp: BigInt(key.slice(tsAt, tsAt + 20)), count: 1 });
    }
    return [...seen.values()];
  }

  /**
   * Every account (public key) with stored messages, sorted: one seek per account past the one
   * before, not a read of every index entry (200,000 of them at 100,000 messages took 133 ms).
   */
  accounts(): string[] {
    const out: string[] = [];
    let start = '';
    for (;;) {
      let next: string | undefined;
      for (const key of this.index.getKeys({ start, limit: 1 })) next = key;
      if (next === undefined) return out;
      const party = next.slice(0, next.indexOf(':'));
      out.push(party);
      start = partyRange(party).end;
    }
  }

  /**
   * Drops every message older than the retention age (by its timestamp); returns how many went.
   * Each account's entries are in time order: per account, only those before the cutoff are read (a
   * pass reading every entry held the node's thread 178 ms an hour at 100,000 messages).
   */
  async pruneOlderThan(now: bigint): Promise<number> {
    const cutoff = now - this.retention.maxAgeNs;
    // Timestamps are positive (chat-service.ts): nothing is older than a cutoff of 0 or less.
    if (cutoff <= 0n) return 0;
    const before = (party: string, limit?: number) =>
      this.index.getKeys({ start: `${party}:`, end: `${party}:${pad(cutoff)}`, limit });
    // Looked for first: a pass that finds nothing writes nothing (no transaction to commit).
    if (!this.accounts().some((party) => !before(party, 1)[Symbol.iterator]().next().done)) return 0;
    return this.transaction(() => {
      let dropped = 0;
      for (const party of this.accounts()) {
        const old = [...before(party)];
        for (const key of old) {
          this.index.removeSync(key);
          if (this.dropIfUnreferenced(key.slice(key.lastIndexOf(':') + 1))) dropped += 1;
        }
      }
      return dropped;
    });
  }

  /** Every stored message by id, with its delivery record (agent checkpoints). */
  snapshot(): Map<string, ChatSnapshotEntry> {
    const out = new Map<string, ChatSnapshotEntry>();
    for (const { key, value } of this.messages.getRange()) {
      const delivery = this.deliveries?.get(key);
      out.set(key, { message: snapshotText(decode(value)), ...(delivery !== undefined ? { delivery } : {}) });
    }
    return out;
  }

  /** Makes the stored messages exactly those of `snapshot`, in one transaction (see restoreSync). */
  async restore(snapshot: ReadonlyMap<string, ChatSnapshotEntry>): Promise<ChatRestoreResult> {
    return this.transaction(() => this.restoreSync(snapshot));
  }

  /**
   * Inside a transaction: makes the stored messages exactly those of `snapshot` (an agent rollback).
   * Messages stored now and not in it go, with their index entries, sequence entry and delivery;
   * those in it and gone now come back with their index entries and delivery record. Sequence numbers
   * are never reused: a message put back gets a new one, so event streams see it as a new message
   * (a client resuming after an older id gets it again). Retention is not applied here: the next
   * pruning does. A message kept whose delivery record differs gets the snapshot's record back.
   */
  restoreSync(snapshot: ReadonlyMap<string, ChatSnapshotEntry>): ChatRestoreResult {
    const result: ChatRestoreResult = { removed: [], restored: [], deliveries: [] };
    for (const id of [...this.messages.getKeys()]) {
      if (snapshot.has(id)) continue;
      const m = this.get(id);
      if (!m) continue;
      for (const party of parties(m)) this.index.removeSync(indexKey(party, m.timestamp, id));
      this.messages.removeSync(id);
      this.writeDelivery(id, undefined);
      this.removeSeq(m);
      result.removed.push(id);
    }
    for (const [id, entry] of snapshot) {
      if (this.messages.get(id) !== undefined) {
        const held = this.deliveries?.get(id);
        if (this.deliveries && held !== entry.delivery) {
          this.writeDelivery(id, entry.delivery);
          result.deliveries.push(id);
        }
        continue;
      }
      const { seq: _old, ...kept } = decode(entry.message);
      if (kept.id !== id) throw new Error(`chat snapshot entry ${id} holds message ${kept.id}`);
      const seq = this.nextSeq(id, kept);
      const msg: StoredMessage = { ...kept, ...(seq !== undefined ? { seq } : {}) };
      this.messages.putSync(id, encode(msg));
      for (const party of parties(msg)) this.index.putSync(indexKey(party, msg.timestamp, id), '');
      if (entry.delivery !== undefined) this.writeDelivery(id, entry.delivery);
      result.restored.push(msg);
    }
    return result;
  }

  /**
   * Inside a transaction: the next sequence number, recorded for `id` and under each of its parties
   * (none without the database).
   */
  private nextSeq(id: string, m: { from: string; to: string }): bigint | undefined {
    const seqs = this.seqs;
    if (!seqs) return undefined;
    const seq = this.lastSeq() + 1n;
    const text = seq.toString();
    seqs.putSync(LAST_SEQ, text);
    seqs.putSync(pad(seq), id);
    for (const party of parties(m)) seqs.putSync(partySeqKey(party, seq), id);
    // Complete since the open caught them up (indexParties, indexPending): the marks move with every number.
    seqs.putSync(PARTIES_INDEXED, text);
    this.deliveries?.putSync(PENDING_INDEXED, text);
    return seq;
  }

  /** Inside a transaction: a message's sequence entry and its parties' entries. */
  private removeSeq(m: StoredMessage): void {
    if (m.seq === undefined || !this.seqs) return;
    this.seqs.removeSync(pad(m.seq));
    for (const party of parties(m)) this.seqs.removeSync(partySeqKey(party, m.seq));
  }

  /**
   * Inside a transaction: removes an account's oldest index entries beyond the count. The scan
   * starts past the newest `maxPerAccount` entries, so a put costs the same whether the account
   * holds ten messages or ten thousand (counting them all made a put 15 times slower at the limit).
   */
  private trimCount(party: string): void {
    const range = partyRange(party);
    const beyond = [
      ...this.index.getKeys({
        start: range.end,
        end: range.start,
        reverse: true,
        offset: this.retention.maxPerAccount,
      }),
    ];
    for (const key of beyond) {
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
    this.writeDelivery(id, undefined);
    this.removeSeq(m);
    return true;
  }
}

/** A stored message as the API and the `account_chat` request carry it: the envelope, no local fields. */
export function chatEnvelopeJson(m: StoredMessage) {
  return {
    id: m.id,
    from: m.from,
    to: m.to,
    message: m.message,
    timestamp: m.timestamp,
    signature: m.signature,
    ...(m.pow_nonce !== undefined ? { pow_nonce: m.pow_nonce } : {}),
  };
}

function parties(m: { from: string; to: string }): string[] {
  return m.from === m.to ? [m.from] : [m.from, m.to];
}

function encode(m: StoredMessage): string {
  return stringifyJson(m);
}

/** A message's snapshot text: its stored fields in a fixed order, without the sequence number. */
function snapshotText(m: StoredMessage): string {
  return stringifyJson({ ...chatEnvelopeJson(m), received_at: m.received_at });
}

/**
 * A stored message's sender and recipient read from its JSON text without parsing it. In JSON text,
 * `"from":"` can only be the key (a quote inside a string is escaped), and keys are hex: the value
 * runs to the next quote. A text without them (never written so) is parsed.
 */
function partiesOf(text: string): { from: string; to: string } {
  const value = (name: string): string | undefined => {
    const at = text.indexOf(`"${name}":"`);
    if (at < 0) return undefined;
    const start = at + name.length + 4;
    const end = text.indexOf('"', start);
    return end < 0 ? undefined : text.slice(start, end);
  };
  const from = value('from');
  const to = value('to');
  return from !== undefined && to !== undefined ? { from, to } : decode(text);
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
    // Messages stored without the sequence database have none: they are never streamed.
    ...(o.seq !== undefined ? { seq: BigInt(o.seq as bigint) } : {}),
  };
}

/**
 * Whether a stored delivery record is pending. In JSON text `"state":"pending"` can only be the key
 * and its value (quotes inside strings are escaped), so one holding it is parsed to be sure of it
 * and the others (nearly all: long delivered) are not parsed at all.
 */
function isPendingText(text: string): boolean {
  return text.includes('"state":"pending"') && decodeDelivery(text).state === 'pending';
}

function decodeDelivery(text: string): Delivery {
  const o = parseJson(text) as Record<string, unknown>;
  return {
    state: o.state as DeliveryState,
    attempts: Number(o.attempts),
    updated_at: BigInt(o.updated_at as bigint),
    ...(o.next_at !== undefined ? { next_at: BigInt(o.next_at as bigint) } : {}),
    ...(typeof o.error === 'string' ? { error: o.error } : {}),
  };
}
