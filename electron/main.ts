/**
 * The Electron main process: runs the ledger node (node-core's LedgerNode, the same as the CLI) on
 * `<appData>/node`, shows the GUI the node serves at `/ui/` in one locked-down window, implements
 * the preload's bridge (proof of work in a utility process, keys under safeStorage, app info), and
 * keeps a tray icon with the node's state. Quitting stops the node cleanly, once.
 *
 * Thin on purpose: the rules live in small modules that tests exercise without Electron
 * (window-options, csp, navigation, window-state, channels, ipc, key-store, pow-host, pow-service,
 * tray-status, node-host).
 */
import { isPrimaryInstance } from './app-setup.ts';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  nativeImage,
  Notification,
  safeStorage,
  screen,
  session,
  shell,
  utilityProcess,
} from 'electron';
import type { Session, WebContents } from 'electron';
import { DEFAULT_PROVIDE } from '../node-core/leasing/provider/policy.ts';
import type { LedgerNode } from '../node-core/node.ts';
import { desktopCsp, withCsp } from './csp.ts';
import { paymentLinkUrl, paymentUriFromArgv, protocolClientArgs } from './deep-link.ts';
import { iconPng } from './icon.ts';
import { registerBridgeHandlers } from './ipc.ts';
import { KEY_STORE_FILE, KeyStore, type SecretCipher } from './key-store.ts';
import { mainLogger } from './main-log.ts';
import { shouldShowNotice } from './notice.ts';
import { decideNavigation, isNodeUrl, originOf, permissionAllowed } from './navigation.ts';
import { desktopVerifyThreads, startDesktopNode } from './node-host.ts';
import { PowHost, type PowProcess } from './pow-host.ts';
import { StatusTray } from './tray.ts';
import { unreadNotice } from './unread-notice.ts';
import { secureWebPreferences, windowOptions } from './window-options.ts';
import {
  fitWindowState,
  loadWindowState,
  saveWindowState,
  WINDOW_STATE_FILE,
  type WindowState,
} from './window-state.ts';
import { openWindowSession } from './window-session.ts';

// Built files next to this one (dist/electron/): the preload is CommonJS, see preload.cts.
const PRELOAD = fileURLToPath(new URL('./preload.cjs', import.meta.url));
const POW_UTILITY = fileURLToPath(new URL('./pow-utility.js', import.meta.url));

if (!isPrimaryInstance) {
  app.quit();
} else {
  run();
}

