/**
 * The desktop notification of new chat messages. The window's page may not show notifications
 * itself (every web permission is refused, navigation.ts), so the main process shows one when the
 * unread count the page reports (tray.setUnread) goes up while the window is not in front.
 */

/** The notification's text when one is due, else undefined. */
export function unreadNotice(before: number, after: number, windowInFront: boolean): string | undefined {
  if (after <= before || windowInFront) return undefined;
  const fresh = after - before;
  const news = fresh === 1 ? 'A new chat message' : `${fresh.toLocaleString('en-US')} new chat messages`;
  return after === fresh ? news : `${news} (${after.toLocaleString('en-US')} unread)`;
}
