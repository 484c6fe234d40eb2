import { useEffect } from 'react';
import { addressFromPublicKey } from '../../../node-core/protocol/keys.ts';
import { desktopBridge } from '../bridge.ts';
import type { AccountInfo } from '../keystore/index.ts';
import { navigate } from '../router.ts';
import { contacts } from '../settings.ts';
import { short } from '../components/common.tsx';
import { notifyIncoming } from './notify.ts';
import { keepRegistered } from './registration.ts';
import { registerAccounts } from './directory.ts';
import { followAccount } from './events.ts';
import { clearLinks } from './link.ts';
import { chatState, safeUnread, useChatState } from './state.ts';

/** The page title with the unread count in front: "(3) Ledger Node". */
function withCount(title: string, unread: number): string {
  const base = title.replace(/^\(\d+\) /, '');
  return unread > 0 ? `(${unread}) ${base}` : base;
}

/**
 * Runs while the keystore is unlocked: registers the accounts in the directory and renews them
 * before the TTL, follows each account's event stream, notifies incoming messages, and puts the
 * unread count on the tray (desktop app) and in the page title.
 */
export function ChatRunner({ accounts }: { accounts: readonly AccountInfo[] }) {
  const addresses = accounts.map((a) => a.address).join(',');

  useEffect(() => {
    const list = addresses.split(',').filter((a) => a !== '');
    return keepRegistered(() => registerAccounts(list));
  }, [addresses]);

  useEffect(() => {
    const ctl = new AbortController();
    for (const address of addresses.split(',').filter((a) => a !== '')) {
      void followAccount(address, ctl.signal, (m) => {
        const from = addressFromPublicKey(m.from);
        const name = contacts.get().find((c) => c.address === from)?.name ?? short(from);
        notifyIncoming(`Message from ${name}`, m.message, () => navigate('chat', address, m.from));
      });
    }
    return () => {
      ctl.abort();
      chatState().clear();
      clearLinks();
    };
  }, [addresses]);

  const state = useChatState();
  const unread = accounts.reduce((n, a) => n + safeUnread(state, a.address), 0);
  useEffect(() => {
    desktopBridge()?.tray.setUnread(unread);
    document.title = withCount(document.title, unread);
  }, [unread]);
  // Locked: nothing to count (and nothing to show about the accounts).
  useEffect(
    () => () => {
      desktopBridge()?.tray.setUnread(0);
      document.title = withCount(document.title, 0);
    },
    [],
  );
  return null;
}
