import { parseJson, stringifyJson, type JsonValue } from '../../../node-core/protocol/json.ts';
import { mergeAddressBook, mergeObjectDoc, type Merger, sameJson } from './merge.ts';

/**
 * The window's documents as the node keeps them (`/app/store`, node-core/app-store): loaded once
 * before the first render, read synchronously from memory, written through to the node.
 *
 * Writes go out one at a time per document, each naming the version it builds on. The newest value
 * of a document is what gets sent (a burst of changes coalesces). When the node's copy changed under
 * an unsaved change (a write refused as stale, 409, or a newer copy seen by polling: another window
 * or an agent's rollback), the change is merged three ways with the node's copy (merge.ts; the
 * keystore merges the vault, which only it can open) and the merge is sent, so that neither side's
 * change is lost. A write that cannot reach the node is retried with backoff and shows as unsaved
 * until it lands.
 *
 * Changes made elsewhere arrive by polling with the store's ETag (a 304 costs next to nothing).
 */
export type DocKey = 'vault' | 'settings' | 'address_book' | 'wallet_labels' | 'lease_holds' | 'chat_read';

export interface StoredDoc {
  value: JsonValue;
  version: number;
}

/** How the window store reaches the node (injected: tests give a fake, the app a fetch). */
export interface StoreTransport {
  /** GET /app/store: undefined when unchanged since `etag` (304). */
  load(
    etag: string | undefined,
  ): Promise<{ etag: string | undefined; docs: Map<DocKey, StoredDoc> } | undefined>;
  /**
   * POST /app/store/:key: the new version (null: removed), 'conflict' (409: stale) or 'refused' (400:
   * the document itself is wrong, a retry would not help). Throws when the node cannot be reached.
   */
  write(key: DocKey, value: JsonValue | null, ifVersion: number): Promise<WriteOutcome>;
}

export type WriteOutcome = number | null | 'conflict' | 'refused';

export interface SaveState {
  /** Documents with changes not yet taken by the node. */
  unsaved: number;
  /** The last failure to reach the node, while something is unsaved. */
  error?: string;
}

type DocListener = (key: DocKey, origin: 'remote' | 'local') => void;

export const POLL_MS = 4000;
const RETRY_MS = [500, 1000, 2000, 5000, 10_000];

