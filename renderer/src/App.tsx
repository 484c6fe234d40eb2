import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useRef } from 'react';
import { Loading } from './components/common.tsx';
import { PowPanel } from './components/PowPanel.tsx';
import { Toaster } from './activity/Toaster.tsx';
import { Sidebar } from './components/Sidebar.tsx';
import { StatusBar } from './components/StatusBar.tsx';
import { desktopBridge } from './bridge.ts';
import { keystore, useKeystore, type AccountInfo } from './keystore/index.ts';
import { ContactsPage } from './pages/Contacts.tsx';
import { Onboarding } from './pages/Onboarding.tsx';
import { Unlock } from './pages/Unlock.tsx';
import { WalletPage } from './pages/Wallet.tsx';
import { powEngine } from './pow/engine.ts';
import { useRoute } from './router.ts';
import { applyTheme, settings } from './settings.ts';
import { accountWriter } from './wallet/context.ts';
import { invalidateAccounts, usePendingMany } from './wallet/queries.ts';
import { groupedUnits } from './components/common.tsx';
import { usePaymentLinkRoute } from './deeplink/payment-link.ts';
import { ShortcutsHelp } from './shortcuts/ShortcutsHelp.tsx';
import { useShortcuts } from './shortcuts/useShortcuts.ts';

// Pages not needed for the first screen load on demand.
const ExplorerPage = lazy(() => import('./pages/Explorer.tsx'));
const NodePage = lazy(() => import('./pages/Node.tsx'));
const SettingsPage = lazy(() => import('./pages/Settings.tsx'));
const LeasingPage = lazy(() => import('./pages/Leasing.tsx'));
const ChatPage = lazy(() => import('./pages/Chat.tsx'));
// Chat in the background: directory registration, the accounts' event streams, unread counts.
const ChatRunner = lazy(() => import('./chat/ChatRunner.tsx').then((m) => ({ default: m.ChatRunner })));
// Incoming-funds notices and the desktop tray's balance: loaded after the first screen.
const IncomingFundsRunner = lazy(() =>
  import('./notify/IncomingFundsRunner.tsx').then((m) => ({ default: m.IncomingFundsRunner })),
);
// Hold renewals and lease alerts: loaded after the first screen.
const HoldRunner = lazy(() => import('./leasing/HoldRunner.tsx').then((m) => ({ default: m.HoldRunner })));

const PAGES = ['wallet', 'contacts', 'chat', 'leasing', 'explorer', 'node', 'settings'];

export function App() {
  const ks = useKeystore();
  const route = useRoute();
  const s = settings.use();
  const qc = useQueryClient();

  useEffect(() => applyTheme(s.theme), [s.theme]);
  useEffect(() => keystore().setAutoLock(s.autoLockMinutes), [s.autoLockMinutes]);
  useActivity();

  // Account data is dropped on lock; the proof-of-work workers start once there is something to sign.
  const unlocked = ks.status === 'unlocked';
  useShortcuts(unlocked);
  usePaymentLinkRoute();
  useEffect(() => {
    if (!unlocked) {
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== 'node' });
      return;
    }
    const t = setTimeout(() => powEngine(desktopBridge()), 500);
    return () => clearTimeout(t);
  }, [unlocked, qc]);

  const page = PAGES.includes(route[0] ?? '') ? route[0]! : 'wallet';
  let content;
  if (ks.status === 'empty') content = <Onboarding />;
  else if (ks.status === 'locked') content = <Unlock />;
  else if (page === 'contacts') content = <ContactsPage />;
  else if (page === 'leasing') content = <LeasingPage route={route} />;
  else if (page === 'chat') content = <ChatPage route={route} />;
  else if (page === 'explorer') content = <ExplorerPage route={route} />;
  else if (page === 'node') content = <NodePage />;
  else if (page === 'settings') content = <SettingsPage />;
  else content = <WalletPage route={route} />;

  return (
    <div className="app" data-testid="app" data-keystore={ks.status}>
      <SkipLink />
      {unlocked && <Sidebar active={page} />}
      <main id={MAIN_ID} tabIndex={-1} className={`main${unlocked ? '' : ' full'}`}>
        <Suspense fallback={<Loading />}>{content}</Suspense>
      </main>
      <StatusBar />
      <PowPanel />
      <ShortcutsHelp />
      <Toaster />
      {unlocked && s.autoReceive && <AutoReceiver accounts={ks.accounts} />}
      {unlocked && (
        <Suspense fallback={null}>
          <HoldRunner accounts={ks.accounts} />
          <IncomingFundsRunner accounts={ks.accounts} />
          <ChatRunner accounts={ks.accounts} />
        </Suspense>
      )}
    </div>
  );
}

const MAIN_ID = 'main-content';

/**
 * The first thing Tab reaches: straight to the page's content, past the navigation. Not a plain
 * `href="#main-content"`: the hash is the router's, so focus moves by hand.
 */
function SkipLink() {
  return (
    <a
      className="skip-link"
      href={`#${MAIN_ID}`}
      onClick={(e) => {
        e.preventDefault();
        document.getElementById(MAIN_ID)?.focus();
      }}
      data-testid="skip-link"
    >
      Skip to main content
    </a>
  );
}

/** Input anywhere in the page counts as activity for the auto-lock. */
function useActivity(): void {
  useEffect(() => {
    let last = 0;
    const onActivity = () => {
      const now = Date.now();
      if (now - last < 1000) return;
      last = now;
      keystore().touch();
    };
    const events = ['pointerdown', 'keydown', 'wheel', 'touchstart'] as const;
    for (const e of events) window.addEventListener(e, onActivity, { passive: true });
    return () => {
      for (const e of events) window.removeEventListener(e, onActivity);
    };
  }, []);
}

/** Receives incoming sends of every account as they appear (the auto-receive setting). */
function AutoReceiver({ accounts }: { accounts: readonly AccountInfo[] }) {
  const qc = useQueryClient();
  const pending = usePendingMany(accounts.map((a) => a.address));
  // Send hash -> time before which it is not tried again (in flight, or failed recently).
  const holds = useRef(new Map<string, number>());
  const stamp = pending.map((p) => p.dataUpdatedAt).join(',');
  useEffect(() => {
    const now = Date.now();
    accounts.forEach((a, i) => {
      for (const p of pending[i]?.data ?? []) {
        if ((holds.current.get(p.hash) ?? 0) > now) continue;
        holds.current.set(p.hash, Infinity);
        accountWriter()
          .receive(a.address, p, `auto-receive ${groupedUnits(p.amount)} ${p.asset} into ${a.label}`)
          .then(
            () => holds.current.set(p.hash, Date.now() + 60_000),
            () => holds.current.set(p.hash, Date.now() + 30_000),
          )
          .finally(() => void invalidateAccounts(qc, a.address));
      }
    });
  }, [stamp]);
  return null;
}
