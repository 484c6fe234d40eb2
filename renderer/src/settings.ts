import { useSyncExternalStore } from 'react';
import { isHex } from '../../node-core/protocol/hex.ts';
import type { LocalStore } from './store.ts';
import { windowDoc } from './window-store/index.ts';

/** App settings and the address book, kept by the node (window-store/; no secrets here). */
export type ThemeChoice = 'system' | 'light' | 'dark';

export interface Settings {
  theme: ThemeChoice;
  /** Minutes of inactivity before the keystore locks itself; 0 = never. */
  autoLockMinutes: number;
  /** Receive incoming sends automatically while unlocked. */
  autoReceive: boolean;
  /** The account this window shows (the window's own, not shared: see below). */
  selectedAccount?: string;
}

export const DEFAULT_SETTINGS: Settings = { theme: 'system', autoLockMinutes: 5, autoReceive: false };
export const AUTO_LOCK_CHOICES = [1, 2, 5, 10, 15, 30, 60, 0] as const;

/** The settings every window shares (the node keeps them): all but the account shown. */
const shared = windowDoc<Omit<Settings, 'selectedAccount'>>('settings', DEFAULT_SETTINGS, (v) => {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Partial<Settings>;
  return {
    theme: o.theme === 'light' || o.theme === 'dark' ? o.theme : 'system',
    autoLockMinutes:
      typeof o.autoLockMinutes === 'number' && o.autoLockMinutes >= 0 && o.autoLockMinutes <= 24 * 60
        ? Math.floor(o.autoLockMinutes)
        : DEFAULT_SETTINGS.autoLockMinutes,
    autoReceive: o.autoReceive === true,
  };
});

/**
 * The account a window shows is that window's own (two windows may show two accounts): kept in the
 * tab's sessionStorage, so a reload keeps it; a new window starts on the first account.
 */
const SELECTED_KEY = 'ledger-desktop.selected-account';
const selectedListeners = new Set<() => void>();
let selected: string | undefined = (() => {
  try {
    const v = globalThis.sessionStorage?.getItem(SELECTED_KEY) ?? undefined;
    return isHex(v, 32) ? v : undefined;
  } catch {
    return undefined;
  }
})();

function setSelected(next: string | undefined): void {
  if (next === selected) return;
  selected = next;
  try {
    if (next === undefined) globalThis.sessionStorage?.removeItem(SELECTED_KEY);
    else globalThis.sessionStorage?.setItem(SELECTED_KEY, next);
  } catch {
    // Storage disabled: the choice holds for this page.
  }
  for (const l of selectedListeners) l();
}

let merged: { from: [Omit<Settings, 'selectedAccount'>, string | undefined]; value: Settings } | undefined;
function readSettings(): Settings {
  const base = shared.get();
  if (merged?.from[0] !== base || merged.from[1] !== selected)
    merged = {
      from: [base, selected],
      value: { ...base, ...(selected !== undefined ? { selectedAccount: selected } : {}) },
    };
  return merged.value;
}

export const settings: LocalStore<Settings> = {
  get: readSettings,
  set(next) {
    const v = typeof next === 'function' ? next(readSettings()) : next;
    const { selectedAccount, ...rest } = v;
    setSelected(isHex(selectedAccount, 32) ? selectedAccount : undefined);
    const now = shared.get();
    if (
      rest.theme !== now.theme ||
      rest.autoLockMinutes !== now.autoLockMinutes ||
      rest.autoReceive !== now.autoReceive
    )
      shared.set(rest);
  },
  subscribe(listener) {
    const off = shared.subscribe(listener);
    selectedListeners.add(listener);
    return () => {
      off();
      selectedListeners.delete(listener);
    };
  },
  use() {
    return useSyncExternalStore(settings.subscribe, readSettings);
  },
};

export function updateSettings(patch: Partial<Settings>): void {
  settings.set((s) => ({ ...s, ...patch }));
}

/** Applies the theme to the document: an explicit choice, or the system's (prefers-color-scheme). */
export function applyTheme(theme: ThemeChoice): void {
  const root = document.documentElement;
  if (theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = theme;
}

export interface Contact {
  name: string;
  address: string;
}

export const contacts = windowDoc<Contact[]>('address_book', [], (v) =>
  Array.isArray(v)
    ? (v as Contact[]).filter((c) => typeof c?.name === 'string' && isHex(c.address, 32))
    : undefined,
);

/** Normalises a typed address (spaces dropped, lower case); returns it or an error sentence. */
export function parseAddressInput(text: string): { address: string } | { error: string } {
  const t = text.replace(/\s+/g, '').toLowerCase();
  if (t === '') return { error: 'Enter the recipient’s address.' };
  if (/[^0-9a-f]/.test(t))
    return { error: 'An address is 64 hexadecimal characters (0-9, a-f); this has others.' };
  if (t.length !== 64) return { error: `An address is 64 hexadecimal characters; this has ${t.length}.` };
  return { address: t };
}
