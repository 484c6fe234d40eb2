import type { IpcMain, IpcMainInvokeEvent } from 'electron';
import type { DesktopAppInfo, PowProgress } from '../node-core/client/bridge.ts';
import { CHANNELS, INVOKE_CHANNELS, type InvokeChannel, type IpcResult, toWireError } from './channels.ts';
import { checkNotice, type DesktopNotice } from './notice.ts';

/**
 * The main process's handlers for the bridge's channels. Every handler:
 * - answers only the node's own page (isTrustedSender: the sending frame's origin); anything else
 *   gets a SecurityError;
 * - resolves with an IpcResult envelope instead of throwing, so the error's name survives IPC
 *   (ipcRenderer.invoke would keep only a prefixed message).
 * No electron value is imported: main.ts passes ipcMain and the services; tests pass fakes.
 */
export interface BridgeServices {
  pow: {
    solve(
      targetHex: unknown,
      difficultyHex: unknown,
      jobId: unknown,
      onProgress: (p: PowProgress) => void,
      owner: number,
    ): Promise<string>;
    cancel(jobId: unknown): Promise<void>;
  };
  keys: {
    isEncryptionAvailable(): Promise<boolean>;
    set(name: string, value: string): Promise<void>;
    get(name: string): Promise<string | null>;
    delete(name: string): Promise<void>;
  };
  appInfo(): DesktopAppInfo;
  /** The unread chat count for the tray and badge. */
  setUnread(count: number): void;
  /** The unlocked accounts' XE in micro-units for the tray, or null (locked). */
  setBalance(microXe: bigint | null): void;
  /** A desktop notification from the page (checked: see checkNotice). */
  notify(notice: DesktopNotice): void;
  isTrustedSender(event: IpcMainInvokeEvent): boolean;
}

export type BridgeHandler = (event: IpcMainInvokeEvent, ...args: unknown[]) => Promise<unknown>;

/** One handler per invoke channel; the mapped type makes a missing one a compile error. */
export function bridgeHandlers(s: BridgeServices): { readonly [C in InvokeChannel]: BridgeHandler } {
  const str = (v: unknown, what: string): string => {
    if (typeof v !== 'string') throw new TypeError(`${what} must be a string`);
    return v;
  };
  return {
    [CHANNELS.powSolve]: async (event, targetHex, difficultyHex, jobId) => {
      const sender = event.sender;
      const id = str(jobId, 'job id');
      const onProgress = (p: PowProgress): void => {
        if (!sender.isDestroyed()) sender.send(CHANNELS.powProgress, id, p);
      };
      // A window that goes away mid-search does not leave the cores busy.
      const onGone = (): void => void s.pow.cancel(id);
      sender.once('destroyed', onGone);
      try {
        return await s.pow.solve(targetHex, difficultyHex, id, onProgress, sender.id);
      } finally {
        sender.removeListener('destroyed', onGone);
      }
    },
    [CHANNELS.powCancel]: async (_event, jobId) => s.pow.cancel(str(jobId, 'job id')),
    [CHANNELS.keysIsEncryptionAvailable]: async () => s.keys.isEncryptionAvailable(),
    [CHANNELS.keysSet]: async (_event, name, value) => s.keys.set(str(name, 'name'), str(value, 'value')),
    [CHANNELS.keysGet]: async (_event, name) => s.keys.get(str(name, 'name')),
    [CHANNELS.keysDelete]: async (_event, name) => s.keys.delete(str(name, 'name')),
    [CHANNELS.appInfo]: async () => s.appInfo(),
    [CHANNELS.trayUnread]: async (_event, count) => {
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > 1_000_000)
        throw new TypeError('count must be a whole number from 0');
      s.setUnread(count);
    },
    [CHANNELS.trayBalance]: async (_event, microXe) => {
      // u64 at most: a total past it is not a balance any ledger account can hold.
      if (microXe !== null && (typeof microXe !== 'string' || !/^(0|[1-9]\d{0,19})$/.test(microXe)))
        throw new TypeError('the balance must be a whole number of micro-units as a digit string, or null');
      s.setBalance(microXe === null ? null : BigInt(microXe));
    },
    [CHANNELS.notifyShow]: async (_event, title, body) => s.notify(checkNotice(title, body)),
  };
}

export const UNTRUSTED_SENDER_ERROR = {
  name: 'SecurityError',
  message: 'only the app window may use the desktop bridge',
} as const;

/** Wraps a handler: sender check, then the result or the error in an IpcResult. */
export function envelope(
  handler: BridgeHandler,
  isTrustedSender: (event: IpcMainInvokeEvent) => boolean,
): (event: IpcMainInvokeEvent, ...args: unknown[]) => Promise<IpcResult<unknown>> {
  return async (event, ...args) => {
    if (!isTrustedSender(event)) return { ok: false, error: { ...UNTRUSTED_SENDER_ERROR } };
    try {
      return { ok: true, value: await handler(event, ...args) };
    } catch (e) {
      return { ok: false, error: toWireError(e) };
    }
  };
}

/** Registers every invoke channel on `ipc`; returns a function that removes them again. */
export function registerBridgeHandlers(
  ipc: Pick<IpcMain, 'handle' | 'removeHandler'>,
  s: BridgeServices,
): () => void {
  const handlers = bridgeHandlers(s);
  for (const channel of INVOKE_CHANNELS) ipc.handle(channel, envelope(handlers[channel], s.isTrustedSender));
  return () => {
    for (const channel of INVOKE_CHANNELS) ipc.removeHandler(channel);
  };
}