function run(): void {
  const userData = app.getPath('userData');
  const log = mainLogger(join(userData, 'logs', 'main.log'), process.env.LEDGER_NODE_LOG_LEVEL ?? 'info');
  const devTools = !app.isPackaged;
  const stateFile = join(userData, WINDOW_STATE_FILE);
  // Packaged apps take their icon from the installer; this one shows in development (Linux, Windows).
  const windowIcon = nativeImage.createFromBuffer(iconPng(256));

  let node: LedgerNode | undefined;
  let win: BrowserWindow | undefined;
  /** The unread chat count the page last reported (a rise notifies). */
  let unreadCount = 0;
  let tray: StatusTray | undefined;
  let quit: 'running' | 'stopping' | 'done' = 'running';

  const pow = new PowHost((): PowProcess => {
    const child = utilityProcess.fork(POW_UTILITY, [], {
      serviceName: 'Ledger Node proof of work',
      stdio: 'inherit',
    });
    return {
      post: (m) => child.postMessage(m),
      onMessage: (l) => void child.on('message', l),
      onExit: (l) => void child.on('exit', l),
      kill: () => void child.kill(),
    };
  });

  const cipher: SecretCipher = {
    async available() {
      // Without a keyring Linux "encrypts" with a hard-coded key: that protects nothing.
      if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text')
        return false;
      return safeStorage.isAsyncEncryptionAvailable();
    },
    encrypt: (plain) => safeStorage.encryptStringAsync(plain),
    async decrypt(data) {
      const r = await safeStorage.decryptStringAsync(Buffer.from(data));
      return { value: r.result, stale: r.shouldReEncrypt };
    },
  };
  const keys = new KeyStore(join(userData, KEY_STORE_FILE), cipher);

  const nodeReady: Promise<LedgerNode> = app.whenReady().then(() =>
    startDesktopNode({
      dataDir: join(userData, 'node'),
      uiDir: join(app.getAppPath(), 'renderer', 'dist'),
      verifyThreads: desktopVerifyThreads(),
      // The development network provides where a VM driver works (decisions D9).
      provide: { ...DEFAULT_PROVIDE },
      vm: { driver: 'auto' },
      logger: log,
    }),
  );

  async function shutdown(): Promise<void> {
    tray?.set({ kind: 'stopping' });
    await pow.stop();
    const n = await nodeReady.catch(() => undefined);
    try {
      await n?.stop();
      log.info('node stopped');
    } catch (err) {
      log.error({ err }, 'node stop failed');
    }
    tray?.destroy();
    log.flush();
  }

  // Registered before anything starts, so a quit during start-up still stops the node.
  app.on('before-quit', (event) => {
    if (quit === 'done') return;
    event.preventDefault();
    if (quit === 'stopping') return;
    quit = 'stopping';
    void shutdown().finally(() => {
      quit = 'done';
      app.quit();
    });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => app.quit());
  app.on('window-all-closed', () => {
    // macOS apps stay in the dock (and here in the tray) until Quit.
    if (process.platform !== 'darwin') app.quit();
  });
  // A payment link the window has not opened yet (it came before the node or the window was ready);
  // a first start by a link (Windows, Linux) has it in argv.
  let pendingLink: string | undefined = paymentUriFromArgv(process.argv);
  const openPaymentLink = (uri: string): void => {
    pendingLink = uri;
    if (node === undefined || quit !== 'running') return; // the first window opens it
    if (win === undefined || win.isDestroyed()) return showWindow(); // createWindow takes it
    pendingLink = undefined;
    const url = paymentLinkUrl(`${node.url}/ui/`, uri);
    // Same document, another hash: the page's router opens the send form (renderer/src/deeplink/).
    if (url !== undefined) void win.loadURL(url);
    showWindow();
  };
  app.on('second-instance', (_event, argv) => {
    const uri = paymentUriFromArgv(argv);
    if (uri !== undefined) openPaymentLink(uri);
    else showWindow();
  });
  // macOS hands links to the running app (registered before ready: a link may have started it).
  app.on('open-url', (event, url) => {
    event.preventDefault();
    openPaymentLink(url);
  });
  app.on('activate', () => showWindow());

  nodeReady.then(
    (n) => {
      node = n;
      log.info({ url: n.url, ui: n.uiUrl ?? null }, 'node ready');
      if (quit !== 'running') return; // quitting during start-up: shutdown() stops it
      const origin = new URL(n.url).origin;
      hardenSession(session.defaultSession, origin);
      registerPaymentLinks();
      // Before the first window exists: every page (and any window it opens) is guarded.
      app.on('web-contents-created', (_event, contents) => guardContents(contents, origin));
      registerBridgeHandlers(ipcMain, {
        pow,
        keys,
        appInfo: () => ({
          version: app.getVersion(),
          platform: process.platform,
          apiUrl: n.url,
          dataDir: n.dataDir,
          adminTokenFile: n.adminTokenFile ?? null,
        }),
        setUnread: (count) => {
          tray?.setUnread(count);
          // The dock (macOS) or launcher (Unity) badge; a no-op where the desktop has none.
          app.setBadgeCount(count);
          const inFront = win !== undefined && !win.isDestroyed() && win.isVisible() && win.isFocused();
          const notice = unreadNotice(unreadCount, count, inFront);
          unreadCount = count;
          if (notice !== undefined && Notification.isSupported()) {
            const n = new Notification({ title: 'Ledger Node Desktop', body: notice });
            n.on('click', showWindow);
            n.show();
          }
        },
        setBalance: (microXe) => tray?.setBalance(microXe),
        notify: (notice) => {
          const inFront = win !== undefined && !win.isDestroyed() && win.isVisible() && win.isFocused();
          if (!shouldShowNotice(inFront) || !Notification.isSupported()) return;
          const shown = new Notification({ title: notice.title, body: notice.body });
          shown.on('click', showWindow);
          shown.show();
        },
        isTrustedSender: (event) => {
          try {
            const url = event.senderFrame?.url;
            return url !== undefined && isNodeUrl(url, origin);
          } catch {
            return false; // a frame gone mid-call
          }
        },
      });
      try {
        tray = new StatusTray({ apiUrl: n.url, onShow: showWindow, onQuit: () => app.quit() });
      } catch (err) {
        log.warn({ err }, 'no tray icon on this desktop');
      }
      showWindow();
    },
    (err: unknown) => {
      log.error({ err }, 'node failed to start');
      log.flush();
      if (quit !== 'running') return;
      dialog.showErrorBox('Ledger Node Desktop could not start its node', (err as Error).message);
      quit = 'done';
      app.exit(1);
    },
  );

  function showWindow(): void {
    if (node === undefined || quit !== 'running') return;
    if (win === undefined || win.isDestroyed()) {
      win = createWindow(node);
      return;
    }
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  }

  /** The window's first page: the GUI, or the send form of a payment link that came meanwhile. */
  function firstUrl(n: LedgerNode): string {
    const link = pendingLink === undefined ? undefined : paymentLinkUrl(`${n.url}/ui/`, pendingLink);
    pendingLink = undefined;
    return link ?? `${n.url}/ui/`;
  }

  /**
   * xe: links from other programs open here (the installer registers it too; this covers
   * development runs and a moved app). Run from source, Electron needs the app's entry.
   */
  function registerPaymentLinks(): void {
    const entry = process.argv[1] === undefined ? undefined : resolve(process.argv[1]);
    const [scheme, path, args] = protocolClientArgs(process.defaultApp === true, process.execPath, entry);
    const ok =
      path === undefined
        ? app.setAsDefaultProtocolClient(scheme)
        : app.setAsDefaultProtocolClient(scheme, path, args);
    if (!ok) log.warn('could not register as the handler of xe: payment links');
  }

  function createWindow(n: LedgerNode): BrowserWindow {
    const primary = screen.getPrimaryDisplay();
    const areas = [primary, ...screen.getAllDisplays().filter((d) => d.id !== primary.id)].map(
      (d) => d.workArea,
    );
    const state = fitWindowState(loadWindowState(stateFile), areas);
    const w = new BrowserWindow(windowOptions({ preload: PRELOAD, state, devTools, icon: windowIcon }));
    if (state.maximized) w.maximize();
    w.once('ready-to-show', () => w.show());
    w.on('close', () => {
      const b = w.getNormalBounds();
      const saved: WindowState = {
        x: b.x,
        y: b.y,
        width: b.width,
        height: b.height,
        maximized: w.isMaximized(),
      };
      const err = saveWindowState(stateFile, saved);
      if (err !== undefined) log.warn({ err }, 'could not save the window position');
    });
    w.webContents.on('did-fail-load', (_e, code, description, url) =>
      log.error({ code, description, url }, 'the window failed to load'),
    );
    w.webContents.on('render-process-gone', (_e, details) =>
      log.error({ details }, 'the renderer process is gone'),
    );
    // The session cookie first: the window then opens the wallet the node keeps.
    void openWindowSession(session.defaultSession, n.url, n.adminToken)
      .catch((err: Error) => log.warn({ err: err.message }, 'could not open the window session'))
      .then(() => w.loadURL(firstUrl(n)));
    return w;
  }

  /** CSP on every response, and permissions refused but for the node page's clipboard writes. */
  function hardenSession(ses: Session, origin: string): void {
    const policy = desktopCsp(origin);
    ses.webRequest.onHeadersReceived((details, callback) => {
      callback({ responseHeaders: withCsp(details.responseHeaders, policy) });
    });
    ses.setPermissionRequestHandler((_contents, permission, callback, details) => {
      callback(permissionAllowed(permission, details.requestingUrl, origin));
    });
    ses.setPermissionCheckHandler((_contents, permission, requestingOrigin) =>
      permissionAllowed(permission, requestingOrigin, origin),
    );
  }

  /** Navigation and new windows: the node's origin only; other http(s) links go to the browser. */
  function guardContents(contents: WebContents, origin: string): void {
    const openExternal = (url: string): void => {
      shell.openExternal(url).catch((err: unknown) => log.warn({ err, url }, 'could not open a link'));
    };
    contents.on('will-navigate', (event) => {
      const decision = decideNavigation(event.url, origin);
      if (decision === 'allow') return;
      event.preventDefault();
      if (decision === 'open-external') openExternal(event.url);
      else log.warn({ url: event.url }, 'navigation refused');
    });
    contents.on('will-redirect', (event) => {
      if (originOf(event.url) !== origin) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      const decision = decideNavigation(url, origin);
      if (decision === 'allow') {
        return {
          action: 'allow',
          overrideBrowserWindowOptions: { webPreferences: secureWebPreferences(PRELOAD, devTools) },
        };
      }
      if (decision === 'open-external') openExternal(url);
      return { action: 'deny' };
    });
  }
}
