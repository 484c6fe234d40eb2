/**
 * A small persisted value observable by React: the window's documents (window-store/windowDoc)
 * implement it. Unreadable stored values fall back to the default (a damaged setting must not stop
 * the app from starting).
 */
export interface LocalStore<T> {
  get(): T;
  set(next: T | ((prev: T) => T)): void;
  subscribe(listener: () => void): () => void;
  use(): T;
}
