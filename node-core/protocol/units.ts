import { ProtocolError } from './errors.ts';
import { U64_MAX } from './int.ts';

/** Both assets have 6 decimals: 1 unit = 1,000,000 micro-units. */
export const DECIMALS = 6;
export const MICRO_PER_UNIT = 1_000_000n;

export const ASSETS = ['XE', 'XUSD'] as const;
export type Asset = (typeof ASSETS)[number];
export const NATIVE_ASSET: Asset = 'XE';
export const USD_ASSET: Asset = 'XUSD';

export function isAsset(s: unknown): s is Asset {
  return s === 'XE' || s === 'XUSD';
}

const UNITS_RE = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/**
 * Converts a decimal amount typed by a person ("12.5") to exact micro-units (12500000n).
 * Refuses more than 6 decimals rather than rounding, negative values, exponent forms, and values
 * beyond u64: an amount must mean exactly what was typed.
 */
export function parseUnits(text: string, field = 'amount'): bigint {
  const t = text.trim().replace(/_/g, '');
  const m = UNITS_RE.exec(t);
  if (!m) throw new ProtocolError('ERR_FIELD_TYPE', `"${text}" is not a decimal amount`, field);
  const frac = m[2] ?? '';
  if (frac.length > DECIMALS) {
    throw new ProtocolError('ERR_FIELD_RANGE', `at most ${DECIMALS} decimal places`, field);
  }
  const micro = BigInt(m[1]!) * MICRO_PER_UNIT + BigInt(frac.padEnd(DECIMALS, '0'));
  if (micro > U64_MAX) throw new ProtocolError('ERR_FIELD_RANGE', 'amount too large', field);
  return micro;
}

/**
 * Formats micro-units as a decimal amount with no trailing zeros ("12.5"), or with exactly
 * `minDecimals` decimals at least. Negative values (deltas) keep their sign.
 */
export function formatUnits(micro: bigint, minDecimals = 0): string {
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  const whole = abs / MICRO_PER_UNIT;
  let frac = (abs % MICRO_PER_UNIT).toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  if (frac.length < minDecimals) frac = frac.padEnd(minDecimals, '0');
  const grouped = whole.toString();
  return `${neg ? '-' : ''}${grouped}${frac ? `.${frac}` : ''}`;
}
