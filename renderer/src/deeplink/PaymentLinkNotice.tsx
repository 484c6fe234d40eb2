import { short } from '../components/common.tsx';
import { clearPaymentLink, type PaymentLink } from './payment-link.ts';

/** Above the send form: where its fields came from, or why the link could not fill them. */
export function PaymentLinkNotice({ link }: { link: PaymentLink | undefined }) {
  if (link === undefined) return null;
  if (link.error !== undefined) {
    return (
      <div className="error box" role="alert" data-testid="payment-link-error">
        <b>This payment link cannot be used:</b> {link.error}.{' '}
        <button type="button" className="link" onClick={clearPaymentLink} data-testid="payment-link-dismiss">
          Dismiss
        </button>
      </div>
    );
  }
  const r = link.request!;
  return (
    <div className="box info" role="status" data-testid="payment-link-notice">
      Filled in from a payment link to{' '}
      {r.label !== undefined ? <b>{r.label}</b> : <span className="mono">{short(r.address)}</span>}. Check
      every field before you review.{' '}
      <button type="button" className="link" onClick={clearPaymentLink} data-testid="payment-link-dismiss">
        Dismiss
      </button>
    </div>
  );
}
