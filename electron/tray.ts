import { Menu, nativeImage, Tray } from 'electron';
import type { NativeImage } from 'electron';
import { iconPng } from './icon.ts';
import {
  balanceLine,
  fetchNodeStatus,
  statusLine,
  trayColor,
  type TrayState,
  unreadLine,
} from './tray-status.ts';

/**
 * The tray icon: its colour and first menu line show the node's state (network, blocks, peers,
 * refreshed every few seconds from the node's API); the tooltip and menu show the unlocked
 * accounts' balance and the unread chat messages (both reported by the page); the menu shows the
 * window or quits.
 */
export interface StatusTrayOptions {
  apiUrl: string;
  onShow(): void;
  onQuit(): void;
  intervalMs?: number;
}

const TRAY_PT = 16;

function trayIcon(state: TrayState): NativeImage {
  // Drawn at 2x: sharp on high-density screens, 16 points everywhere.
  return nativeImage.createFromBuffer(iconPng(TRAY_PT * 2, trayColor(state)), { scaleFactor: 2 });
}

export class StatusTray {
  readonly #tray: Tray;
  readonly #opts: StatusTrayOptions;
  readonly #timer: ReturnType<typeof setInterval>;
  #state: TrayState = { kind: 'starting' };
  #unread = 0;
  #balance: bigint | null = null;
  #colorKey = '';
  #destroyed = false;

  constructor(opts: StatusTrayOptions) {
    this.#opts = opts;
    this.#tray = new Tray(trayIcon(this.#state));
    this.#tray.on('click', () => opts.onShow());
    this.#render();
    this.#timer = setInterval(() => void this.refresh(), opts.intervalMs ?? 5000);
    void this.refresh();
  }

  async refresh(): Promise<void> {
    let next: TrayState;
    try {
      next = { kind: 'running', status: await fetchNodeStatus(this.#opts.apiUrl) };
    } catch (e) {
      next = { kind: 'unreachable', reason: (e as Error).message };
    }
    if (this.#state.kind !== 'stopping') this.set(next);
  }

  /** Unread chat messages, in the tooltip and the menu (0 hides the line). */
  setUnread(count: number): void {
    if (count === this.#unread) return;
    this.#unread = count;
    this.#render();
  }

  /** The unlocked accounts' XE in micro-units; null while locked (no balance line). */
  setBalance(microXe: bigint | null): void {
    if (microXe === this.#balance) return;
    this.#balance = microXe;
    this.#render();
  }

  set(state: TrayState): void {
    this.#state = state;
    this.#render();
  }

  #render(): void {
    if (this.#destroyed) return;
    const line = statusLine(this.#state);
    const colorKey = trayColor(this.#state).join(',');
    if (colorKey !== this.#colorKey) {
      this.#tray.setImage(trayIcon(this.#state));
      this.#colorKey = colorKey;
    }
    const unread = unreadLine(this.#unread);
    const balance = balanceLine(this.#balance);
    const extra = [balance, unread].filter((l) => l !== '');
    this.#tray.setToolTip(`Ledger Node Desktop: ${[line, ...extra].join('; ')}`);
    // The count beside the icon in the macOS menu bar (other desktops show no tray text).
    if (process.platform === 'darwin') this.#tray.setTitle(this.#unread > 0 ? String(this.#unread) : '');
    // Linux needs the whole menu set again for a label to change.
    this.#tray.setContextMenu(
      Menu.buildFromTemplate([
        { label: line, enabled: false },
        ...(balance ? [{ label: balance, click: () => this.#opts.onShow() }] : []),
        ...(unread ? [{ label: unread, click: () => this.#opts.onShow() }] : []),
        { type: 'separator' },
        { label: 'Show window', click: () => this.#opts.onShow() },
        { label: 'Quit', click: () => this.#opts.onQuit() },
      ]),
    );
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    clearInterval(this.#timer);
    this.#tray.destroy();
  }
}
