import { useSyncExternalStore } from 'react';

/**
 * Short notices shown over whatever page is open: the result of a send that finished while the
 * person was elsewhere, "Contact deleted" with Undo. Kept outside React so that code running after
 * its page went away (a send's proof of work) can still tell the person how it ended.
 */
export type ToastTone = 'ok' | 'error' | 'info';

export interface Toast {
  id: number;
  tone: ToastTone;
  text: string;
  /** One button beside the text (Undo, Show). */
  action?: { label: string; run(): void };
  /** Where a link in the toast leads (a hash route), e.g. the block just sent. */
  link?: { label: string; href: string };
  /** Milliseconds on screen; 0 keeps it until closed. */
  timeoutMs: number;
}

export type ToastInput = Omit<Toast, 'id' | 'timeoutMs'> & { timeoutMs?: number };

const DEFAULT_MS: Record<ToastTone, number> = { ok: 6000, info: 6000, error: 12_000 };
const MAX_SHOWN = 4;

let toasts: readonly Toast[] = [];
let nextId = 1;
const listeners = new Set<() => void>();
const timers = new Map<number, ReturnType<typeof setTimeout>>();

function emit(): void {
  for (const l of listeners) l();
}

export function dismissToast(id: number): void {
  clearTimeout(timers.get(id));
  timers.delete(id);
  if (!toasts.some((t) => t.id === id)) return;
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

/** Shows a notice; returns its id (to dismiss it early). */
export function toast(input: ToastInput): number {
  const id = nextId++;
  const t: Toast = { ...input, id, timeoutMs: input.timeoutMs ?? DEFAULT_MS[input.tone] };
  // The oldest go first when too many pile up: a notice nobody can read helps nobody.
  const kept = toasts.slice(Math.max(0, toasts.length - (MAX_SHOWN - 1)));
  for (const old of toasts) if (!kept.includes(old)) dismissToast(old.id);
  toasts = [...kept, t];
  if (t.timeoutMs > 0)
    timers.set(
      id,
      setTimeout(() => dismissToast(id), t.timeoutMs),
    );
  emit();
  return id;
}

/** Keeps a toast on screen while the pointer or focus is on it (reading, reaching for Undo). */
export function holdToast(id: number, held: boolean): void {
  const t = toasts.find((x) => x.id === id);
  if (!t || t.timeoutMs === 0) return;
  clearTimeout(timers.get(id));
  if (held) timers.delete(id);
  else
    timers.set(
      id,
      setTimeout(() => dismissToast(id), t.timeoutMs),
    );
}

/** The notices on screen, oldest first (outside React). */
export function currentToasts(): readonly Toast[] {
  return toasts;
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useToasts(): readonly Toast[] {
  return useSyncExternalStore(subscribe, () => toasts);
}
