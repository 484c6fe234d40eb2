import { describe, expect, it } from 'vitest';
import { secureWebPreferences, windowOptions } from '../../electron/window-options.ts';
import { DEFAULT_WINDOW_STATE, MIN_SIZE } from '../../electron/window-state.ts';

describe('the app window options', () => {
  const opts = windowOptions({
    preload: '/app/dist/electron/preload.cjs',
    state: { x: 10, y: 20, width: 1000, height: 700, maximized: false },
    devTools: false,
  });
  const prefs = opts.webPreferences!;

  it('sandboxes the page, isolates its world and gives it no Node.js', () => {
    expect(prefs.sandbox).toBe(true);
    expect(prefs.contextIsolation).toBe(true);
    expect(prefs.nodeIntegration).toBe(false);
    expect(prefs.nodeIntegrationInWorker).toBe(false);
    expect(prefs.nodeIntegrationInSubFrames).toBe(false);
  });

  it('keeps web security on and every risky feature off', () => {
    expect(prefs.webSecurity).toBe(true);
    expect(prefs.allowRunningInsecureContent).toBe(false);
    expect(prefs.webviewTag).toBe(false);
    expect(prefs.experimentalFeatures).toBe(false);
    expect(prefs.navigateOnDragDrop).toBe(false);
    expect(prefs).not.toHaveProperty('enableBlinkFeatures');
    // The remote module is long gone from Electron; nothing may try to turn it back on.
    expect(prefs).not.toHaveProperty('enableRemoteModule');
    expect(prefs.devTools).toBe(false);
  });

  it('loads the built preload and nothing else', () => {
    expect(prefs.preload).toBe('/app/dist/electron/preload.cjs');
    expect(Object.keys(prefs).sort()).toEqual(
      [
        'allowRunningInsecureContent',
        'contextIsolation',
        'devTools',
        'experimentalFeatures',
        'navigateOnDragDrop',
        'nodeIntegration',
        'nodeIntegrationInSubFrames',
        'nodeIntegrationInWorker',
        'preload',
        'safeDialogs',
        'sandbox',
        'spellcheck',
        'webSecurity',
        'webviewTag',
      ].sort(),
    );
  });

  it('opens at the remembered place, hidden until ready, no smaller than the minimum', () => {
    expect(opts).toMatchObject({ x: 10, y: 20, width: 1000, height: 700, show: false });
    expect(opts.minWidth).toBe(MIN_SIZE.width);
    expect(opts.minHeight).toBe(MIN_SIZE.height);
    expect(opts.title).toBe('Ledger Node Desktop');
  });

  it('centers the window when no position is known', () => {
    const o = windowOptions({ preload: '/p.cjs', state: { ...DEFAULT_WINDOW_STATE }, devTools: true });
    expect(o.center).toBe(true);
    expect(o.x).toBeUndefined();
    expect(o.webPreferences!.devTools).toBe(true);
  });

  it('gives windows the page opens the same preferences', () => {
    expect(secureWebPreferences('/p.cjs', false)).toEqual({ ...prefs, preload: '/p.cjs' });
  });
});
