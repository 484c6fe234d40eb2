import { desktopBridge } from '../bridge.ts';

/**
 * Notifications of incoming chat messages in a browser: when the page is hidden and the user
 * allowed them (asked once, from a click, as browsers require). The desktop app refuses web
 * permissions to its page; there the main process notifies when the unread count it is given
 * (tray.setUnread) rises while the window is not in front (electron/unread-notice.ts).
 */

export function notificationsSupported(): boolean {
  return typeof Notification !== 'undefined';
}

/** Whether a browser user should be offered to turn them on (never asked yet). */
export function mayAskPermission(): boolean {
  return notificationsSupported() && !desktopBridge() && Notification.permission === 'default';
}

export async function askPermission(): Promise<NotificationPermission | undefined> {
  if (!notificationsSupported()) return undefined;
  return Notification.requestPermission();
}

export interface Surroundings {
  permission: NotificationPermission | undefined;
  /** The desktop app (its window), or a browser tab. */
  desktop: boolean;
  focused: boolean;
  hidden: boolean;
}

/**
 * Whether a message arriving now deserves a notification from the page: allowed, in a browser (the
 * desktop app's main process notifies instead, never twice), and the page hidden (a visible tab
 * beside another window is still seen).
 */
export function shouldNotify(s: Surroundings): boolean {
  return s.permission === 'granted' && !s.desktop && s.hidden;
}

/** A notification is a glance: the first 140 characters, the page has the rest. */
export function notificationBody(text: string): string {
  const chars = [...text];
  return chars.length > 140 ? `${chars.slice(0, 139).join('')}…` : text;
}

export function notifyIncoming(title: string, body: string, onClick: () => void): void {
  if (!notificationsSupported()) return;
  const now: Surroundings = {
    permission: Notification.permission,
    desktop: desktopBridge() !== undefined,
    focused: document.hasFocus(),
    hidden: document.hidden,
  };
  if (!shouldNotify(now)) return;
  // One per conversation at a time: a newer message replaces the older one's notification.
  const n = new Notification(title, { body: notificationBody(body), tag: title });
  n.onclick = () => {
    window.focus();
    onClick();
    n.close();
  };
}
