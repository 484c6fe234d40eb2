import { parseJson, stringifyJson, type JsonValue } from '../protocol/json.ts';
import { checkAppDocument, isAppDocumentKey, type AppDocumentKey } from './documents.ts';
import { AppStoreError } from './errors.ts';

/**
 * The window's own state, kept by the node in its data directory (issue #16): the encrypted wallet,
 * settings, address book, wallet labels, lease holds and chat read marks. They used to live in the
 * page's localStorage, which belongs to one origin, so a node that came up on another port showed
 * "create a wallet" as if the wallet were lost. In the node they survive a port change, are the same
 * for the desktop window and a browser, and agent checkpoints can cover them.
 *
 * Each document is one JSON value with a version: the store's revision when it was last written. A
 * write may name the version it read (`ifVersion`), so that two windows cannot silently undo each
 * other's change (a stale write is refused with the current version, and the writer reloads).
 */

/** The LMDB database: `doc:<key>` -> `<version>\n<JSON>`, and `revision` -> the last revision given. */
export interface AppStoreDb {
  get(key: string): string | undefined;
  getRange(opts: { start?: string; end?: string }): Iterable<{ key: string; value: string }>;
  putSync(key: string, value: string): void;
  removeSync(key: string): boolean | void;
}

export interface AppDocument {
  key: AppDocumentKey;
  value: JsonValue;
  /** The revision at which it was last written. */
  version: number;
}

export interface AppStoreDeps {
  db: AppStoreDb;
  /** One atomic, durable write unit (store.ts `transaction`). */
  transaction: <T>(fn: () => T) => Promise<T>;
}

export interface WriteResult {
  key: AppDocumentKey;
  /** The document's new version, or null when it was removed. */
  version: number | null;
  revision: number;
}

type Listener = (key: AppDocumentKey, revision: number) => void;

const DOC = 'doc:';
const REVISION = 'revision';

export class AppStore {
  readonly #db: AppStoreDb;
  readonly #transaction: AppStoreDeps['transaction'];
  readonly #listeners = new Set<Listener>();

  constructor(deps: AppStoreDeps) {
    this.#db = deps.db;
    this.#transaction = deps.transaction;
  }

  /** The last revision given (0 for a store never written): any write raises it. */
  revision(): number {
    const text = this.#db.get(REVISION);
    return text === undefined ? 0 : Number(text);
  }

  get(key: AppDocumentKey): AppDocument | undefined {
    const text = this.#db.get(DOC + key);
    return text === undefined ? undefined : decode(key, text);
  }

  /** Every document, in key order. */
  list(): AppDocument[] {
    const out: AppDocument[] = [];
    for (const { key, value } of this.#db.getRange({ start: DOC, end: `${DOC}~` })) {
      const name = key.slice(DOC.length);
      if (isAppDocumentKey(name)) out.push(decode(name, value));
    }
    return out;
  }

  /**
   * Writes a document (null removes it) after checking its shape. With `ifVersion`, refuses with
   * AppStoreError('version_conflict') unless the stored version is that one (0: must not exist).
   */
  async put(key: string, value: JsonValue | null, ifVersion?: number): Promise<WriteResult> {
    const doc = checkKey(key);
    if (value !== null) checkAppDocument(doc, value);
    const result = await this.#transaction(() => {
      if (ifVersion !== undefined) {
        const current = this.get(doc)?.version ?? 0;
        if (current !== ifVersion) throw AppStoreError.versionConflict(doc, current);
      }
      return this.putSync(doc, value);
    });
    this.#emit(doc, result.revision);
    return result;
  }

  /**
   * The write itself, for callers already inside a store transaction (a checkpoint rollback): no
   * shape check (the value came from this store) and no notification (call `changed` after commit).
   */
  putSync(key: AppDocumentKey, value: JsonValue | null): WriteResult {
    const revision = this.revision() + 1;
    this.#db.putSync(REVISION, String(revision));
    if (value === null) {
      this.#db.removeSync(DOC + key);
      return { key, version: null, revision };
    }
    this.#db.putSync(DOC + key, `${revision}\n${stringifyJson(value)}`);
    return { key, version: revision, revision };
  }

  /** Tells listeners that `key` changed (after a putSync's transaction committed). */
  changed(key: AppDocumentKey): void {
    this.#emit(key, this.revision());
  }

  /** Hears of every committed change; returns the unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(key: AppDocumentKey, revision: number): void {
    for (const l of this.#listeners) l(key, revision);
  }
}

function checkKey(key: string): AppDocumentKey {
  if (!isAppDocumentKey(key)) throw AppStoreError.unknownKey(key);
  return key;
}

function decode(key: AppDocumentKey, text: string): AppDocument {
  const nl = text.indexOf('\n');
  return { key, version: Number(text.slice(0, nl)), value: parseJson(text.slice(nl + 1)) as JsonValue };
}
