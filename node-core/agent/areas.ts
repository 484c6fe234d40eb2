import type { ChatSnapshotEntry, ChatStore, StoredMessage } from '../chat/chat-store.ts';
import type { Directory } from '../net/directory.ts';
import { type JsonValue, parseJson, stringifyJson } from '../protocol/json.ts';
import type { Registration } from '../protocol/registration.ts';
import type { AppStore } from '../app-store/app-store.ts';
import type { AppDocumentKey } from '../app-store/documents.ts';
import type { CheckpointArea, NotCovered } from './checkpoints.ts';

/**
 * The areas of local state an agent checkpoint covers today (agent/checkpoints.ts), and what it does
 * not cover yet.
 */

/** Characters of a chat message shown in a diff. */
export const DIFF_TEXT_CHARS = 80;

/** Local state a checkpoint leaves alone on purpose. */
export const NOT_COVERED: readonly NotCovered[] = Object.freeze([
  {
    area: 'wallet_keys',
    reason:
      'the encrypted keystore (seeds) is never rolled back: a rollback must not take away a key that may ' +
      'hold funds; its labels are covered as wallet_labels',
  },
]);

/** An entry's value text: the message's snapshot text, then its delivery record's on a line of its own. */
function chatValue(e: ChatSnapshotEntry): string {
  return e.delivery === undefined ? e.message : `${e.message}\n${e.delivery}`;
}

function chatEntry(value: string): ChatSnapshotEntry {
  const nl = value.indexOf('\n');
  return nl < 0 ? { message: value } : { message: value.slice(0, nl), delivery: value.slice(nl + 1) };
}

/**
 * `chat`: every stored message by id, with its delivery record. A rollback removes the messages
 * stored since and puts back the removed ones (new sequence numbers: streams see them as new);
 * `afterRestore` then hears of those put back (to publish them, and to hand pending ones to the outbox).
 */
export function chatArea(
  store: ChatStore,
  afterRestore?: (restored: StoredMessage[]) => void,
): CheckpointArea {
  return {
    name: 'chat',
    noun: ['chat message', 'chat messages'],
    capture() {
      const out = new Map<string, string>();
      for (const [id, e] of store.snapshot()) out.set(id, chatValue(e));
      return out;
    },
    summarize(_key, value) {
      const e = chatEntry(value);
      const m = parseJson(e.message) as Record<string, unknown>;
      const text = String(m.message);
      const delivery =
        e.delivery === undefined ? undefined : (parseJson(e.delivery) as Record<string, unknown>);
      return {
        from: m.from,
        to: m.to,
        timestamp: m.timestamp,
        message: [...text].length > DIFF_TEXT_CHARS ? [...text].slice(0, DIFF_TEXT_CHARS).join('') : text,
        ...(delivery ? { delivery: delivery.state } : {}),
      };
    },
    restore(target) {
      const snapshot = new Map<string, ChatSnapshotEntry>();
      for (const [id, value] of target) snapshot.set(id, chatEntry(value));
      const { restored } = store.restoreSync(snapshot);
      if (afterRestore && restored.length > 0) return () => afterRestore(restored);
    },
  };
}

/** `directory`: the live registrations, by account key. A rollback replaces them all. */
export function directoryArea(directory: Directory): CheckpointArea {
  return {
    name: 'directory',
    noun: ['directory entry', 'directory entries'],
    capture() {
      const out = new Map<string, string>();
      for (const e of directory.list())
        out.set(
          e.account,
          stringifyJson({ node_peer: e.node_peer, timestamp: e.timestamp, signature: e.signature }),
        );
      return out;
    },
    summarize(_key, value) {
      const o = parseJson(value) as Record<string, unknown>;
      return { node_peer: o.node_peer, timestamp: o.timestamp };
    },
    restore(target) {
      const regs: Registration[] = [];
      for (const [account, value] of target) {
        const o = parseJson(value) as Record<string, unknown>;
        regs.push({
          account,
          node_peer: o.node_peer as string,
          timestamp: BigInt(o.timestamp as bigint),
          signature: o.signature as string,
        });
      }
      return () => directory.replaceAll(regs);
    },
  };
}

