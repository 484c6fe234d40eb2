import { isHex } from '../../node-core/protocol/hex.ts';
import { localStore } from './store.ts';

/** App settings and the address book, kept in this browser's localStorage (no secrets here). */
export type ThemeChoice = 'system' | 'light' | 'dark';

export interface Settings {
  theme: ThemeChoice;
  /** Minutes of inactivity before the keystore locks itself; 0 = never. */
  autoLockMinutes: number;
  /** Receive incoming sends automatically while unlocked. */
  autoReceive: boolean;
  /** The account shown in the wallet. */
  selectedAccount?: string;
}

export const DEFAULT_SETTINGS: Settings = { theme: 'system', autoLockMinutes: 5, autoReceive: false };
export const AUTO_LOCK_CHOICES = [1, 2, 5, 10, 15, 30, 60, 0] as const;

export const settings = localStore<Settings>('ledger-desktop.settings.v1', DEFAULT_SETTINGS, (v) => {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Partial<Settings>;
  return {
    theme: o.theme === 'light' || o.theme === 'dark' ? o.theme : 'system',
    autoLockMinutes:
      typeof o.autoLockMinutes === 'number' && o.autoLockMinutes >= 0 && o.autoLockMinutes <= 24 * 60
        ? Math.floor(o.autoLockMinutes)
        : DEFAULT_SETTINGS.autoLockMinutes,
    autoReceive: o.autoReceive === true,
    ...(isHex(o.selectedAccount, 32) ? { selectedAccount: o.selectedAccount } : {}),
  };
});

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

export const contacts = localStore<Contact[]>('ledger-desktop.contacts.v1', [], (v) =>
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
