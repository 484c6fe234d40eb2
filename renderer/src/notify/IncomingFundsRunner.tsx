import { useEffect, useRef } from 'react';
import { desktopBridge } from '../bridge.ts';
import { askPermission, mayAskPermission } from '../chat/notify.ts';
import type { AccountInfo } from '../keystore/index.ts';
import { contacts } from '../settings.ts';
import { useBalancesMany, usePendingMany } from '../wallet/queries.ts';
import { arrivalNotice, ArrivalTracker } from './incoming.ts';
import { tellAway } from './tell-away.ts';
import { totalMicro } from './tray-balance.ts';

/**
 * While the wallet is unlocked: tells of incoming funds (a new pending send to one of the accounts)
 * with a notice in the window and, when the person is not looking, a desktop notification (through
 * the desktop app's main process, or the browser's Notification once allowed); and keeps the desktop
 * tray's balance. Reads the same queries as the wallet page: no extra requests.
 */
export function IncomingFundsRunner({ accounts }: { accounts: readonly AccountInfo[] }) {
  const addresses = accounts.map((a) => a.address);
  const pending = usePendingMany(addresses);
  const balances = useBalancesMany(addresses);
  const tracker = useRef(new ArrivalTracker());
  const labels = useRef(new Map<string, string>());
  labels.current = new Map(accounts.map((a) => [a.address, a.label]));

  const stamp = pending.map((p) => p.dataUpdatedAt).join(',');
  useEffect(() => {
    const arrivals = addresses.flatMap((a, i) => {
      const data = pending[i]?.data;
      return data === undefined ? [] : tracker.current.update(a, data);
    });
    const book = contacts.get();
    const notice = arrivalNotice(
      arrivals,
      (a) => labels.current.get(a) ?? a.slice(0, 8),
      (a) => book.find((c) => c.address === a)?.name,
    );
    if (notice === undefined) return;
    const ask = mayAskPermission();
    tellAway(notice.title, notice.body, '#/wallet', {
      linkLabel: 'Open the wallet',
      tag: 'incoming-funds',
      ...(ask
        ? { toast: { action: { label: 'Notify me when away', run: () => void askPermission() } } }
        : {}),
    });
  }, [stamp]);

  // The desktop tray's balance: the XE of every account, once all are known; none once locked.
  const xe = totalMicro(balances.map((b) => b.data?.balances.XE ?? (b.data ? 0n : undefined)));
  const xeText = xe?.toString();
  useEffect(() => {
    const bridge = desktopBridge();
    if (!bridge || xeText === undefined) return;
    bridge.tray.setBalance(xeText);
  }, [xeText]);
  useEffect(() => () => desktopBridge()?.tray.setBalance(null), []);

  return null;
}
