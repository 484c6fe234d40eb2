import type { DesktopBridge } from '../node-core/client/bridge.ts';

/**
 * The IPC channels between the preload bridge and the main process: the one list both sides use.
 * main.ts registers `ipcMain.handle` for every invoke channel from here; the sandboxed preload
 * (preload.cts), which can require nothing but `electron`, repeats the names in a constant typed
 * `Channels`, so tsc refuses any difference from this list.
 */
export const CHANNELS = {
  powSolve: 'ledger-desktop:pow-solve',
  powCancel: 'ledger-desktop:pow-cancel',
  /** Main to renderer: `(jobId, PowProgress)` while a solve runs. */
  powProgress: 'ledger-desktop:pow-progress',
  keysIsEncryptionAvailable: 'ledger-desktop:keys-is-encryption-available',
  keysSet: 'ledger-desktop:keys-set',
  keysGet: 'ledger-desktop:keys-get',
  keysDelete: 'ledger-desktop:keys-delete',
  appInfo: 'ledger-desktop:app-info',
  /** The unread chat count, shown on the tray and the dock/taskbar badge. */
  trayUnread: 'ledger-desktop:tray-unread',
  /** The unlocked accounts' XE (micro-units, a digit string) or null, for the tray. */
  trayBalance: 'ledger-desktop:tray-balance',
  /** A desktop notification `(title, body)`, shown while the window is not in front. */
  notifyShow: 'ledger-desktop:notify-show',
} as const;

export type Channels = typeof CHANNELS;
export type Channel = Channels[keyof Channels];

/** Channels the main process sends on (the renderer listens); every other one is invoked. */
export const EVENT_CHANNELS = [CHANNELS.powProgress] as const;
export type EventChannel = (typeof EVENT_CHANNELS)[number];
export type InvokeChannel = Exclude<Channel, EventChannel>;

export const INVOKE_CHANNELS: readonly InvokeChannel[] = Object.values(CHANNELS).filter(
  (c): c is InvokeChannel => !(EVENT_CHANNELS as readonly string[]).includes(c),
);

type FunctionKeys<T> = {
  [K in keyof T & string]: T[K] extends (...args: never[]) => unknown ? K : never;
}[keyof T & string];

/** Every function of the bridge, as `group.name` ('pow.solve', 'keys.get', 'app.info'...). */
export type BridgeMethod = {
  [G in keyof DesktopBridge & string]: `${G}.${FunctionKeys<DesktopBridge[G]>}`;
}[keyof DesktopBridge & string];

/**
 * Which channel serves each bridge function. Typed over the bridge itself: a function added to
 * DesktopBridge does not compile until it is given a channel here.
 */
export const BRIDGE_METHOD_CHANNELS: { readonly [M in BridgeMethod]: Channel } = {
  'pow.solve': CHANNELS.powSolve,
  'pow.cancel': CHANNELS.powCancel,
  'pow.onProgress': CHANNELS.powProgress,
  'keys.isEncryptionAvailable': CHANNELS.keysIsEncryptionAvailable,
  'keys.set': CHANNELS.keysSet,
  'keys.get': CHANNELS.keysGet,
  'keys.delete': CHANNELS.keysDelete,
  'app.info': CHANNELS.appInfo,
  'tray.setUnread': CHANNELS.trayUnread,
  'tray.setBalance': CHANNELS.trayBalance,
  'notify.show': CHANNELS.notifyShow,
};

/** An error as it crosses IPC: Electron would keep only the message of a thrown Error. */
export interface WireError {
  name: string;
  message: string;
}

/** What every invoke handler resolves with; the preload turns `ok: false` back into a rejection. */
export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: WireError };

/** The wire form of anything thrown: its name and message (never its stack or other fields). */
export function toWireError(e: unknown): WireError {
  if (e instanceof Error) return { name: e.name || 'Error', message: e.message };
  return { name: 'Error', message: String(e) };
}
