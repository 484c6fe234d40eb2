/**
 * Desktop notifications the page asks for (incoming funds): the main process shows them, because
 * the window's page has no notification permission (navigation.ts refuses every web permission).
 * The page is trusted (the IPC sender check), but what crosses IPC is still checked: short plain
 * text, no control characters, so a notification can neither flood the screen nor break a line.
 */
export interface DesktopNotice {
  title: string;
  body: string;
}

export const MAX_NOTICE_TITLE = 100;
export const MAX_NOTICE_BODY = 300;

function clean(v: unknown, what: string, max: number): string {
  if (typeof v !== 'string') throw new TypeError(`the notification's ${what} must be text`);
  const t = v.trim();
  if (t === '' && what === 'title') throw new TypeError(`the notification's title is empty`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(t))
    throw new TypeError(`the notification's ${what} has control characters`);
  if ([...t].length > max) throw new TypeError(`the notification's ${what} is longer than ${max} characters`);
  return t;
}

export function checkNotice(title: unknown, body: unknown): DesktopNotice {
  return { title: clean(title, 'title', MAX_NOTICE_TITLE), body: clean(body, 'body', MAX_NOTICE_BODY) };
}

/** The page's notices are for a person who is not looking: none while the window is in front. */
export function shouldShowNotice(windowInFront: boolean): boolean {
  return !windowInFront;
}
