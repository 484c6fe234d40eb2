import { useKeystore } from '../keystore/index.ts';
import { dismissToast, holdToast, useToasts } from './toasts.ts';

/**
 * The notices over every page, newest at the bottom; errors are announced at once (role=alert).
 * Only while unlocked: a locked window shows nobody what was sent or received.
 */
export function Toaster() {
  const list = useToasts();
  const unlocked = useKeystore().status === 'unlocked';
  if (list.length === 0 || !unlocked) return null;
  return (
    <div className="toaster" data-testid="toaster">
      {list.map((t) => (
        <div
          key={t.id}
          className={`toast ${t.tone}`}
          role={t.tone === 'error' ? 'alert' : 'status'}
          data-testid="toast"
          data-tone={t.tone}
          onMouseEnter={() => holdToast(t.id, true)}
          onMouseLeave={() => holdToast(t.id, false)}
          onFocus={() => holdToast(t.id, true)}
          onBlur={() => holdToast(t.id, false)}
        >
          <span className="toast-text" data-testid="toast-text">
            {t.text}
          </span>
          {t.link && (
            <a href={t.link.href} onClick={() => dismissToast(t.id)} data-testid="toast-link">
              {t.link.label}
            </a>
          )}
          {t.action && (
            <button
              type="button"
              onClick={() => {
                t.action!.run();
                dismissToast(t.id);
              }}
              data-testid="toast-action"
            >
              {t.action.label}
            </button>
          )}
          <button
            type="button"
            className="link toast-close"
            aria-label="Close this notice"
            onClick={() => dismissToast(t.id)}
            data-testid="toast-close"
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
