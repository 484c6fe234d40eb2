import { ProtocolError } from './errors.ts';
import { sha256 } from './hash.ts';
import { bytesToHex, concatBytes, hexToBytes, utf8 } from './hex.ts';
import { toBigIntField, u16BE, u32BE, u64BE } from './int.ts';
import { type JsonPath, type JsonValue, parseJson, RawJson, stringifyJson } from './json.ts';
import { publicKeyFromSeed, signBytes } from './keys.ts';

/**
 * State-chain blocks (protocol.md section 7, decisions D14): canonical bytes, hash, signatures and
 * a JSON codec that keeps every op value's JSON text exactly as submitted, since the hash covers it.
 */
export interface StateOp {
  type: 'set' | 'delete';
  key: string;
  /** Exact JSON text of the value (set only). */
  value?: string;
}

export interface StateSignature {
  public_key: string;
  signature: string;
}

export interface StateBlock {
  index: bigint;
  prev_hash: string;
  ops: StateOp[];
  signatures: StateSignature[];
  timestamp: bigint;
  hash?: string;
}

export const STATE_KEY_MAX = 128;
export const STATE_VALUE_MAX = 64 * 1024;
const KEY_RE = /^[a-z0-9_.\-/]+$/;

export function checkStateKey(key: unknown, field = 'key'): string {
  if (typeof key !== 'string') throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', field);
  if (key.length === 0 || key.length > STATE_KEY_MAX || !KEY_RE.test(key)) {
    throw new ProtocolError(
      'ERR_FIELD_RANGE',
      `key must be 1-${STATE_KEY_MAX} characters of a-z 0-9 _ . - /`,
      field,
    );
  }
  return key;
}

/** Canonical bytes: index, prev_hash, op count, ops (action, key, value), timestamp. */
export function encodeStateBlock(block: StateBlock): Uint8Array {
  const parts: Uint8Array[] = [
    u64BE(block.index),
    hexToBytes(block.prev_hash, 32, 'prev_hash'),
    u32BE(block.ops.length),
  ];
  for (const op of block.ops) {
    const key = utf8(op.key);
    const value = op.type === 'set' ? utf8(op.value ?? '') : new Uint8Array(0);
    parts.push(
      new Uint8Array([op.type === 'set' ? 0x01 : 0x02]),
      u16BE(key.length),
      key,
      u32BE(value.length),
      value,
    );
  }
  parts.push(u64BE(block.timestamp));
  return concatBytes(...parts);
}

/** hash = SHA-256(canonical); no network id, no tag. */
export function stateBlockHashBytes(block: StateBlock): Uint8Array {
  return sha256(encodeStateBlock(block));
}

export function stateBlockHash(block: StateBlock): string {
  return bytesToHex(stateBlockHashBytes(block));
}

/** Adds a signature by `seed` over the block hash (keeps existing signatures) and sets `hash`. */
export function signStateBlock(block: StateBlock, seed: Uint8Array): StateBlock {
  const hash = stateBlockHashBytes(block);
  const sig = {
    public_key: bytesToHex(publicKeyFromSeed(seed)),
    signature: bytesToHex(signBytes(hash, seed)),
  };
  return { ...block, signatures: [...block.signatures, sig], hash: bytesToHex(hash) };
}

const isOpValuePath = (p: JsonPath) =>
  p.length === 3 && p[0] === 'ops' && typeof p[1] === 'number' && p[2] === 'value';

/** Parses a state block from JSON text, keeping op values' text exactly. */
export function parseStateBlock(text: string): StateBlock {
  return decodeStateBlock(parseJson(text, { raw: isOpValuePath }));
}

