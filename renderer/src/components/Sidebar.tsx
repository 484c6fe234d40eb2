import { Fragment } from 'react';
import { safeUnread, useChatState } from '../chat/state.ts';
import { keystore, useKeystore } from '../keystore/index.ts';
import { href } from '../router.ts';
import { setHelpOpen } from '../shortcuts/useShortcuts.ts';

/** Navigation, with room for the pages to come (shown, disabled, "soon"). */
const PAGES = [
  { id: 'wallet', label: 'Wallet' },
  { id: 'contacts', label: 'Address book' },
  { id: 'chat', label: 'Chat' },
  { id: 'leasing', label: 'Leasing' },
  { id: 'explorer', label: 'Explorer' },
  { id: 'node', label: 'Node' },
  { id: 'settings', label: 'Settings' },
] as const;

const COMING: readonly string[] = [];

export function Sidebar({ active }: { active: string }) {
  const ks = useKeystore();
  const chat = useChatState();
  const unread = ks.accounts.reduce((n, a) => n + safeUnread(chat, a.address), 0);
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="brand">Ledger Node</div>
      {PAGES.map((p) => (
        <Fragment key={p.id}>
          <a
            href={href(p.id)}
            className={`nav-item${active === p.id ? ' active' : ''}`}
            aria-current={active === p.id ? 'page' : undefined}
            data-testid={`nav-${p.id}`}
          >
            {p.label}
            {p.id === 'chat' && unread > 0 && (
              <span className="badge" data-testid="nav-chat-unread" aria-label={`${unread} unread`}>
                {unread}
              </span>
            )}
          </a>
          {/* The provider's side of leasing, right under Leasing (not under the page below it). */}
          {p.id === 'leasing' && (
            <a href={href('leasing', 'provider')} className="nav-item sub" data-testid="nav-provider">
              Provider
            </a>
          )}
        </Fragment>
      ))}
      {COMING.length > 0 && <div className="nav-section">Coming soon</div>}
      {COMING.map((label) => (
        <span key={label} className="nav-item disabled" aria-disabled="true" title="Coming soon">
          {label} <span className="soon">soon</span>
        </span>
      ))}
      <div className="spacer" />
      {/* The one visible way in to the `?` overlay, for those who do not guess the key. */}
      <button
        type="button"
        className="link shortcuts-link"
        onClick={() => setHelpOpen(true)}
        aria-keyshortcuts="?"
        data-testid="shortcuts-link"
      >
        Keyboard shortcuts <kbd>?</kbd>
      </button>
      {ks.status === 'unlocked' && (
        <button type="button" onClick={() => keystore().lock('user')} data-testid="lock-button">
          Lock now
        </button>
      )}
    </nav>
  );
}
