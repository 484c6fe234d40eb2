import { ProtocolError } from './errors.ts';
import { memoBytes } from './memo.ts';
import { type Asset, formatUnits, isAsset, NATIVE_ASSET, parseUnits } from './units.ts';

/**
 * Payment URIs (`xe:` deep links), in the habit of BIP-21:
 *
 *   xe:<address>[?amount=<decimal>][&asset=XE|XUSD][&memo=<text>][&label=<text>]
 *
 * - The scheme is `xe:` in any case; `xe://<address>` (what some desktops hand over) and `web+xe:`
 *   (the form a browser's registerProtocolHandler passes) are read the same way.
 * - `<address>`: 64 hex digits (protocol.md §1); upper case is accepted and lowered.
 * - `amount`: a decimal number of whole units ("12.5"), at most 6 decimals, more than 0; read
 *   exactly into micro-units (a bigint), never through a float. No exponent, sign or grouping.
 * - `asset`: XE (the default) or XUSD.
 * - `memo`: percent-encoded UTF-8, checked like a block's memo (at most 64 bytes, no control bytes).
 * - `label`: a percent-encoded name for the recipient, shown only.
 * - Values are percent-decoded (RFC 3986): `+` is a plus sign, a space is `%20`.
 * - A parameter given twice is an error; an unknown parameter is ignored unless it starts with
 *   `req-` (BIP-21: a required extension this reader does not know makes the URI unusable).
 *
 * Isomorphic (no Node built-ins): the renderer, the CLI and the Electron main process share it.
 */
export type PaymentUriErrorCode =
  | 'ERR_URI_SCHEME'
  | 'ERR_URI_ADDRESS'
  | 'ERR_URI_AMOUNT'
  | 'ERR_URI_ASSET'
  | 'ERR_URI_MEMO'
  | 'ERR_URI_PARAM'
  | 'ERR_URI_TOO_LONG';

export class PaymentUriError extends Error {
  readonly code: PaymentUriErrorCode;
  /** The part at fault: 'scheme', 'address', 'amount', 'asset', 'memo', 'label' or a parameter name. */
  readonly field: string;

  constructor(code: PaymentUriErrorCode, field: string, message: string) {
    super(message);
    this.name = 'PaymentUriError';
    this.code = code;
    this.field = field;
  }
}

export interface PaymentRequest {
  /** 64 lowercase hex digits. */
  address: string;
  /** Micro-units, when the URI names an amount. */
  amount?: bigint;
  asset: Asset;
  memo?: string;
  label?: string;
}

/** Longer than any sensible payment link; refuses pastes of whole documents. */
export const MAX_PAYMENT_URI_LENGTH = 2048;

const SCHEME_RE = /^(?:web\+)?xe:(?:\/\/)?/i;
const ADDRESS_RE = /^[0-9a-fA-F]{64}$/;
const KNOWN = new Set(['amount', 'asset', 'memo', 'label']);

/** True when the text looks like a payment URI at all (its scheme), whatever else is wrong. */
export function isPaymentUri(text: string): boolean {
  return SCHEME_RE.test(text.trim());
}

function decode(raw: string, field: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new PaymentUriError('ERR_URI_PARAM', field, `the ${field} is not valid percent-encoded UTF-8`);
  }
}

