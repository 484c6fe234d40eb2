import { useEffect, useRef, useSyncExternalStore } from 'react';
import { keystore } from '../keystore/index.ts';
import { navigate } from '../router.ts';
import { isTypingTarget, Keymap, type ShortcutAction } from './keymap.ts';

/**
 * Binds the keymap to the window: a press outside any field becomes an action (keymap.ts). The help
 * overlay's open state lives here too, so `?` toggles it from anywhere.
 */
let helpOpen = false;
const listeners = new Set<() => void>();
export function setHelpOpen(open: boolean): void {
  if (open === helpOpen) return;
  helpOpen = open;
  for (const l of listeners) l();
}
export function useHelpOpen(): boolean {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => helpOpen,
  );
}

/** The explorer's search field, once its page (loaded on demand) has rendered. */
const SEARCH_SELECTOR = '[data-testid="explorer-query"]';

function focusWhenShown(selector: string, timeoutMs = 3000): void {
  const until = performance.now() + timeoutMs;
  let steady = 0;
  // A page loaded on demand may render its field more than once (fallback, then content): focus
  // until the field has kept it for a few frames.
  const tryFocus = () => {
    const el = document.querySelector<HTMLElement>(selector);
    if (el && document.activeElement === el) steady++;
    else {
      steady = 0;
      el?.focus();
    }
    if (steady < 5 && performance.now() < until) requestAnimationFrame(tryFocus);
  };
  tryFocus();
}

export function runShortcut(action: ShortcutAction): void {
  switch (action) {
    case 'help':
      setHelpOpen(!helpOpen);
      return;
    case 'go-wallet':
      return navigate('wallet');
    case 'go-send':
      return navigate('wallet', 'send');
    case 'go-receive':
      return navigate('wallet', 'receive');
    case 'go-history':
      return navigate('wallet', 'history');
    case 'go-chat':
      return navigate('chat');
    case 'go-contacts':
      return navigate('contacts');
    case 'go-leasing':
      return navigate('leasing');
    case 'go-explorer':
      return navigate('explorer');
    case 'go-settings':
      return navigate('settings');
    case 'search':
      if (!window.location.hash.startsWith('#/explorer')) navigate('explorer');
      return focusWhenShown(SEARCH_SELECTOR);
    case 'lock':
      return keystore().lock('user');
  }
}

export function useShortcuts(unlocked: boolean): void {
  const keymap = useRef(new Keymap());
  const unlockedRef = useRef(unlocked);
  unlockedRef.current = unlocked;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing) return;
      const target = e.target as (Element & { isContentEditable?: boolean; type?: string }) | null;
      if (isTypingTarget(target)) return;
      // Another dialog (a confirmation) owns the keyboard while it is open.
      const dialog = target?.closest?.('dialog');
      if (dialog && !dialog.hasAttribute('data-shortcuts-help')) return;
      const action = keymap.current.feed(e, performance.now(), !unlockedRef.current);
      if (action === undefined) return;
      e.preventDefault();
      runShortcut(action);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
