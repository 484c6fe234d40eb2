import { isHex } from '../protocol/hex.ts';
import { type JsonValue, parseJson, RawJson } from '../protocol/json.ts';
import { toBigIntField } from '../protocol/int.ts';
import { parseDifficulty, BLOCK_POW_DIFFICULTY, CHAT_POW_DIFFICULTY } from '../protocol/pow.ts';
import type { Workload } from '../protocol/certificate.ts';
import { MAX_TABLE_ENTRIES } from '../leasing/benchmark-work.ts';

/**
 * The `sys.*` state-chain keys the node reads (protocol.md section 7.3, reference-behavior.md 6.4,
 * decisions D6): value schemas, checked before a block that sets them is accepted, and typed views.
 */
export class SysValueError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = 'SysValueError';
    this.key = key;
  }
}

type Obj = Record<string, JsonValue>;

function obj(key: string, v: JsonValue): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof RawJson) {
    throw new SysValueError(key, 'expected a JSON object');
  }
  return v as Obj;
}

function hexList(key: string, v: JsonValue | undefined, what: string): string[] {
  if (!Array.isArray(v) || v.length === 0)
    throw new SysValueError(key, `keys must be a non-empty array of ${what}`);
  const out = v.map((k) => {
    if (!isHex(k, 32)) throw new SysValueError(key, `every key must be 64 lowercase hex (${what})`);
    return k;
  });
  if (new Set(out).size !== out.length) throw new SysValueError(key, 'duplicate keys');
  return out;
}

function threshold(key: string, v: JsonValue | undefined, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new SysValueError(key, `threshold must be an integer from ${min} to ${max}`);
  }
  return v;
}

export interface ThresholdKeyset {
  keys: string[];
  threshold: number;
}
export interface Oracle extends ThresholdKeyset {
  allowed_prefix: string;
}
export interface Faucet {
  amount: bigint;
  period_ns: bigint;
}
export interface PowSettings {
  block: bigint;
  chat: bigint;
}
/** Lease parameters (decisions D7): provider stake in thousandths of the lease cost. */
export interface LeaseParams {
  stake_milli: number;
}

export function parseLease(v: JsonValue): LeaseParams {
  const o = obj('sys.lease', v);
  const m = o.stake_milli ?? 0;
  if (typeof m !== 'number' || !Number.isInteger(m) || m < 0 || m > 1_000_000) {
    throw new SysValueError('sys.lease', 'stake_milli must be an integer from 0 to 1000000');
  }
  return { stake_milli: m };
}

/**
 * `sys.certificate_workload`: the benchmark a network's performance certificates attest
 * (reference-behavior.md 4.7). A development network pins a small one, so its node certifies itself
 * in seconds rather than minutes; a network without the key uses the reference workload.
 */
export function parseCertificateWorkload(v: JsonValue): Workload {
  const key = 'sys.certificate_workload';
  const o = obj(key, v);
  const unknown = Object.keys(o).filter(
    (k) => !['workload_version', 'iterations', 'table_entries', 'reads'].includes(k),
  );
  if (unknown.length > 0) throw new SysValueError(key, `unknown field ${unknown[0]}`);
  // Each is also a number the benchmark loops count in: a safe integer, the table within its cap.
  const int = (field: string, min: bigint, max: bigint): bigint => {
    let n: bigint;
    try {
      n = toBigIntField(o[field], 'u64', field);
    } catch (e) {
      throw new SysValueError(key, (e as Error).message);
    }
    if (n < min || n > max) throw new SysValueError(key, `${field} must be an integer from ${min} to ${max}`);
    return n;
  };
  const safe = BigInt(Number.MAX_SAFE_INTEGER);
  return {
    workload_version: int('workload_version', 1n, safe),
    iterations: int('iterations', 1n, safe),
    table_entries: Number(int('table_entries', 1n, BigInt(MAX_TABLE_ENTRIES))),
    reads: Number(int('reads', 0n, safe)),
  };
}

export type RepresentativePolicy = { mode: 'open' } | { mode: 'allowlist'; addresses: string[] };

export function parseDaoKeyset(v: JsonValue): ThresholdKeyset {
  const o = obj('sys.dao_keyset', v);
  const keys = hexList('sys.dao_keyset', o.keys, 'public keys');
  return { keys, threshold: threshold('sys.dao_keyset', o.threshold, Math.min(2, keys.length), keys.length) };
}

export function parseTimekeepers(v: JsonValue): ThresholdKeyset {
  const o = obj('sys.timekeepers', v);
  const keys = hexList('sys.timekeepers', o.keys, 'public keys');
  return { keys, threshold: threshold('sys.timekeepers', o.threshold, 1, keys.length) };
}

export function parseOracle(v: JsonValue): Oracle {
  const o = obj('sys.oracle', v);
  const keys = hexList('sys.oracle', o.keys, 'public keys');
  if (typeof o.allowed_prefix !== 'string' || o.allowed_prefix === '') {
    throw new SysValueError('sys.oracle', 'allowed_prefix must be a non-empty string');
  }
  return {
    keys,
    threshold: threshold('sys.oracle', o.threshold, 1, keys.length),
    allowed_prefix: o.allowed_prefix,
  };
}

export function parseMinter(v: JsonValue): string[] {
  return hexList('sys.minter', obj('sys.minter', v).keys, 'addresses');
}

export function parseFaucet(v: JsonValue): Faucet {
  const o = obj('sys.faucet', v);
  try {
    const amount = toBigIntField(o.amount, 'u64', 'amount');
    const period_ns = toBigIntField(o.period_ns, 'u64', 'period_ns');
    if (amount === 0n || period_ns === 0n)
      throw new SysValueError('sys.faucet', 'amount and period_ns must be positive');
    return { amount, period_ns };
  } catch (e) {
    if (e instanceof SysValueError) throw e;
    throw new SysValueError('sys.faucet', (e as Error).message);
  }
}

