import { useSyncExternalStore } from 'react';

/**
 * A small value persisted in localStorage, observable by React. Unreadable stored values fall back
 * to the default (a damaged setting must not stop the app from starting).
 */
export interface LocalStore<T> {
  get(): T;
  set(next: T | ((prev: T) => T)): void;
  subscribe(listener: () => void): () => void;
  use(): T;
}

export function localStore<T>(
  key: string,
  fallback: T,
  accept: (v: unknown) => T | undefined,
): LocalStore<T> {
  const listeners = new Set<() => void>();
  const read = (): T => {
    try {
      const text = globalThis.localStorage?.getItem(key);
      if (text == null) return fallback;
      return accept(JSON.parse(text)) ?? fallback;
    } catch {
      return fallback;
    }
  };
  let value = read();
  const store: LocalStore<T> = {
    get: () => value,
    set(next) {
      value = typeof next === 'function' ? (next as (prev: T) => T)(value) : next;
      try {
        globalThis.localStorage?.setItem(key, JSON.stringify(value));
      } catch {
        // Storage full or disabled: the value still holds for this session.
      }
      for (const l of listeners) l();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    use() {
      return useSyncExternalStore(store.subscribe, store.get);
    },
  };
  return store;
}