export class WindowStore {
  #transport: StoreTransport;
  #docs = new Map<DocKey, StoredDoc>();
  #etag: string | undefined;
  /** The value this window wants stored, per document, until the node took it. */
  readonly #pending = new Map<DocKey, JsonValue | null>();
  /** The node's copy each unsaved change was built on (the base of a merge). */
  readonly #base = new Map<DocKey, StoredDoc | undefined>();
  readonly #mergers = new Map<DocKey, Merger>([
    ['settings', mergeObjectDoc],
    ['wallet_labels', mergeObjectDoc],
    ['lease_holds', mergeObjectDoc],
    ['chat_read', mergeObjectDoc],
    ['address_book', mergeAddressBook],
    // Only the unlocked keystore can open the vault (it sets its own merger): until then, give way.
    ['vault', () => undefined],
  ]);
  readonly #running = new Set<DocKey>();
  readonly #listeners = new Set<DocListener>();
  readonly #saveListeners = new Set<() => void>();
  #save: SaveState = { unsaved: 0 };
  #idle: (() => void)[] = [];
  #poller: ReturnType<typeof setInterval> | undefined;

  constructor(transport: StoreTransport) {
    this.#transport = transport;
  }

  /** Points the store at the node (the one instance exists before the node's address is known). */
  connect(transport: StoreTransport): void {
    this.#transport = transport;
  }

  async load(): Promise<void> {
    const r = await this.#transport.load(undefined);
    if (r === undefined) return;
    this.#etag = r.etag;
    this.#docs = r.docs;
  }

  has(key: DocKey): boolean {
    return this.#pending.has(key) ? this.#pending.get(key) !== null : this.#docs.has(key);
  }

  /** The document as this window sees it: its own unsaved value first. */
  get(key: DocKey): JsonValue | undefined {
    if (this.#pending.has(key)) return this.#pending.get(key) ?? undefined;
    return this.#docs.get(key)?.value;
  }

  /** Sets the document (null removes it) here at once and sends it to the node. */
  set(key: DocKey, value: JsonValue | null): void {
    if (!this.#pending.has(key)) this.#base.set(key, this.#docs.get(key));
    this.#pending.set(key, value);
    this.#emit(key, 'local');
    this.#updateSave();
    void this.#drain(key);
  }

  /** How a document's unsaved change merges with a newer copy from the node (the keystore's vault). */
  setMerger(key: DocKey, merger: Merger): void {
    this.#mergers.set(key, merger);
  }

  /** Resolves once every change made so far was taken by the node. */
  flush(): Promise<void> {
    if (this.#pending.size === 0 && this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Tells listeners the document may have changed (after the first load). */
  announce(key: DocKey): void {
    this.#emit(key, 'remote');
  }

  onChange(listener: DocListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  saveState(): SaveState {
    return this.#save;
  }

  onSaveState(listener: () => void): () => void {
    this.#saveListeners.add(listener);
    return () => this.#saveListeners.delete(listener);
  }

  /** Looks for changes made elsewhere now (and then every POLL_MS with `startPolling`). */
  async refresh(full = false): Promise<void> {
    const r = await this.#transport.load(full ? undefined : this.#etag);
    if (r === undefined) return;
    const before = this.#docs;
    this.#etag = r.etag;
    this.#docs = r.docs;
    for (const key of new Set([...before.keys(), ...r.docs.keys()])) {
      const a = before.get(key);
      const b = r.docs.get(key);
      if (a?.version !== b?.version && !this.#pending.has(key)) this.#emit(key, 'remote');
    }
  }

  startPolling(everyMs = POLL_MS): void {
    if (this.#poller !== undefined) return;
    this.#poller = setInterval(() => {
      // A window in the background has nobody looking; it catches up when shown (visibilitychange).
      if (globalThis.document?.visibilityState === 'hidden') return;
      this.refresh().catch(() => undefined);
    }, everyMs);
    globalThis.document?.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.refresh().catch(() => undefined);
    });
  }

  stopPolling(): void {
    if (this.#poller !== undefined) clearInterval(this.#poller);
    this.#poller = undefined;
  }

  async #drain(key: DocKey): Promise<void> {
    if (this.#running.has(key)) return;
    this.#running.add(key);
    let attempt = 0;
    try {
      while (this.#pending.has(key)) {
        if (!this.#rebase(key)) continue;
        const value = this.#pending.get(key)!;
        const version = this.#docs.get(key)?.version ?? 0;
        let result: WriteOutcome;
        try {
          result = await this.#transport.write(key, value, version);
        } catch (e) {
          this.#save = { unsaved: this.#pending.size, error: e instanceof Error ? e.message : String(e) };
          this.#emitSave();
          await sleep(RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]!);
          continue;
        }
        attempt = 0;
        if (result === 'conflict') {
          // The next round merges with the node's newer copy (#rebase).
          await this.refresh(true).catch(() => undefined);
          // Refused as stale, yet no newer copy to be seen: do not hammer the node.
          if (this.#docs.get(key)?.version === version)
            await sleep(RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]!);
          continue;
        }
        if (result === 'refused') {
          // Nothing will make the node take it: show what it holds again.
          if (this.#pending.get(key) === value) this.#pending.delete(key);
          this.#emit(key, 'remote');
          continue;
        }
        if (this.#pending.get(key) === value) this.#pending.delete(key);
        if (result === null) this.#docs.delete(key);
        else this.#docs.set(key, { value, version: result });
        // A change made meanwhile was built on what was just stored.
        this.#base.set(key, this.#docs.get(key));
      }
    } finally {
      this.#running.delete(key);
      this.#updateSave();
      if (this.#pending.size === 0 && this.#running.size === 0) for (const r of this.#idle.splice(0)) r();
    }
  }

  /**
   * Before a write: if the node's copy is no longer the one the unsaved change was built on, merges
   * the two. False when the change gave way (no merge possible: the node's copy stands).
   */
  #rebase(key: DocKey): boolean {
    const base = this.#base.get(key);
    const now = this.#docs.get(key);
    if (base?.version === now?.version) return true;
    const ours = this.#pending.get(key)!;
    const merger = this.#mergers.get(key);
    const merged = merger ? merger(base?.value, ours, now?.value) : ours;
    this.#base.set(key, now);
    if (merged === undefined) {
      this.#pending.delete(key);
      this.#emit(key, 'remote');
      return false;
    }
    if (!sameJson(merged, ours)) {
      this.#pending.set(key, merged);
      this.#emit(key, 'remote');
    }
    return true;
  }

  #updateSave(): void {
    const unsaved = new Set([...this.#pending.keys(), ...this.#running]).size;
    const next: SaveState =
      unsaved === 0 ? { unsaved } : { unsaved, ...(this.#save.error ? { error: this.#save.error } : {}) };
    if (next.unsaved !== this.#save.unsaved || next.error !== this.#save.error) {
      this.#save = next;
      this.#emitSave();
    }
  }

  #emit(key: DocKey, origin: 'remote' | 'local'): void {
    for (const l of this.#listeners) l(key, origin);
  }

  #emitSave(): void {
    for (const l of this.#saveListeners) l();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The node's `/app/store` over HTTP, with the window session (renderer/src/api.ts). */
export function httpTransport(
  base: string,
  doFetch: typeof fetch,
  headers: Readonly<Record<string, string>>,
): StoreTransport {
  return {
    async load(etag) {
      const res = await doFetch(`${base}/app/store`, {
        headers: { ...headers, accept: 'application/json', ...(etag ? { 'if-none-match': etag } : {}) },
        cache: 'no-store',
      });
      if (res.status === 304) return undefined;
      const text = await res.text();
      if (!res.ok) throw new Error(errorText(res.status, text));
      const body = parseJson(text) as { documents: { key: DocKey; value: JsonValue; version: number }[] };
      const docs = new Map<DocKey, StoredDoc>();
      for (const d of body.documents) docs.set(d.key, { value: d.value, version: d.version });
      return { etag: res.headers.get('etag') ?? undefined, docs };
    },
    async write(key, value, ifVersion) {
      const res = await doFetch(`${base}/app/store/${key}`, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json', 'content-type': 'application/json' },
        body: stringifyJson({ value, if_version: ifVersion }),
      });
      const text = await res.text();
      if (res.status === 409) return 'conflict';
      if (!res.ok) {
        const message = errorText(res.status, text);
        // A refusal for the document itself will not change on retry: drop it loudly.
        if (res.status === 400) {
          console.warn(`the node refused ${key}: ${message}`);
          return 'refused';
        }
        throw new Error(message);
      }
      return (parseJson(text) as { version: number | null }).version;
    },
  };
}

function errorText(status: number, text: string): string {
  try {
    const e = (parseJson(text) as { error?: unknown }).error;
    if (typeof e === 'string') return e;
  } catch {
    // not JSON: the status says enough
  }
  return `the node answered ${status}`;
}
