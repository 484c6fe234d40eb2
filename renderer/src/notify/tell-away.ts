import { toast, type ToastInput } from '../activity/toasts.ts';
import { desktopBridge } from '../bridge.ts';
import { notificationsSupported } from '../chat/notify.ts';

/**
 * An event the person should hear of (incoming funds, a lease running out): a notice in the window,
 * and a desktop notification for when they are not looking: through the desktop app's main process
 * (which shows it only while the window is not in front), or the browser's Notification once allowed
 * and while the page is hidden. A click on the browser's notification opens `href`.
 */
export function tellAway(
  title: string,
  body: string,
  href: string,
  opts: { linkLabel?: string; tag?: string; toast?: Partial<ToastInput> } = {},
): void {
  toast({
    tone: 'info',
    text: `${title}. ${body}`,
    link: { label: opts.linkLabel ?? 'Open', href },
    timeoutMs: 12_000,
    ...opts.toast,
  });
  const bridge = desktopBridge();
  if (bridge) bridge.notify.show(title, body);
  else if (notificationsSupported() && Notification.permission === 'granted' && document.hidden) {
    const n = new Notification(title, { body, ...(opts.tag ? { tag: opts.tag } : {}) });
    n.onclick = () => {
      window.focus();
      window.location.hash = href;
      n.close();
    };
  }
}