/** The `lease_holds` database as the area writes it. */
export interface LeaseHoldsDb {
  getRange(opts?: object): Iterable<{ key: string; value: string }>;
  putSync(key: string, value: string): void;
  removeSync(key: string): unknown;
}

/**
 * `lease_holds`: the node account's lease holds by lease hash, as stored. A rollback rewrites the
 * database; `reload` then has the running holds read it again.
 */
export function leaseHoldsArea(db: LeaseHoldsDb, reload: () => void): CheckpointArea {
  return {
    name: 'lease_holds',
    noun: ['lease hold', 'lease holds'],
    capture() {
      const out = new Map<string, string>();
      for (const { key, value } of db.getRange({})) out.set(key, value);
      return out;
    },
    summarize(_key, value) {
      const o = parseJson(value) as Record<string, unknown>;
      return {
        enabled: o.enabled === true,
        segment_secs: o.segment_secs,
        ...(o.warning !== undefined ? { warning: o.warning } : {}),
      };
    },
    restore(target) {
      const now = new Map<string, string>();
      for (const { key, value } of db.getRange({})) now.set(key, value);
      for (const key of now.keys()) if (!target.has(key)) db.removeSync(key);
      for (const [key, value] of target) if (now.get(key) !== value) db.putSync(key, value);
      return reload;
    },
  };
}

/**
 * An app store document seen as an area (issue #16 moved the window's state into the node): `explode`
 * turns the document into keyed entries (one per setting, contact or label, so a diff names what
 * changed), `implode` builds the document back from them, in their order. A rollback to no entries
 * removes the document (the window then uses its defaults).
 */
interface DocumentShape {
  explode(doc: JsonValue): Map<string, string>;
  implode(entries: ReadonlyMap<string, string>): JsonValue;
  summarize(key: string, value: string): unknown;
}

const objectShape: DocumentShape = {
  explode(doc) {
    const out = new Map<string, string>();
    if (typeof doc === 'object' && doc !== null && !Array.isArray(doc))
      for (const [k, v] of Object.entries(doc)) out.set(k, stringifyJson(v));
    return out;
  },
  implode(entries) {
    const o: Record<string, JsonValue> = {};
    for (const [k, v] of entries) o[k] = parseJson(v) as JsonValue;
    return o;
  },
  summarize: (_key, value) => parseJson(value),
};

/** The address book, keyed by address: a contact's value is its name. */
const addressBookShape: DocumentShape = {
  explode(doc) {
    const out = new Map<string, string>();
    if (Array.isArray(doc))
      for (const c of doc as { name: string; address: string }[]) out.set(c.address, c.name);
    return out;
  },
  implode: (entries) => [...entries].map(([address, name]) => ({ name, address })),
  summarize: (_key, value) => value,
};

function documentArea(
  store: AppStore,
  doc: AppDocumentKey,
  name: string,
  noun: readonly [string, string],
  shape: DocumentShape,
): CheckpointArea {
  const capture = (): Map<string, string> => {
    const d = store.get(doc);
    return d === undefined ? new Map() : shape.explode(d.value);
  };
  return {
    name,
    noun,
    capture,
    summarize: (key, value) => shape.summarize(key, value),
    restore(target) {
      const now = capture();
      const same = now.size === target.size && [...target].every(([k, v]) => now.get(k) === v);
      if (same) return;
      store.putSync(doc, target.size === 0 ? null : shape.implode(target));
      return () => store.changed(doc);
    },
  };
}

/** The window's settings, address book and account labels (app-store/documents.ts). */
export function appStoreAreas(store: AppStore): CheckpointArea[] {
  return [
    documentArea(store, 'settings', 'settings', ['setting', 'settings'], objectShape),
    documentArea(store, 'address_book', 'address_book', ['contact', 'contacts'], addressBookShape),
    documentArea(store, 'wallet_labels', 'wallet_labels', ['account label', 'account labels'], objectShape),
  ];
}
