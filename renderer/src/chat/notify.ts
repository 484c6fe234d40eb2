import { desktopBridge } from '../bridge.ts';

/**
 * Desktop notifications of incoming chat messages: in the desktop app when the window is not
 * focused, in a browser when the page is hidden and the user allowed them (asked once, from a
 * click, as browsers require).
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

/** Whether a message arriving now deserves a notification: the user is not looking at the app. */
export function userAway(): boolean {
  return desktopBridge() ? !document.hasFocus() : document.hidden;
}

export function notifyIncoming(title: string, body: string, onClick: () => void): void {
  if (!notificationsSupported() || Notification.permission !== 'granted' || !userAway()) return;
  // Long messages are cut: a notification is a glance, the page has the rest.
  const n = new Notification(title, {
    body: body.length > 140 ? `${body.slice(0, 139)}…` : body,
    tag: title,
  });
  n.onclick = () => {
    window.focus();
    onClick();
    n.close();
  };
}
