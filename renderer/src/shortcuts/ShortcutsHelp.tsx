import { Fragment, useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { desktopBridge } from '../bridge.ts';
import { canRegisterPaymentLinks, registerPaymentLinks } from '../deeplink/payment-link.ts';
import { SHORTCUTS } from './keymap.ts';
import { setHelpOpen, useHelpOpen } from './useShortcuts.ts';

/**
 * The `?` overlay: every shortcut, and how payment links open here. A native <dialog> shown with
 * showModal(): the browser traps focus in it, makes the page behind inert and closes it on Escape.
 * Focus goes to Close on opening and back to where it was on closing.
 */
/**
 * Tab from the last control goes to the first, Shift+Tab from the first to the last: a modal
 * <dialog> makes the page inert, but Chromium would still let Tab leave for the browser's own bar.
 */
function keepFocusInside(e: KeyboardEvent<HTMLDialogElement>, dialog: HTMLDialogElement | null): void {
  if (e.key !== 'Tab' || dialog === null) return;
  const focusable = [
    ...dialog.querySelectorAll<HTMLElement>('button, a[href], input, select, textarea'),
  ].filter((el) => !el.hasAttribute('disabled') && el.tabIndex >= 0);
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  if (first === undefined || last === undefined) return;
  if (e.shiftKey && document.activeElement === first) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first.focus();
  }
}

export function ShortcutsHelp() {
  const open = useHelpOpen();
  const ref = useRef<HTMLDialogElement>(null);
  const closeRef = useRef<HTMLButtonElement>(null);
  const returnTo = useRef<Element | null>(null);
  const titleId = useId();
  const [linkState, setLinkState] = useState<'idle' | 'asked' | 'failed'>('idle');

  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      returnTo.current = document.activeElement;
      d.showModal();
      closeRef.current?.focus();
    } else if (!open && d.open) {
      d.close();
      (returnTo.current as HTMLElement | null)?.focus?.();
    }
  }, [open]);

  const offerLinks = !desktopBridge() && canRegisterPaymentLinks();
  return (
    <dialog
      ref={ref}
      className="confirm-dialog shortcuts-help"
      aria-labelledby={titleId}
      data-shortcuts-help=""
      data-testid="shortcuts-help"
      // Escape: the dialog would close itself; the state says what is open.
      onCancel={(e) => {
        e.preventDefault();
        setHelpOpen(false);
      }}
      onKeyDown={(e) => keepFocusInside(e, ref.current)}
    >
      {open && (
        <>
          <h2 id={titleId}>Keyboard shortcuts</h2>
          <p className="hint">
            Shortcuts work anywhere except while typing in a field. Letters one after the other.
          </p>
          <table className="shortcuts-table">
            <tbody>
              {SHORTCUTS.map((s) => (
                <tr key={s.action} data-testid="shortcut-row">
                  <th scope="row">
                    {s.keys.map((k, i) => (
                      <Fragment key={i}>
                        {i > 0 && ' then '}
                        <kbd>{k}</kbd>
                      </Fragment>
                    ))}
                  </th>
                  <td>{s.description}</td>
                </tr>
              ))}
              <tr>
                <th scope="row">
                  <kbd>Esc</kbd>
                </th>
                <td>Close this list (and other dialogs)</td>
              </tr>
            </tbody>
          </table>
          <h3>Payment links</h3>
          <p className="small">
            A link like <span className="mono">xe:&lt;address&gt;?amount=12.5&amp;memo=lunch</span> opens the
            send form filled in; you check it and confirm.
            {desktopBridge() ? ' The desktop app opens them from other programs.' : ''}
          </p>
          {offerLinks && (
            <p className="small">
              <button
                type="button"
                onClick={() => {
                  try {
                    registerPaymentLinks();
                    setLinkState('asked');
                  } catch {
                    setLinkState('failed');
                  }
                }}
                data-testid="register-payment-links"
              >
                Open web+xe: links with this page
              </button>{' '}
              {linkState === 'asked' && <span role="status">Your browser asks you to confirm.</span>}
              {linkState === 'failed' && (
                <span className="error" role="alert">
                  This browser refused to open payment links here.
                </span>
              )}
            </p>
          )}
          <div className="row" style={{ justifyContent: 'flex-end' }}>
            <button
              type="button"
              ref={closeRef}
              onClick={() => setHelpOpen(false)}
              data-testid="shortcuts-help-close"
            >
              Close
            </button>
          </div>
        </>
      )}
    </dialog>
  );
}
