import type { BrowserWindowConstructorOptions, NativeImage, WebPreferences } from 'electron';
import { MIN_SIZE, type WindowState } from './window-state.ts';

/**
 * The app window's options. Pure (types only from electron), so the security settings are unit-tested:
 * the page runs sandboxed, in its own JavaScript world, without Node.js, with web security on; its
 * only way to the main process is the preload's bridge.
 */
export const APP_TITLE = 'Ledger Node Desktop';

/** webPreferences for every window showing the GUI (the main one and any same-origin window.open). */
export function secureWebPreferences(preload: string, devTools: boolean): WebPreferences {
  return {
    preload,
    sandbox: true,
    contextIsolation: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    experimentalFeatures: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
    devTools,
  };
}

export interface WindowOptionsInput {
  /** Absolute path of the built preload (dist/electron/preload.cjs). */
  preload: string;
  /** Size and position to open at (from fitWindowState). */
  state: WindowState;
  /** DevTools available (development builds only). */
  devTools: boolean;
  icon?: NativeImage | string;
}

export function windowOptions(input: WindowOptionsInput): BrowserWindowConstructorOptions {
  const { state } = input;
  return {
    title: APP_TITLE,
    width: state.width,
    height: state.height,
    ...(state.x !== undefined && state.y !== undefined ? { x: state.x, y: state.y } : { center: true }),
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    // Shown on ready-to-show: no white flash while the GUI loads.
    show: false,
    backgroundColor: '#101418',
    autoHideMenuBar: true,
    ...(input.icon === undefined ? {} : { icon: input.icon }),
    webPreferences: secureWebPreferences(input.preload, input.devTools),
  };
}