function valueText(v: JsonValue | undefined, field: string): string {
  if (v === undefined) throw new ProtocolError('ERR_FIELD_MISSING', 'a set operation needs a value', field);
  // Values parsed with parseStateBlock arrive as RawJson; built ones are serialized compactly.
  const text = v instanceof RawJson ? v.text : stringifyJson(v);
  if (text.trim() === '') throw new ProtocolError('ERR_FIELD_MISSING', 'empty value', field);
  if (utf8(text).length > STATE_VALUE_MAX) {
    throw new ProtocolError('ERR_FIELD_RANGE', `value larger than ${STATE_VALUE_MAX} bytes`, field);
  }
  return text;
}

/**
 * Decodes a state block from parsed JSON. Ops use `type` (the contract) or `action` (the reference).
 */
export function decodeStateBlock(json: JsonValue): StateBlock {
  if (typeof json !== 'object' || json === null || Array.isArray(json) || json instanceof RawJson) {
    throw new ProtocolError('ERR_FIELD_TYPE', 'a state block must be a JSON object', 'block');
  }
  const o = json as Record<string, JsonValue>;
  if (!Array.isArray(o.ops)) throw new ProtocolError('ERR_FIELD_TYPE', 'expected an array', 'ops');
  const ops = o.ops.map((raw, i): StateOp => {
    const f = `ops.${i}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || raw instanceof RawJson) {
      throw new ProtocolError('ERR_FIELD_TYPE', 'expected an object', f);
    }
    const op = raw as Record<string, JsonValue>;
    const kind = op.type ?? op.action;
    if (kind !== 'set' && kind !== 'delete') {
      throw new ProtocolError('ERR_FIELD_RANGE', 'type must be "set" or "delete"', `${f}.type`);
    }
    const key = checkStateKey(op.key, `${f}.key`);
    if (kind === 'delete') return { type: 'delete', key };
    return { type: 'set', key, value: valueText(op.value, `${f}.value`) };
  });
  const sigs = o.signatures ?? [];
  if (!Array.isArray(sigs)) throw new ProtocolError('ERR_FIELD_TYPE', 'expected an array', 'signatures');
  const signatures = sigs.map((s, i): StateSignature => {
    const f = `signatures.${i}`;
    const so = s as Record<string, JsonValue>;
    if (typeof s !== 'object' || s === null || Array.isArray(s))
      throw new ProtocolError('ERR_FIELD_TYPE', 'expected an object', f);
    if (typeof so.public_key !== 'string')
      throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', `${f}.public_key`);
    if (typeof so.signature !== 'string')
      throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', `${f}.signature`);
    hexToBytes(so.public_key, 32, `${f}.public_key`);
    hexToBytes(so.signature, 64, `${f}.signature`);
    return { public_key: so.public_key, signature: so.signature };
  });
  if (typeof o.prev_hash !== 'string')
    throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', 'prev_hash');
  hexToBytes(o.prev_hash, 32, 'prev_hash');
  const block: StateBlock = {
    index: toBigIntField(o.index, 'u64', 'index'),
    prev_hash: o.prev_hash,
    ops,
    signatures,
    timestamp: toBigIntField(o.timestamp, 'i64', 'timestamp'),
  };
  if (o.hash !== undefined && o.hash !== null) {
    if (typeof o.hash !== 'string') throw new ProtocolError('ERR_FIELD_TYPE', 'expected a string', 'hash');
    hexToBytes(o.hash, 32, 'hash');
    block.hash = o.hash;
  }
  return block;
}

/**
 * JSON-ready form: op values as RawJson (their exact text), ops named with both `type` (contract)
 * and `action` (reference clients).
 */
export function stateBlockToJson(block: StateBlock): Record<string, unknown> {
  return {
    index: block.index,
    prev_hash: block.prev_hash,
    ops: block.ops.map((op) =>
      op.type === 'set'
        ? { type: op.type, action: op.type, key: op.key, value: new RawJson(op.value ?? 'null', null) }
        : { type: op.type, action: op.type, key: op.key },
    ),
    signatures: block.signatures,
    hash: block.hash ?? stateBlockHash(block),
    timestamp: block.timestamp,
  };
}
