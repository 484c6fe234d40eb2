import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * A modal question before something hard to take back (deleting a contact, an account). Built on
 * the native <dialog> shown with showModal(): the browser traps focus inside, makes the rest of the
 * page inert and closes it on Escape, so keyboard users get the same behaviour as mouse users.
 * Focus starts on the safe choice (Cancel), so a stray Enter never deletes anything.
 */
export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  /** The button that does it, e.g. "Delete contact". */
  confirmLabel: string;
  cancelLabel?: string;
  /** Red confirm button for destructive actions (the default). */
  danger?: boolean;
  onConfirm(): void;
  onCancel(): void;
  testId?: string;
}

export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  cancelLabel = 'Cancel',
  danger = true,
  onConfirm,
  onCancel,
  testId = 'confirm-dialog',
}: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      d.showModal();
      cancelRef.current?.focus();
    } else if (!open && d.open) d.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      className="confirm-dialog"
      aria-labelledby={titleId}
      aria-describedby={children ? bodyId : undefined}
      // Escape fires `cancel`; the parent owns `open`, so tell it rather than let the dialog close alone.
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
      data-testid={testId}
    >
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children && (
            <div id={bodyId} className="confirm-dialog-body">
              {children}
            </div>
          )}
          <div className="row" style={{ justifyContent: 'flex-end' }}>
            <button type="button" ref={cancelRef} onClick={onCancel} data-testid={`${testId}-cancel`}>
              {cancelLabel}
            </button>
            <button
              type="button"
              className={danger ? 'danger' : 'primary'}
              onClick={onConfirm}
              data-testid={`${testId}-ok`}
            >
              {confirmLabel}
            </button>
          </div>
        </>
      )}
    </dialog>
  );
}
