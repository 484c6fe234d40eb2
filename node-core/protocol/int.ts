import { ProtocolError } from './errors.ts';
import { RawJson } from './json.ts';

/** 64-bit integer bounds. Amounts and balances are u64; timestamps are i64 nanoseconds. */
export const U64_MAX = (1n << 64n) - 1n;
export const I64_MIN = -(1n << 63n);
export const I64_MAX = (1n << 63n) - 1n;
export const U32_MAX = 0xffff_ffffn;

export type IntKind = 'u64' | 'i64' | 'u32';

const BOUNDS: Record<IntKind, readonly [bigint, bigint]> = {
  u64: [0n, U64_MAX],
  i64: [I64_MIN, I64_MAX],
  u32: [0n, U32_MAX],
};

/**
 * An integer as JSON writes one: no sign but a minus, no leading zero, no `-0`. Strings are held to
 * the same form as bare integers, so a value means one thing however it is sent.
 */
const DIGITS = /^(0|-?[1-9][0-9]*)$/;
/** Digits in 2^64 - 1, the longest value in range: longer strings are out of range unparsed. */
const MAX_DIGITS = 20;

/**
 * Reads a 64-bit integer field from decoded JSON (decisions D3): a bigint (lossless parser), a safe
 * JS integer, or a string of decimal digits. A fraction or exponent form (`1.0`, `1e3`, which the
 * lossless parser hands over as RawJson), `-0`, leading zeros or a `+`, bare or quoted, and anything
 * else are refused with an error naming the field.
 */
export function toBigIntField(value: unknown, kind: IntKind, field: string): bigint {
  let v: bigint;
  if (typeof value === 'bigint') v = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value) && !Object.is(value, -0)) {
    v = BigInt(value);
  } else if (typeof value === 'number' || value instanceof RawJson) {
    throw new ProtocolError('ERR_FIELD_TYPE', 'expected an integer written with its digits only', field);
  } else if (typeof value === 'string') {
    if (!DIGITS.test(value)) {
      throw new ProtocolError('ERR_FIELD_TYPE', 'expected an integer as a string of decimal digits', field);
    }
    if (value.replace('-', '').length > MAX_DIGITS) {
      throw new ProtocolError('ERR_FIELD_RANGE', `out of ${kind} range`, field);
    }
    v = BigInt(value);
  } else {
    throw new ProtocolError('ERR_FIELD_TYPE', 'expected an integer', field);
  }
  const [min, max] = BOUNDS[kind];
  if (v < min || v > max) throw new ProtocolError('ERR_FIELD_RANGE', `out of ${kind} range`, field);
  return v;
}

/** Writes `v` as 8 bytes big-endian two's complement (so i64 and u64 share one writer). */
export function writeU64BE(out: Uint8Array, offset: number, v: bigint): void {
  let x = BigInt.asUintN(64, v);
  for (let i = 7; i >= 0; i--) {
    out[offset + i] = Number(x & 0xffn);
    x >>= 8n;
  }
}

export function readU64BE(src: Uint8Array, offset: number): bigint {
  let x = 0n;
  for (let i = 0; i < 8; i++) x = (x << 8n) | BigInt(src[offset + i]!);
  return x;
}

export function readI64BE(src: Uint8Array, offset: number): bigint {
  return BigInt.asIntN(64, readU64BE(src, offset));
}

export function u64BE(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  writeU64BE(out, 0, v);
  return out;
}

export function u32BE(v: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, v, false);
  return out;
}

export function u16BE(v: number): Uint8Array {
  const out = new Uint8Array(2);
  new DataView(out.buffer).setUint16(0, v, false);
  return out;
}
