import { useEffect, useRef, useSyncExternalStore } from 'react';
import { type PaymentRequest, parsePaymentUri } from '../../../node-core/protocol/payment-uri.ts';

/**
 * Payment links (`xe:<address>?amount=…&memo=…`, node-core/protocol/payment-uri.ts) opening the
 * send form filled in. They arrive as the route `#/send?uri=<the link, percent-encoded>`:
 * - in the desktop app from the main process (electron/deep-link.ts: the OS hands it the link);
 * - in a browser from a `web+xe:` link once the person let this page handle them
 *   (registerPaymentLinks: navigator.registerProtocolHandler substitutes the link for %s);
 * - from anyone who writes such an address by hand.
 * The route is read once (routePaymentLink), the link kept here, and the address replaced by the
 * send form's (#/wallet/send), so Back does not open it twice. A locked wallet keeps it until unlocked.
 */
export interface PaymentLink {
  /** Counts links, so the same link opened twice fills the form twice. */
  seq: number;
  uri: string;
  request?: PaymentRequest;
  /** Why the link cannot be used, in words. */
  error?: string;
  /** The send form took it. */
  applied: boolean;
}

export const SEND_LINK_ROUTE = '#/send';

let current: PaymentLink | undefined;
let seq = 0;
const listeners = new Set<() => void>();
const emit = () => {
  for (const l of listeners) l();
};
const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/** The link in a `#/send?uri=…` hash, or undefined for any other route. */
export function linkFromHash(hash: string): string | undefined {
  const m = /^#\/?send\/?\?(.*)$/.exec(hash);
  if (!m) return undefined;
  const uri = new URLSearchParams(m[1]).get('uri');
  return uri === null || uri === '' ? undefined : uri;
}

/** Opens a link: parsed now, its error kept in words for the send form to show. */
export function openPaymentLink(uri: string): PaymentLink {
  let request: PaymentRequest | undefined;
  let error: string | undefined;
  try {
    request = parsePaymentUri(uri);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  current = { seq: ++seq, uri, request, error, applied: false };
  emit();
  return current;
}

export function clearPaymentLink(): void {
  if (current === undefined) return;
  current = undefined;
  emit();
}

/** Reads the current hash: a payment link is opened and the address becomes the send form's. */
export function routePaymentLink(): boolean {
  const uri = linkFromHash(window.location.hash);
  if (uri === undefined) return false;
  openPaymentLink(uri);
  // replace(): a fragment navigation (hashchange fires, the router follows) without a history entry.
  window.location.replace('#/wallet/send');
  return true;
}

/** Watches the address for payment links (App mounts it once, locked or not). */
export function usePaymentLinkRoute(): void {
  useEffect(() => {
    routePaymentLink();
    const onHash = () => void routePaymentLink();
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
}

export function usePaymentLink(): PaymentLink | undefined {
  return useSyncExternalStore(subscribe, () => current);
}

/**
 * For the send form: calls `fill` once per link that parsed, and returns the link (for its notice).
 * A form that mounts later (after unlocking) still gets a link that arrived before.
 */
export function usePaymentPrefill(fill: (request: PaymentRequest) => void): PaymentLink | undefined {
  const link = usePaymentLink();
  const fillRef = useRef(fill);
  fillRef.current = fill;
  useEffect(() => {
    if (link === undefined || link.applied || link.request === undefined) return;
    link.applied = true;
    fillRef.current(link.request);
  }, [link]);
  return link;
}

/** Whether this browser can be asked to open `web+xe:` links with this page. */
export function canRegisterPaymentLinks(): boolean {
  return typeof navigator !== 'undefined' && typeof navigator.registerProtocolHandler === 'function';
}

/**
 * Asks the browser to open `web+xe:` links here (browsers allow only `web+` names for pages; the
 * desktop app registers plain `xe:` with the system). The browser asks the person to confirm.
 */
export function registerPaymentLinks(): void {
  const base = `${window.location.origin}${window.location.pathname}`;
  navigator.registerProtocolHandler('web+xe', `${base}#/send?uri=%s`);
}