export function parsePow(v: JsonValue): PowSettings {
  const o = obj('sys.pow', v);
  if (typeof o.block !== 'string' || typeof o.chat !== 'string') {
    throw new SysValueError('sys.pow', 'block and chat must be hex strings');
  }
  try {
    return { block: parseDifficulty(o.block), chat: parseDifficulty(o.chat) };
  } catch (e) {
    throw new SysValueError('sys.pow', (e as Error).message);
  }
}

export function parseRepresentatives(v: JsonValue): RepresentativePolicy {
  const o = obj('sys.representatives', v);
  if (o.mode === 'open') return { mode: 'open' };
  if (o.mode === 'allowlist') {
    const a = o.addresses;
    if (!Array.isArray(a) || a.length > 1000 || !a.every((x) => isHex(x, 32))) {
      throw new SysValueError(
        'sys.representatives',
        'addresses must be at most 1000 addresses of 64 lowercase hex',
      );
    }
    return { mode: 'allowlist', addresses: a as string[] };
  }
  throw new SysValueError('sys.representatives', 'mode must be "open" or "allowlist"');
}

function parsePhase(v: JsonValue): number {
  if (v !== 1 && v !== 2) throw new SysValueError('sys.phase', 'must be 1 or 2');
  return v;
}

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
function parseVersion(v: JsonValue): [number, number, number] {
  if (typeof v !== 'string' || !SEMVER.test(v))
    throw new SysValueError('sys.min_protocol_version', 'must be "MAJOR.MINOR.PATCH"');
  const [a, b, c] = v.split('.').map(Number);
  return [a!, b!, c!];
}

function parseNetworkId(v: JsonValue): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 64) {
    throw new SysValueError('sys.network_id', 'must be a non-empty string of at most 64 characters');
  }
  return v;
}

const FEATURE_NAME = /^[a-z][a-z0-9_]{0,31}$/;
export interface Activation {
  at_index?: bigint;
  not_before_ns?: bigint;
}
export function parseActivations(v: JsonValue): Map<string, Activation> {
  const o = obj('sys.activations', v);
  const features = obj('sys.activations', o.features ?? null);
  const names = Object.keys(features);
  if (names.length > 64) throw new SysValueError('sys.activations', 'at most 64 features');
  const out = new Map<string, Activation>();
  for (const name of names) {
    if (!FEATURE_NAME.test(name)) throw new SysValueError('sys.activations', `bad feature name "${name}"`);
    const f = obj('sys.activations', features[name]!);
    const a: Activation = {};
    try {
      if (f.at_index !== undefined) a.at_index = toBigIntField(f.at_index, 'u64', 'at_index');
      if (f.not_before_ns !== undefined)
        a.not_before_ns = toBigIntField(f.not_before_ns, 'i64', 'not_before_ns');
    } catch (e) {
      throw new SysValueError('sys.activations', (e as Error).message);
    }
    if (a.not_before_ns !== undefined && a.not_before_ns < 1_600_000_000_000_000_000n) {
      throw new SysValueError('sys.activations', 'not_before_ns must be a Unix time in nanoseconds');
    }
    out.set(name, a);
  }
  return out;
}

/** Validators of known keys; an unknown sys.* key must still be valid JSON (checked by the caller). */
const VALIDATORS: Record<string, (v: JsonValue) => unknown> = {
  'sys.network_id': parseNetworkId,
  'sys.dao_keyset': parseDaoKeyset,
  'sys.timekeepers': parseTimekeepers,
  'sys.oracle': parseOracle,
  'sys.minter': parseMinter,
  'sys.faucet': parseFaucet,
  'sys.lease': parseLease,
  'sys.certificate_workload': parseCertificateWorkload,
  'sys.pow': parsePow,
  'sys.representatives': parseRepresentatives,
  'sys.phase': parsePhase,
  'sys.min_protocol_version': parseVersion,
  'sys.activations': parseActivations,
};

/** Checks a value for a key; returns its parsed JSON. Throws SysValueError with a clear reason. */
export function validateValue(key: string, text: string): JsonValue {
  let v: JsonValue;
  try {
    v = parseJson(text);
  } catch (e) {
    throw new SysValueError(key, `value is not valid JSON (${(e as Error).message})`);
  }
  VALIDATORS[key]?.(v);
  return v;
}

/**
 * Transition rules between an old and a new value of the same key (reference-behavior.md 6.2):
 * the network id never changes, phase and minimum protocol version only rise.
 */
export function validateTransition(key: string, oldText: string | undefined, newValue: JsonValue): void {
  if (oldText === undefined) return;
  const old = parseJson(oldText);
  if (key === 'sys.network_id' && old !== newValue)
    throw new SysValueError(key, 'the network id cannot change');
  if (key === 'sys.phase' && (newValue as number) < (old as number))
    throw new SysValueError(key, 'phase may only rise');
  if (key === 'sys.min_protocol_version') {
    const [a, b] = [parseVersion(old), parseVersion(newValue)];
    if (b[0] < a[0] || (b[0] === a[0] && (b[1] < a[1] || (b[1] === a[1] && b[2] < a[2])))) {
      throw new SysValueError(key, 'the minimum protocol version may only rise');
    }
  }
}

export const DEFAULT_POW: PowSettings = { block: BLOCK_POW_DIFFICULTY, chat: CHAT_POW_DIFFICULTY };
