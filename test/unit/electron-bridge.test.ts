import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { compileFunction } from 'node:vm';
import ts from 'typescript';
import { beforeEach, describe, expect, it } from 'vitest';
import type { IpcMainInvokeEvent } from 'electron';
import {
  BRIDGE_METHOD_CHANNELS,
  CHANNELS,
  EVENT_CHANNELS,
  INVOKE_CHANNELS,
  type IpcResult,
} from '../../electron/channels.ts';
import { type BridgeServices, registerBridgeHandlers, UNTRUSTED_SENDER_ERROR } from '../../electron/ipc.ts';
import { KeyStorageUnavailableError } from '../../electron/key-store.ts';
import { PowAbortError } from '../../electron/pow-host.ts';
import type { DesktopBridge, PowProgress } from '../../node-core/client/bridge.ts';
import { BRIDGE_GLOBAL } from '../../node-core/client/bridge.ts';

/**
 * The bridge end to end without Electron: the real preload (transpiled as Electron would load the
 * built preload.cjs) runs against a fake `electron` whose ipcRenderer reaches the real main-side
 * handlers (ipc.ts) over fake IPC. Electron itself is never imported here: in Node it is only the
 * path of its binary.
 */

const EXPECTED_CHANNELS = [
  'ledger-desktop:pow-solve',
  'ledger-desktop:pow-cancel',
  'ledger-desktop:pow-progress',
  'ledger-desktop:keys-is-encryption-available',
  'ledger-desktop:keys-set',
  'ledger-desktop:keys-get',
  'ledger-desktop:keys-delete',
  'ledger-desktop:app-info',
  'ledger-desktop:tray-unread',
  'ledger-desktop:tray-balance',
  'ledger-desktop:notify-show',
];

const EXPECTED_METHODS = [
  'pow.solve',
  'pow.cancel',
  'pow.onProgress',
  'keys.isEncryptionAvailable',
  'keys.set',
  'keys.get',
  'keys.delete',
  'app.info',
  'tray.setUnread',
  'tray.setBalance',
  'notify.show',
];

describe('the bridge channel list', () => {
  it('is exactly the expected channels, all distinct', () => {
    expect(Object.values(CHANNELS).sort()).toEqual([...EXPECTED_CHANNELS].sort());
    expect(new Set(Object.values(CHANNELS)).size).toBe(EXPECTED_CHANNELS.length);
  });

  it('splits into invoke channels and the one event channel', () => {
    expect(EVENT_CHANNELS).toEqual([CHANNELS.powProgress]);
    expect([...INVOKE_CHANNELS, ...EVENT_CHANNELS].sort()).toEqual([...EXPECTED_CHANNELS].sort());
  });

  it('maps every bridge function to its own channel, and every channel to a function', () => {
    expect(Object.keys(BRIDGE_METHOD_CHANNELS).sort()).toEqual([...EXPECTED_METHODS].sort());
    const used = Object.values(BRIDGE_METHOD_CHANNELS);
    expect(new Set(used).size).toBe(used.length);
    expect([...used].sort()).toEqual([...EXPECTED_CHANNELS].sort());
  });
});

// ---- the preload, run as in a sandboxed renderer ----

const PRELOAD_SOURCE = readFileSync(new URL('../../electron/preload.cts', import.meta.url), 'utf8');

describe('the preload source', () => {
  it('imports only types and requires nothing but electron (a sandboxed preload can load nothing else)', () => {
    const imports = PRELOAD_SOURCE.split('\n').filter((l) => /^\s*import\b/.test(l));
    expect(imports.length).toBeGreaterThan(0);
    for (const line of imports) expect(line, line).toMatch(/^import type /);
    expect([...PRELOAD_SOURCE.matchAll(/require\(([^)]*)\)/g)].map((m) => m[1])).toEqual(["'electron'"]);
    expect(PRELOAD_SOURCE).not.toMatch(/\bimport\(/);
  });

  it('repeats exactly the channel names of channels.ts', () => {
    const block = /const CHANNELS: Channels = \{([^}]*)\}/.exec(PRELOAD_SOURCE)?.[1] ?? '';
    const pairs = Object.fromEntries([...block.matchAll(/(\w+): '([^']+)'/g)].map((m) => [m[1], m[2]]));
    expect(pairs).toEqual(CHANNELS);
  });
});

