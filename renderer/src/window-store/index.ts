import { useSyncExternalStore } from 'react';
import type { JsonValue } from '../../../node-core/protocol/json.ts';
import type { LocalStore } from '../store.ts';
import { type DocKey, httpTransport, WindowStore } from './window-store.ts';

export type { DocKey } from './window-store.ts';
export { WindowStore } from './window-store.ts';

let instance: WindowStore | undefined;

/** The window's one store (until openWindowStore ran, documents read as absent and writes wait). */
export function windowStore(): WindowStore {
  instance ??= new WindowStore({
    load: () => Promise.reject(new Error('the window store is not open')),
    write: () => Promise.reject(new Error('the window store is not open')),
  });
  return instance;
}

/**
 * Where each document was kept before it moved into the node (browser storage of one origin). Read
 * once at start: a document the node does not hold yet is sent to it, and the browser's copy dropped
 * once the node took it. A browser copy of a document the node already holds is left alone (it may
 * be another wallet: nothing is thrown away).
 */
export const LEGACY_KEYS: Readonly<Record<DocKey, string>> = {
  vault: 'ledger-desktop.vault.v1',
  settings: 'ledger-desktop.settings.v1',
  address_book: 'ledger-desktop.contacts.v1',
  wallet_labels: 'ledger-desktop.wallet-labels.v1',
  lease_holds: 'ledger-desktop.lease-holds.v1',
  chat_read: 'ledger-desktop.chat-read.v1',
};

/** Loads the node's documents, moves over what browser storage still holds, then keeps watching. */
export async function openWindowStore(
  base: string,
  doFetch: typeof fetch,
  headers: Readonly<Record<string, string>>,
): Promise<WindowStore> {
  const store = windowStore();
  store.connect(httpTransport(base, doFetch, headers));
  await store.load();
  // Whoever read a document before (a default) reads the node's now.
  for (const key of Object.keys(LEGACY_KEYS) as DocKey[]) store.announce(key);
  await migrateBrowserStorage(store);
  store.startPolling();
  return store;
}

/** Returns the documents it moved. */
export async function migrateBrowserStorage(store: WindowStore): Promise<DocKey[]> {
  const ls = globalThis.localStorage;
  if (ls === undefined) return [];
  const moved: DocKey[] = [];
  for (const [key, legacy] of Object.entries(LEGACY_KEYS) as [DocKey, string][]) {
    const text = ls.getItem(legacy);
    if (text === null || store.has(key)) continue;
    let value: JsonValue;
    try {
      value = key === 'vault' ? text : legacyValue(key, JSON.parse(text));
    } catch {
      continue; // unreadable: left where it is
    }
    store.set(key, value);
    moved.push(key);
  }
  if (moved.length === 0) return moved;
  await store.flush();
  for (const key of moved) if (store.has(key)) ls.removeItem(LEGACY_KEYS[key]);
  return moved;
}

/** A browser-storage value in the shape the node takes (contacts: valid, one per address). */
function legacyValue(key: DocKey, v: unknown): JsonValue {
  if (key !== 'address_book') return v as JsonValue;
  const seen = new Set<string>();
  const out: { name: string; address: string }[] = [];
  for (const c of Array.isArray(v) ? (v as { name?: unknown; address?: unknown }[]) : []) {
    if (typeof c?.name !== 'string' || typeof c.address !== 'string' || !/^[0-9a-f]{64}$/.test(c.address))
      continue;
    if (seen.has(c.address)) continue;
    seen.add(c.address);
    out.push({ name: c.name, address: c.address });
  }
  return out;
}

/**
 * A document as a small observable value (the LocalStore interface the pages use): read from the
 * window store, checked by `accept` (a damaged document falls back to the default rather than stop
 * the app), written through to the node.
 */
export function windowDoc<T>(key: DocKey, fallback: T, accept: (v: unknown) => T | undefined): LocalStore<T> {
  let raw: JsonValue | undefined;
  let value: T = fallback;
  let seen = false;
  const read = (): T => {
    const now = windowStore().get(key);
    if (!seen || now !== raw) {
      seen = true;
      raw = now;
      value = now === undefined ? fallback : (accept(now) ?? fallback);
    }
    return value;
  };
  const doc: LocalStore<T> = {
    get: read,
    set(next) {
      const v = typeof next === 'function' ? (next as (prev: T) => T)(read()) : next;
      windowStore().set(key, v as unknown as JsonValue);
    },
    subscribe(listener) {
      return windowStore().onChange((k) => {
        if (k === key) listener();
      });
    },
    use() {
      return useDoc(doc);
    },
  };
  return doc;
}

function useDoc<T>(doc: LocalStore<T>): T {
  return useSyncExternalStore(doc.subscribe, doc.get);
}
