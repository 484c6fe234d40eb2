import { ProtocolError } from './errors.ts';
import { isHex } from './hex.ts';
import { type IntKind, toBigIntField } from './int.ts';

/**
 * Field readers for decoding signed JSON payloads (certificates, marketplace messages). Each names
 * the field in its ProtocolError. Hex is taken strictly lowercase, never lowercased: these payloads
 * hash their hex fields as ASCII text, so changing a character would change what was signed.
 */
export type JsonObject = Record<string, unknown>;

export function jsonObject(v: unknown, field?: string): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new ProtocolError('ERR_FIELD_TYPE', 'expected an object', field);
  }
  return v as JsonObject;
}

export function stringField(o: JsonObject, k: string): string {
  const v = o[k];
  if (v === undefined || v === null) throw new ProtocolError('ERR_FIELD_MISSING', 'required', k);
  if (typeof v !== 'string') throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', k);
  return v;
}

/** Lowercase hex of exactly `bytes` bytes. */
export function hexField(o: JsonObject, k: string, bytes: number): string {
  const v = stringField(o, k);
  if (!isHex(v, bytes)) {
    throw new ProtocolError('ERR_HEX', `expected ${bytes * 2} lowercase hex characters`, k);
  }
  return v;
}

export function intField(o: JsonObject, k: string, kind: IntKind): bigint {
  if (o[k] === undefined || o[k] === null) throw new ProtocolError('ERR_FIELD_MISSING', 'required', k);
  return toBigIntField(o[k], kind, k);
}