interface Harness {
  exposed: { key: string; api: unknown }[];
  bridge: DesktopBridge;
  invoked: string[];
  handled: string[];
  senderFrameUrl: string;
  sender: EventEmitter & { id: number; destroyed: boolean };
  ipcRenderer: Record<string, unknown>;
  services: BridgeServices;
  pendingSolves: Map<
    string,
    { resolve(n: string): void; progress(p: PowProgress): void; reject(e: Error): void }
  >;
  cancelled: string[];
  unread: number[];
  balances: (bigint | null)[];
  notices: { title: string; body: string }[];
  keys: Map<string, string>;
  encryption: boolean;
}

function loadPreload(): Harness {
  const h = {
    exposed: [],
    invoked: [],
    handled: [],
    senderFrameUrl: 'http://127.0.0.1:8080/ui/',
    pendingSolves: new Map(),
    cancelled: [],
    unread: [],
    balances: [],
    notices: [],
    keys: new Map(),
    encryption: true,
  } as unknown as Harness;

  // Main side: the real handlers, registered on a fake ipcMain.
  const handlers = new Map<string, (event: IpcMainInvokeEvent, ...args: unknown[]) => Promise<unknown>>();
  const services: BridgeServices = {
    pow: {
      solve: (target, difficulty, jobId, onProgress) =>
        new Promise<string>((resolve, reject) => {
          h.pendingSolves.set(String(jobId), { resolve, reject, progress: onProgress });
        }),
      async cancel(jobId) {
        h.cancelled.push(String(jobId));
        h.pendingSolves.get(String(jobId))?.reject(new PowAbortError());
        h.pendingSolves.delete(String(jobId));
      },
    },
    keys: {
      isEncryptionAvailable: async () => h.encryption,
      async set(name, value) {
        if (!h.encryption) throw new KeyStorageUnavailableError();
        h.keys.set(name, value);
      },
      get: async (name) => h.keys.get(name) ?? null,
      async delete(name) {
        h.keys.delete(name);
      },
    },
    appInfo: () => ({
      version: '0.1.0',
      platform: 'linux',
      apiUrl: 'http://127.0.0.1:8080',
      dataDir: '/data/node',
      adminTokenFile: '/data/node/admin-token',
    }),
    setUnread: (count) => h.unread.push(count),
    setBalance: (micro) => h.balances.push(micro),
    notify: (notice) => h.notices.push(notice),
    isTrustedSender: (event) => event.senderFrame?.url.startsWith('http://127.0.0.1:8080/') === true,
  };
  h.services = services;
  registerBridgeHandlers(
    {
      handle: (channel: string, fn: (event: IpcMainInvokeEvent, ...args: unknown[]) => Promise<unknown>) => {
        h.handled.push(channel);
        handlers.set(channel, fn);
      },
      removeHandler: (channel: string) => handlers.delete(channel),
    } as never,
    services,
  );

  // Renderer side: a fake ipcRenderer wired to those handlers.
  const rendererListeners = new Map<string, ((event: unknown, ...args: unknown[]) => void)[]>();
  const sender = Object.assign(new EventEmitter(), {
    id: 7,
    destroyed: false,
    isDestroyed: () => sender.destroyed,
    send: (channel: string, ...args: unknown[]) => {
      for (const l of rendererListeners.get(channel) ?? []) l({}, ...args);
    },
  });
  h.sender = sender;
  const ipcRenderer = {
    invoke: async (channel: string, ...args: unknown[]) => {
      h.invoked.push(channel);
      const fn = handlers.get(channel);
      if (fn === undefined) throw new Error(`No handler registered for '${channel}'`);
      // IPC structured-clones arguments and results.
      const event = { sender, senderFrame: { url: h.senderFrameUrl } } as unknown as IpcMainInvokeEvent;
      return structuredClone(await fn(event, ...structuredClone(args)));
    },
    on: (channel: string, l: (event: unknown, ...args: unknown[]) => void) => {
      rendererListeners.set(channel, [...(rendererListeners.get(channel) ?? []), l]);
      return ipcRenderer;
    },
    send: () => {
      throw new Error('the preload must not send');
    },
  };
  h.ipcRenderer = ipcRenderer;
  const electron = {
    contextBridge: {
      exposeInMainWorld: (key: string, api: unknown) => h.exposed.push({ key, api }),
    },
    ipcRenderer,
  };

  const js = ts.transpileModule(PRELOAD_SOURCE, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const sandboxRequire = (name: string): unknown => {
    if (name === 'electron') return electron;
    throw new Error(`module not found: ${name}`);
  };
  const exports = {};
  compileFunction(js, ['require', 'exports', 'module'])(sandboxRequire, exports, { exports });
  h.bridge = h.exposed[0]?.api as DesktopBridge;
  return h;
}

function leaves(value: unknown, path = ''): [string, unknown][] {
  if (typeof value !== 'object' || value === null) return [[path, value]];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, path === '' ? k : `${path}.${k}`));
}

