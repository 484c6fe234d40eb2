import type { ChatSnapshotEntry, ChatStore, StoredMessage } from '../chat/chat-store.ts';
import type { Directory } from '../net/directory.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';
import type { Registration } from '../protocol/registration.ts';
import type { CheckpointArea, NotCovered } from './checkpoints.ts';

/**
 * The areas of local state an agent checkpoint covers today (agent/checkpoints.ts), and what it does
 * not cover yet.
 */

/** Characters of a chat message shown in a diff. */
export const DIFF_TEXT_CHARS = 80;

/** Local state that lives outside the node today (issue #16 moves it in; then it becomes an area). */
export const NOT_COVERED: readonly NotCovered[] = Object.freeze(
  ['settings', 'wallet_labels', 'address_book'].map((area) => ({
    area,
    reason:
      "kept in the desktop window's browser storage, not in the node, until issue #16 moves it into the node",
  })),
);

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
