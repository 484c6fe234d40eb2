import { describe, expect, it } from 'vitest';
import { notificationBody, shouldNotify } from '../../renderer/src/chat/notify.ts';
import { unreadLine } from '../../electron/tray-status.ts';
import { unreadNotice } from '../../electron/unread-notice.ts';

/** When an incoming message is notified, what the notification says, and the tray's unread line. */
describe('chat notifications', () => {
  const base = { permission: 'granted' as const, desktop: false, focused: true, hidden: false };

  it('in a browser: only when allowed and the page is hidden', () => {
    expect(shouldNotify({ ...base, hidden: true })).toBe(true);
    expect(shouldNotify({ ...base, hidden: false, focused: false })).toBe(false);
    expect(shouldNotify({ ...base, hidden: true, permission: 'default' })).toBe(false);
    expect(shouldNotify({ ...base, hidden: true, permission: 'denied' })).toBe(false);
  });

  it('in the desktop app: never from the page; main notifies when the unread count rises out of sight', () => {
    const desk = { ...base, desktop: true };
    expect(shouldNotify({ ...desk, focused: false, hidden: true })).toBe(false);
    expect(unreadNotice(0, 1, false)).toBe('A new chat message');
    expect(unreadNotice(2, 5, false)).toBe('3 new chat messages (5 unread)');
    expect(unreadNotice(0, 1, true)).toBeUndefined(); // the window is in front
    expect(unreadNotice(5, 2, false)).toBeUndefined(); // read elsewhere: nothing new
    expect(unreadNotice(3, 3, false)).toBeUndefined();
  });

  it('cuts a long message to 140 characters, never inside a character', () => {
    expect(notificationBody('short')).toBe('short');
    const long = '😀'.repeat(200);
    const cut = notificationBody(long);
    expect([...cut]).toHaveLength(140);
    expect(cut.endsWith('😀…')).toBe(true);
  });

  it('the tray says how many messages are unread, nothing at none', () => {
    expect(unreadLine(0)).toBe('');
    expect(unreadLine(1)).toBe('1 unread message');
    expect(unreadLine(12)).toBe('12 unread messages');
  });
});