describe('the preload bridge', () => {
  let h: Harness;
  beforeEach(() => {
    h = loadPreload();
  });

  it('exposes one global, window.ledgerDesktop, with exactly the bridge functions', () => {
    expect(h.exposed.map((e) => e.key)).toEqual([BRIDGE_GLOBAL]);
    const found = leaves(h.bridge);
    expect(found.map(([p]) => p).sort()).toEqual([...EXPECTED_METHODS].sort());
    for (const [path, v] of found) expect(typeof v, path).toBe('function');
  });

  it('never hands ipcRenderer (or any of its functions) to the page', () => {
    const rendererFns = new Set(Object.values(h.ipcRenderer));
    for (const [path, v] of leaves(h.bridge)) {
      expect(v, path).not.toBe(h.ipcRenderer);
      expect(rendererFns.has(v), path).toBe(false);
    }
  });

  it('registers a main handler for every invoke channel and nothing else', () => {
    expect([...h.handled].sort()).toEqual([...INVOKE_CHANNELS].sort());
  });

  it('calls each function over the channel the list assigns it', async () => {
    const calls: [string, () => Promise<unknown>][] = [
      ['pow.cancel', () => h.bridge.pow.cancel('job-1')],
      ['keys.isEncryptionAvailable', () => h.bridge.keys.isEncryptionAvailable()],
      ['keys.set', () => h.bridge.keys.set('wallet:main', 'secret')],
      ['keys.get', () => h.bridge.keys.get('wallet:main')],
      ['keys.delete', () => h.bridge.keys.delete('wallet:main')],
      ['app.info', () => h.bridge.app.info()],
    ];
    for (const [method, call] of calls) {
      h.invoked.length = 0;
      await call();
      expect(h.invoked, method).toEqual([
        BRIDGE_METHOD_CHANNELS[method as keyof typeof BRIDGE_METHOD_CHANNELS],
      ]);
    }
    h.invoked.length = 0;
    const solving = h.bridge.pow.solve('ab'.repeat(32), 'fffff80000000000', 'job-2');
    await Promise.resolve();
    expect(h.invoked).toEqual([BRIDGE_METHOD_CHANNELS['pow.solve']]);
    h.pendingSolves.get('job-2')!.resolve('42');
    await expect(solving).resolves.toBe('42');
  });

  it('hands the unread chat count to the tray, refusing what is not a count', async () => {
    h.bridge.tray.setUnread(3);
    await new Promise((r) => setTimeout(r, 10));
    expect(h.unread).toEqual([3]);
    h.bridge.tray.setUnread(-1); // refused in main, silently for the page (a badge is not worth an error)
    h.bridge.tray.setUnread(1.5);
    await new Promise((r) => setTimeout(r, 10));
    expect(h.unread).toEqual([3]);
  });

  it('hands the balance to the tray as an exact bigint, refusing what is not micro-units', async () => {
    h.bridge.tray.setBalance('18446744073709551615');
    h.bridge.tray.setBalance(null);
    await new Promise((r) => setTimeout(r, 10));
    expect(h.balances).toEqual([18446744073709551615n, null]);
    for (const bad of ['-1', '1.5', '', '01', '1'.repeat(21)]) h.bridge.tray.setBalance(bad);
    await new Promise((r) => setTimeout(r, 10));
    expect(h.balances).toEqual([18446744073709551615n, null]);
  });

  it('passes notifications to main, which refuses control characters and floods', async () => {
    h.bridge.notify.show('Incoming: 250.5 XE', 'To Savings, from 2ca26366…5496.');
    h.bridge.notify.show('bad\ntitle', 'x');
    h.bridge.notify.show('ok', 'y'.repeat(301));
    h.bridge.notify.show('   ', 'empty title');
    await new Promise((r) => setTimeout(r, 10));
    expect(h.notices).toEqual([{ title: 'Incoming: 250.5 XE', body: 'To Savings, from 2ca26366…5496.' }]);
  });

  it('round-trips keys and app info', async () => {
    await h.bridge.keys.set('wallet:main', 'seed words');
    expect(await h.bridge.keys.get('wallet:main')).toBe('seed words');
    await h.bridge.keys.delete('wallet:main');
    expect(await h.bridge.keys.get('wallet:main')).toBeNull();
    expect(await h.bridge.app.info()).toEqual(h.services.appInfo());
  });

  it('delivers progress to the listeners of that job only, until they unsubscribe', async () => {
    const a: PowProgress[] = [];
    const b: PowProgress[] = [];
    const offA = h.bridge.pow.onProgress('job-a', (p) => a.push(p));
    h.bridge.pow.onProgress('job-b', (p) => b.push(p));
    const solving = h.bridge.pow.solve('00'.repeat(32), 'ffff000000000000', 'job-a');
    await Promise.resolve();
    const job = h.pendingSolves.get('job-a')!;
    job.progress({ attempts: '1000', expected: 65536 });
    job.progress({ attempts: '2000', expected: 65536 });
    expect(a).toEqual([
      { attempts: '1000', expected: 65536 },
      { attempts: '2000', expected: 65536 },
    ]);
    expect(b).toEqual([]);
    offA();
    job.progress({ attempts: '3000', expected: 65536 });
    expect(a).toHaveLength(2);
    job.resolve('7');
    await expect(solving).resolves.toBe('7');
  });

  it('rejects a cancelled solve with an AbortError the page can recognise from its message', async () => {
    const solving = h.bridge.pow.solve('00'.repeat(32), 'ffff000000000000', 'job-c');
    await Promise.resolve();
    await h.bridge.pow.cancel('job-c');
    const err = await solving.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.name).toBe('AbortError');
    expect(err?.message).toBe('AbortError: proof of work cancelled');
    expect(h.cancelled).toEqual(['job-c']);
  });

  it('cancels the solves of a window that goes away', async () => {
    const solving = h.bridge.pow.solve('00'.repeat(32), 'ffff000000000000', 'job-d');
    await Promise.resolve();
    h.sender.destroyed = true;
    h.sender.emit('destroyed');
    await expect(solving).rejects.toThrow(/AbortError/);
    expect(h.cancelled).toEqual(['job-d']);
  });

  it('refuses to store a key without OS protection, saying why', async () => {
    h.encryption = false;
    expect(await h.bridge.keys.isEncryptionAvailable()).toBe(false);
    const err = await h.bridge.keys.set('wallet:main', 'seed').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('KeyStorageUnavailableError');
    expect((err as Error).message).toMatch(/no secret store .* nothing was stored/);
    expect(h.keys.size).toBe(0);
  });

  it('answers any page but the node with a SecurityError', async () => {
    h.senderFrameUrl = 'https://evil.example/';
    const err = await h.bridge.app.info().catch((e: unknown) => e as Error);
    expect((err as Error).name).toBe(UNTRUSTED_SENDER_ERROR.name);
    expect((err as Error).message).toBe(`SecurityError: ${UNTRUSTED_SENDER_ERROR.message}`);
  });

  it('resolves every handler with an envelope, never a throw', async () => {
    const r = (await (h.ipcRenderer.invoke as (c: string, ...a: unknown[]) => Promise<IpcResult<unknown>>)(
      CHANNELS.keysSet,
      42,
      'x',
    )) as IpcResult<unknown>;
    expect(r).toEqual({ ok: false, error: { name: 'TypeError', message: 'name must be a string' } });
  });
});
