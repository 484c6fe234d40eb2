/**
 * The desktop bridge: the few functions the Electron preload exposes to the renderer through
 * `contextBridge` as `window.ledgerDesktop`. Only types live here (shared by electron/preload.ts,
 * which implements them, and the renderer, which uses them when present). In a plain browser the
 * bridge is absent and the renderer uses its own implementations (a Web Worker for proof of work,
 * the encrypted keystore in browser storage).
 */

/** Progress of a proof-of-work search. */
export interface PowProgress {
  /** Attempts so far, as a decimal string (a u64). */
  attempts: string;
  /** Expected attempts at this difficulty (a float, for a progress bar). */
  expected: number;
}

export interface DesktopPow {
  /**
   * Solves proof of work for a 32-byte target (hex) at a difficulty (16 hex digits). Resolves with
   * the nonce as a decimal string; rejects with an Error named 'AbortError' when cancelled.
   */
  solve(targetHex: string, difficultyHex: string, jobId: string): Promise<string>;
  /** Cancels a running solve by its job id. */
  cancel(jobId: string): Promise<void>;
  /** Subscribes to progress of a job; returns an unsubscribe function. */
  onProgress(jobId: string, listener: (p: PowProgress) => void): () => void;
}

export interface DesktopKeyStorage {
  /** True when the OS can protect secrets (safeStorage); false on Linux without a keyring. */
  isEncryptionAvailable(): Promise<boolean>;
  /** Stores a small secret under a name, wrapped with safeStorage. */
  set(name: string, value: string): Promise<void>;
  get(name: string): Promise<string | null>;
  delete(name: string): Promise<void>;
}

export interface DesktopAppInfo {
  version: string;
  platform: string;
  /** The node's API base URL, e.g. http://127.0.0.1:8080 */
  apiUrl: string;
  dataDir: string;
  adminTokenFile: string | null;
}

export interface DesktopBridge {
  pow: DesktopPow;
  keys: DesktopKeyStorage;
  app: { info(): Promise<DesktopAppInfo> };
  tray: {
    /** The tray's (and the dock or taskbar badge's) unread chat count. */
    setUnread(count: number): void;
    /**
     * The XE of the unlocked accounts, in micro-units as a digit string, for the tray's tooltip and
     * menu; null while locked (the tray then shows no balance).
     */
    setBalance(microXe: string | null): void;
  };
  /**
   * A desktop notification (incoming funds): shown by the main process, which alone may, and only
   * while the window is not in front; a click brings the window.
   */
  notify: { show(title: string, body: string): void };
}

/** Name of the global the preload defines. */
export const BRIDGE_GLOBAL = 'ledgerDesktop';