/** Reads a payment URI; throws a PaymentUriError saying what is wrong, in words a person can act on. */
export function parsePaymentUri(text: string): PaymentRequest {
  const uri = text.trim();
  if (uri.length > MAX_PAYMENT_URI_LENGTH) {
    throw new PaymentUriError(
      'ERR_URI_TOO_LONG',
      'uri',
      `the payment link is ${uri.length} characters; at most ${MAX_PAYMENT_URI_LENGTH} are read`,
    );
  }
  const scheme = SCHEME_RE.exec(uri);
  if (!scheme) throw new PaymentUriError('ERR_URI_SCHEME', 'scheme', 'a payment link starts with "xe:"');
  const rest = uri.slice(scheme[0].length);
  const q = rest.indexOf('?');
  // A trailing slash after `xe://<address>` is what URL handlers of some desktops add.
  const rawAddress = (q < 0 ? rest : rest.slice(0, q)).replace(/\/$/, '');
  const address = decode(rawAddress, 'address');
  if (!ADDRESS_RE.test(address)) {
    throw new PaymentUriError(
      'ERR_URI_ADDRESS',
      'address',
      address === ''
        ? 'the payment link names no address'
        : 'the address in the payment link is not 64 hexadecimal characters',
    );
  }
  const request: PaymentRequest = { address: address.toLowerCase(), asset: NATIVE_ASSET };
  if (q < 0) return request;

  const seen = new Set<string>();
  for (const pair of rest.slice(q + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq < 0 ? pair : pair.slice(0, eq), 'parameter name').toLowerCase();
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1), name);
    if (seen.has(name)) {
      throw new PaymentUriError('ERR_URI_PARAM', name, `the payment link gives "${name}" twice`);
    }
    seen.add(name);
    if (!KNOWN.has(name)) {
      if (name.startsWith('req-')) {
        throw new PaymentUriError(
          'ERR_URI_PARAM',
          name,
          `the payment link requires "${name}", which this app does not understand`,
        );
      }
      continue;
    }
    if (name === 'amount') request.amount = readAmount(value);
    else if (name === 'asset') {
      const asset = value.toUpperCase();
      if (!isAsset(asset)) {
        throw new PaymentUriError('ERR_URI_ASSET', 'asset', `"${value}" is not an asset (XE or XUSD)`);
      }
      request.asset = asset;
    } else if (name === 'memo') {
      try {
        memoBytes(value);
      } catch (e) {
        const why = e instanceof ProtocolError ? e.message.replace(/^memo: /, '') : String(e);
        throw new PaymentUriError('ERR_URI_MEMO', 'memo', `the memo in the payment link: ${why}`);
      }
      if (value !== '') request.memo = value;
    } else if (value !== '') request.label = value;
  }
  return request;
}

function readAmount(value: string): bigint {
  // parseUnits is lenient about spaces and underscores (typed text); a link must be exact.
  if (!/^[0-9]+(?:\.[0-9]+)?$/.test(value)) {
    throw new PaymentUriError(
      'ERR_URI_AMOUNT',
      'amount',
      `the amount "${value}" is not a plain decimal number (like 12.5)`,
    );
  }
  let micro: bigint;
  try {
    micro = parseUnits(value.replace(/^0+(?=\d)/, ''));
  } catch (e) {
    const why = e instanceof ProtocolError ? e.message.replace(/^amount: /, '') : String(e);
    throw new PaymentUriError('ERR_URI_AMOUNT', 'amount', `the amount "${value}": ${why}`);
  }
  if (micro === 0n) throw new PaymentUriError('ERR_URI_AMOUNT', 'amount', 'the amount must be more than 0');
  return micro;
}

/** Writes a payment URI; the inverse of parsePaymentUri for every request it accepts. */
export function buildPaymentUri(request: PaymentRequest): string {
  if (!ADDRESS_RE.test(request.address)) {
    throw new PaymentUriError('ERR_URI_ADDRESS', 'address', 'the address is not 64 hexadecimal characters');
  }
  const params: string[] = [];
  if (request.amount !== undefined) {
    if (request.amount <= 0n) {
      throw new PaymentUriError('ERR_URI_AMOUNT', 'amount', 'the amount must be more than 0');
    }
    params.push(`amount=${formatUnits(request.amount)}`);
  }
  if (request.asset !== NATIVE_ASSET) {
    if (!isAsset(request.asset)) {
      throw new PaymentUriError('ERR_URI_ASSET', 'asset', `"${String(request.asset)}" is not an asset`);
    }
    params.push(`asset=${request.asset}`);
  }
  if (request.memo !== undefined && request.memo !== '') {
    try {
      memoBytes(request.memo);
    } catch (e) {
      throw new PaymentUriError('ERR_URI_MEMO', 'memo', (e as Error).message);
    }
    params.push(`memo=${encodeURIComponent(request.memo)}`);
  }
  if (request.label !== undefined && request.label !== '') {
    params.push(`label=${encodeURIComponent(request.label)}`);
  }
  return `xe:${request.address.toLowerCase()}${params.length > 0 ? `?${params.join('&')}` : ''}`;
}
