import { BRIDGE_GLOBAL, type DesktopBridge } from '../../node-core/client/bridge.ts';

/** The Electron preload's bridge, when this page runs in the desktop app; undefined in a browser. */
export function desktopBridge(): DesktopBridge | undefined {
  const b = (globalThis as Record<string, unknown>)[BRIDGE_GLOBAL];
  return typeof b === 'object' && b !== null ? (b as DesktopBridge) : undefined;
}
