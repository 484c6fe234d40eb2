/**
 * The preload of the app window: exposes the DesktopBridge (node-core/client/bridge.ts) as
 * `window.ledgerDesktop` through contextBridge, and nothing else (never ipcRenderer itself).
 *
 * The window is sandboxed, and a sandboxed preload is a classic script whose `require` knows only
 * `electron` (plus events, timers, url): no ES modules, no files of ours. So this file is CommonJS
 * (.cts, emitted by tsc as dist/electron/preload.cjs), requires `electron` only, and imports nothing
 * but types. The channel names are repeated from channels.ts in a constant typed `Channels`, so any
 * difference between the two is a compile error.
 *
 * Errors: every handler in main resolves with an IpcResult envelope; a failure comes back here as
 * `{ name, message }` and is rethrown as an Error with that name. contextBridge copies only the
 * message of an Error into the page, so the message starts with the name when it is not a plain
 * Error: a cancelled solve rejects with "AbortError: proof of work cancelled", and the page can
 * recognise it by `name === 'AbortError'` or by that prefix.
 */
import type {
  BRIDGE_GLOBAL,
  DesktopAppInfo,
  DesktopBridge,
  PowProgress,
} from '../node-core/client/bridge.ts';
import type { ContextBridge, IpcRenderer } from 'electron';
import type { Channels, IpcResult } from './channels.ts';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the one module a sandboxed preload can load
const { contextBridge, ipcRenderer } = require('electron') as {
  contextBridge: ContextBridge;
  ipcRenderer: IpcRenderer;
};

const CHANNELS: Channels = {
  powSolve: 'ledger-desktop:pow-solve',
  powCancel: 'ledger-desktop:pow-cancel',
  powProgress: 'ledger-desktop:pow-progress',
  keysIsEncryptionAvailable: 'ledger-desktop:keys-is-encryption-available',
  keysSet: 'ledger-desktop:keys-set',
  keysGet: 'ledger-desktop:keys-get',
  keysDelete: 'ledger-desktop:keys-delete',
  appInfo: 'ledger-desktop:app-info',
  trayUnread: 'ledger-desktop:tray-unread',
  trayBalance: 'ledger-desktop:tray-balance',
  notifyShow: 'ledger-desktop:notify-show',
};

const GLOBAL_NAME: typeof BRIDGE_GLOBAL = 'ledgerDesktop';

async function call<T>(channel: string, ...args: unknown[]): Promise<T> {
  const result = (await ipcRenderer.invoke(channel, ...args)) as IpcResult<T>;
  if (result.ok) return result.value;
  const { name, message } = result.error;
  const error = new Error(name === 'Error' ? message : `${name}: ${message}`);
  error.name = name;
  throw error;
}

type ProgressListener = (p: PowProgress) => void;
const progressListeners = new Map<string, Set<ProgressListener>>();

ipcRenderer.on(CHANNELS.powProgress, (_event, jobId: unknown, progress: unknown) => {
  if (typeof jobId !== 'string') return;
  const listeners = progressListeners.get(jobId);
  if (listeners === undefined) return;
  const p = progress as Partial<PowProgress> | null;
  if (typeof p?.attempts !== 'string' || typeof p.expected !== 'number') return;
  for (const listener of [...listeners]) {
    try {
      listener({ attempts: p.attempts, expected: p.expected });
    } catch (e) {
      console.error('ledgerDesktop: a proof-of-work progress listener threw', e);
    }
  }
});

const bridge: DesktopBridge = {
  pow: {
    solve(targetHex, difficultyHex, jobId) {
      const id = String(jobId);
      return call<string>(CHANNELS.powSolve, String(targetHex), String(difficultyHex), id).finally(() =>
        progressListeners.delete(id),
      );
    },
    cancel: (jobId) => call<void>(CHANNELS.powCancel, String(jobId)),
    onProgress(jobId, listener) {
      const id = String(jobId);
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      let listeners = progressListeners.get(id);
      if (listeners === undefined) {
        listeners = new Set();
        progressListeners.set(id, listeners);
      }
      listeners.add(listener);
      return () => {
        const set = progressListeners.get(id);
        set?.delete(listener);
        if (set?.size === 0) progressListeners.delete(id);
      };
    },
  },
  keys: {
    isEncryptionAvailable: () => call<boolean>(CHANNELS.keysIsEncryptionAvailable),
    set: (name, value) => call<void>(CHANNELS.keysSet, String(name), String(value)),
    get: (name) => call<string | null>(CHANNELS.keysGet, String(name)),
    delete: (name) => call<void>(CHANNELS.keysDelete, String(name)),
  },
  app: {
    info: () => call<DesktopAppInfo>(CHANNELS.appInfo),
  },
  tray: {
    setUnread(count) {
      // Fire and forget: a badge that fails to update is not worth an error in the page.
      void call<void>(CHANNELS.trayUnread, Number(count)).catch(() => undefined);
    },
    setBalance(microXe) {
      void call<void>(CHANNELS.trayBalance, microXe === null ? null : String(microXe)).catch(() => undefined);
    },
  },
  notify: {
    show(title, body) {
      void call<void>(CHANNELS.notifyShow, String(title), String(body)).catch(() => undefined);
    },
  },
};

contextBridge.exposeInMainWorld(GLOBAL_NAME, bridge);
