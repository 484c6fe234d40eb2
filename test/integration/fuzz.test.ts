import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsPowSolver, type Wallet } from '../../node-core/client/wallet.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { type Block, BLOCK_TYPES, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { signBlockMultisig } from '../../node-core/protocol/block-sign.ts';
import { cappedR, leaseCost, leaseEmission } from '../../node-core/leasing/pricing.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { type JsonValue, parseJson, RawJson, stringifyJson } from '../../node-core/protocol/json.ts';
import { keyPairFromSeed, multisigAddress } from '../../node-core/protocol/keys.ts';
import { type StateBlock, signStateBlock, stateBlockToJson } from '../../node-core/protocol/statechain.ts';
import { attest } from '../helpers/lease-kit.ts';
import { startTestNode, TEST_DIFFICULTY, type TestNode } from '../helpers/node.ts';
import { testCertificate } from '../helpers/certificates.ts';

/**
 * Fuzzes every POST route of a real node (in-process, real LMDB, real HTTP) with mutations of valid
 * signed blocks: no 5xx (but a retryable block rejection), no crash, every error in the node's JSON
 * form, only genuinely valid blocks accepted, and the ledger untouched by everything that was refused.
 *
 * Reproducible: the mutation stream comes from one seeded PRNG. Re-run a failure with
 * FUZZ_SEED=<the printed seed>. (Wallet keys come from the same PRNG; timestamps come from the clock.)
 */

const RUNS_PER_ROUTE = 10_000;
const IN_FLIGHT = 12;
const BODY_LIMIT = 1024 * 1024;
/** Share of requests that carry a ~64 KiB..1 MB string or an over-limit body (the slow ones). */
const HUGE_RATE = 0.003;
/** Unmutated submissions of each valid seed mixed in: they must be accepted (201). */
const IDENTITY_SUBMISSIONS = 4;
const MINUTE_NS = 60_000_000_000n;
/** Short lease windows (the fuzz node's genesis): settle grace 1 min, force-settle from 22 min to 30 min. */
const LEASE_TIMING = {
  lease_settle_grace_ns: MINUTE_NS,
  lease_force_settle_gap_ns: 21n * MINUTE_NS,
  lease_escrow_expiry_ns: 30n * MINUTE_NS,
};
/** The lease every lease seed is about: 1 vCPU, 1 GiB, 1 GB for 60 s at price x1000. */
const LEASE_TERMS = { vcpus: 1n, memory_mb: 1024n, disk_gb: 1n, duration: 60n };
/** Epoch 0 of a development network: the emission parameters an accept locks. */
const LOCKED = { locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 0n };
const LEASE_COST = leaseCost(LEASE_TERMS, 1000n);
const LEASE_EMISSION = leaseEmission(LEASE_COST, cappedR(LOCKED));

// ---- seeded PRNG -----------------------------------------------------------------------------------

class Rng {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  /** mulberry32: uniform in [0, 1). */
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

// ---- a JSON tree that can say anything (duplicate keys, __proto__, raw number and escape text) -------

/** Literal JSON text (or deliberately broken text) spliced into the body as is. */
class Raw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
/** An object as an entry list: keys may repeat, and "__proto__" is just a key. */
class Obj {
  entries: [string, Node][];
  constructor(entries: [string, Node][]) {
    this.entries = entries;
  }
}
type Node = null | boolean | number | bigint | string | Raw | Obj | Node[];

function toNode(v: JsonValue): Node {
  if (v instanceof RawJson) return new Raw(v.text);
  if (Array.isArray(v)) return v.map(toNode);
  if (typeof v === 'object' && v !== null) return new Obj(Object.entries(v).map(([k, x]) => [k, toNode(x)]));
  return v;
}

function clone(n: Node): Node {
  if (Array.isArray(n)) return n.map(clone);
  if (n instanceof Obj) return new Obj(n.entries.map(([k, v]) => [k, clone(v)]));
  return n;
}

function serialize(n: Node, out: string[]): void {
  if (n === null || typeof n === 'boolean' || typeof n === 'number') out.push(String(n));
  else if (typeof n === 'bigint') out.push(n.toString());
  // JSON.stringify escapes lone surrogates as \udxxx: the body stays valid UTF-8 with a "\ud800" in it.
  else if (typeof n === 'string') out.push(JSON.stringify(n));
  else if (n instanceof Raw) out.push(n.text);
  else if (Array.isArray(n)) {
    out.push('[');
    n.forEach((x, i) => {
      if (i > 0) out.push(',');
      serialize(x, out);
    });
    out.push(']');
  } else {
    out.push('{');
    n.entries.forEach(([k, x], i) => {
      if (i > 0) out.push(',');
      out.push(JSON.stringify(k), ':');
      serialize(x, out);
    });
    out.push('}');
  }
}

const textOf = (n: Node): string => {
  const out: string[] = [];
  serialize(n, out);
  return out.join('');
};

/** Every value position in the tree, the root excluded. */
interface Slot {
  get(): Node;
  set(v: Node): void;
  remove(): void;
  key: string | number;
}

function slotsOf(root: Node): Slot[] {
  const out: Slot[] = [];
  const walk = (n: Node) => {
    if (Array.isArray(n)) {
      n.forEach((x, i) => {
        out.push({
          key: i,
          get: () => n[i]!,
          set: (v) => void (n[i] = v),
          remove: () => void n.splice(i, 1),
        });
        walk(x);
      });
    } else if (n instanceof Obj) {
      n.entries.forEach((e) => {
        out.push({
          key: e[0],
          get: () => e[1],
          set: (v) => void (e[1] = v),
          remove: () => void n.entries.splice(n.entries.indexOf(e), 1),
        });
        walk(e[1]);
      });
    }
  };
  walk(root);
  return out;
}

function objectsOf(root: Node): Obj[] {
  const out: Obj[] = [];
  const walk = (n: Node) => {
    if (n instanceof Obj) {
      out.push(n);
      n.entries.forEach(([, v]) => walk(v));
    } else if (Array.isArray(n)) n.forEach(walk);
  };
  walk(root);
  return out;
}

// ---- value generators --------------------------------------------------------------------------------

// prettier-ignore
const FIELD_NAMES = [
  'type', 'account', 'previous', 'balance', 'timestamp', 'asset', 'representative', 'destination', 'amount',
  'source', 'memo', 'keyset', 'keys', 'threshold', 'signatures', 'public_key', 'signature', 'pub_key',
  'hash', 'pow_nonce', 'index', 'prev_hash', 'ops', 'key', 'value', 'action', 'attestations',
  'certificate_hash', 'lease_min_duration_secs', 'vcpus', 'duration', 'finalized',
];
// prettier-ignore
const PROTO_KEYS = [
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__',
];
// prettier-ignore
const EDGE_INTS: Node[] = [
  0, 1, -1, 2, 255, 256, 65535, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53 - 1, -(2 ** 53 - 1), 2n ** 53n + 1n,
  2n ** 63n - 1n, 2n ** 63n, -(2n ** 63n), -(2n ** 63n) - 1n, 2n ** 64n - 1n, 2n ** 64n, 2n ** 64n + 1n,
  2n ** 128n, -(2n ** 64n), 10n ** 30n, -(10n ** 400n), 10n ** 400n,
];
// prettier-ignore
const NUMBER_TEXTS = [
  '1e400', '-1e400', '1e-400', '1E+2', '1e2', '2e0', '1.5e-7', '-0', '-0.0', '0.0', '1.0', '0.5', '-1.5',
  '123456789012345678901234567890.5', '18446744073709551616.0', '1.8446744073709552e19', '9007199254740993',
  '1' + '0'.repeat(500), '0.' + '0'.repeat(400) + '1', '1e1000000000',
  // not JSON at all
  '01', '+1', '.5', '1.', 'NaN', 'Infinity', '-Infinity', '0x10', '1e', '--1', '1_000', '١٢٣', 'undefined',
];
// prettier-ignore
const NUMERIC_STRINGS = [
  '', '0', '-1', '1', ' 1', '1 ', '+1', '01', '1.0', '1e3', '0x10', '18446744073709551615',
  '18446744073709551616', '-9223372036854775808', '-9223372036854775809', '99999999999999999999999999',
  '１２３', '١٢٣', '1\u0000',
];
// prettier-ignore
const UNICODE_STRINGS = [
  'é', 'e\u0301', '\u0000', '\u0000abc', '\u202eXE', '\ufeffXE', 'X\u200bE', 'ＸＥ', '🍜', '😀'.repeat(20),
  '\ud800', '\udc00', 'a\ud800b', '\udbff\udfff', '\u2028\u2029', 'XE\u0000', 'xe', 'XUSD', 'XUSDXUSDX', 'Ⅹ',
  '\u{10ffff}', '\\', '"', '\r\n',
];
/** Escape sequences as they appear in JSON text: lone surrogates, NUL, and invalid escapes. */
// prettier-ignore
const ESCAPE_TEXTS = [
  '"\\ud800"', '"\\udc00"', '"a\\ud800b"', '"\\ud83d"', '"\\ud83d\\u0041"', '"\\u0000"', '"\\uDFFF\\uD800"',
  '"\\u00e9"', '"\\/"', '"\u007f"',
  // not JSON
  '"\\x41"', '"\\u12"', '"\\u12zz"', '"\\a"', '"a\u0001b"', '"a\nb"', '"a\tb"', "'single'", '"unterminated',
  '"\\"',
];

/**
 * Non-canonical forms of an integer (decisions D3): whatever integer field they land in, the
 * submission must be refused, even where the value would read as the same number (`number-form`).
 */
const NON_CANONICAL_INTS: readonly Node[] = [
  new Raw('1.0'),
  new Raw('1e3'),
  new Raw('-0'),
  '+1',
  '01',
  new Raw('18446744073709551616'),
];

/** Whether a value is an integer as the seeds carry them: a bare integer or a digit string. */
function isIntegerNode(n: Node): boolean {
  if (typeof n === 'bigint') return true;
  if (typeof n === 'number') return Number.isInteger(n);
  if (typeof n === 'string') return /^[0-9]{1,20}$/.test(n);
  return n instanceof Raw && /^-?[0-9]+$/.test(n.text);
}

function hexString(rng: Rng, chars: number): string {
  let s = '';
  for (let i = 0; i < chars; i++) s += '0123456789abcdef'[rng.int(16)];
  return s;
}

function asciiString(rng: Rng, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += String.fromCharCode(rng.range(0x20, 0x7e));
  return s;
}

function deepNesting(rng: Rng): Raw {
  const depth = rng.chance(0.5) ? rng.range(60, 70) : rng.range(100, 5000);
  switch (rng.int(4)) {
    case 0:
      return new Raw('['.repeat(depth) + ']'.repeat(depth));
    case 1:
      return new Raw('{"a":'.repeat(depth) + '0' + '}'.repeat(depth));
    case 2:
      // unclosed
      return new Raw('['.repeat(depth));
    default:
      return new Raw('[{"__proto__":'.repeat(depth) + 'null' + '}]'.repeat(depth));
  }
}

class Budget {
  huge = 0;
}

function hugeString(rng: Rng): string {
  const n = rng.chance(0.5) ? rng.range(64 * 1024, 300 * 1024) : rng.range(900 * 1024, BODY_LIMIT - 2048);
  return rng.chance(0.5) ? 'a'.repeat(n) : 'f0'.repeat(n >> 1);
}

function randomValue(rng: Rng, current: Node, depth = 0): Node {
  switch (rng.int(16)) {
    case 0:
      return asciiString(rng, rng.int(80));
    case 1:
      return hexString(rng, rng.pick([0, 1, 63, 64, 65, 127, 128, 129, rng.int(200)]));
    case 2:
      return rng.pick(EDGE_INTS);
    case 3:
      return new Raw(rng.pick(NUMBER_TEXTS));
    case 4:
      return rng.pick(NUMERIC_STRINGS);
    case 5:
      return rng.pick(UNICODE_STRINGS);
    case 6:
      return new Raw(rng.pick(ESCAPE_TEXTS));
    case 7:
      return null;
    case 8:
      return rng.chance(0.5);
    case 9:
      return depth > 3 ? [] : Array.from({ length: rng.int(4) }, () => randomValue(rng, null, depth + 1));
    case 10:
      return depth > 3
        ? new Obj([])
        : new Obj(
            Array.from({ length: rng.int(4) }, (): [string, Node] => [
              rng.pick(rng.chance(0.3) ? PROTO_KEYS : FIELD_NAMES),
              randomValue(rng, null, depth + 1),
            ]),
          );
    case 11:
      return rng.next() * 10 ** rng.range(-10, 30) * (rng.chance(0.5) ? -1 : 1);
    case 12:
      return typeSwap(rng, current);
    case 13:
      return typeof current === 'string' ? current.slice(0, rng.int(current.length + 1)) : rng.int(2 ** 31);
    case 14:
      return deepNesting(rng);
    default:
      return rng.pick(BLOCK_TYPES as readonly string[]);
  }
}

/** The same value as another JSON type. */
function typeSwap(rng: Rng, v: Node): Node {
  const asString =
    typeof v === 'string' ? v : v instanceof Raw ? v.text : typeof v === 'object' ? textOf(v) : String(v);
  switch (rng.int(7)) {
    case 0:
      return asString;
    case 1:
      return /^-?[0-9]+$/.test(asString) ? BigInt(asString) : asString.length;
    case 2:
      return new Obj([['value', v]]);
    case 3:
      return [v];
    case 4:
      return null;
    case 5:
      return rng.chance(0.5);
    default:
      return /^-?[0-9]+$/.test(asString) ? new Raw(`${asString}.0`) : new Raw(`${asString.length}e0`);
  }
}

/** The part of JSON Schema the route table uses. */
interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

/** A plausible value for a schema: every property, integers just inside their range, hex for hex. */
function exampleOf(rng: Rng, s: Schema, depth = 0): unknown {
  if (s.enum !== undefined && s.enum.length > 0) return s.enum[0];
  const alt = s.oneOf ?? s.anyOf;
  if (alt !== undefined && alt.length > 0) return exampleOf(rng, alt[0]!, depth);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type ?? (s.properties !== undefined ? 'object' : undefined)) {
    case 'object':
      return depth > 4
        ? {}
        : Object.fromEntries(
            Object.entries(s.properties ?? {}).map(([k, v]) => [k, exampleOf(rng, v, depth + 1)]),
          );
    case 'array':
      return s.items === undefined || depth > 4 ? [] : [exampleOf(rng, s.items, depth + 1)];
    case 'integer':
    case 'number': {
      const lo = s.minimum ?? 0;
      const v = lo + 3600;
      return s.maximum !== undefined && v > s.maximum ? s.maximum : v;
    }
    case 'boolean':
      return true;
    case 'string': {
      const hex = s.pattern !== undefined ? /\{(\d+)\}/.exec(s.pattern) : null;
      return hex !== null && s.pattern!.includes('0-9a-f') ? hexString(rng, Number(hex[1])) : 'x';
    }
    default:
      return {};
  }
}

// ---- mutations --------------------------------------------------------------------------------------

interface Seed {
  name: string;
  /** The route its type belongs to. */
  path: string;
  tree: Node;
  /** Hash the node answers with when the seed (or an equivalent form of it) is accepted. */
  hash: string;
  /** A really valid block (it must be accepted unmutated), or just a body shaped by the route's schema. */
  valid: boolean;
}

function structuralMutation(
  rng: Rng,
  root: Node,
  seeds: readonly Seed[],
  budget: Budget,
  ops: string[],
): Node {
  const slots = slotsOf(root);
  const slot = slots.length > 0 ? rng.pick(slots) : undefined;
  const objs = objectsOf(root);
  const obj = objs.length > 0 ? rng.pick(objs) : undefined;
  const k = rng.int(16);
  if (slot === undefined || (k === 14 && obj === undefined)) {
    ops.push('root');
    return randomValue(rng, root);
  }
  switch (k) {
    case 0:
    case 1:
    case 2:
      ops.push(`replace ${slot.key}`);
      slot.set(randomValue(rng, slot.get()));
      return root;
    case 3:
      ops.push(`delete ${slot.key}`);
      slot.remove();
      return root;
    case 4: {
      const v = slot.get();
      if (typeof v === 'string' && v.length > 0) {
        const i = rng.int(v.length);
        ops.push(`flip ${slot.key}[${i}]`);
        slot.set(
          v.slice(0, i) + rng.pick(['0', 'f', 'F', 'g', ' ', 'é', '\u0000', '\ud800', 'Ａ']) + v.slice(i + 1),
        );
      } else {
        ops.push(`typeswap ${slot.key}`);
        slot.set(typeSwap(rng, v));
      }
      return root;
    }
    case 5:
      ops.push(`typeswap ${slot.key}`);
      slot.set(typeSwap(rng, slot.get()));
      return root;
    case 6: {
      ops.push(`edge-number ${slot.key}`);
      slot.set(rng.chance(0.5) ? rng.pick(EDGE_INTS) : new Raw(rng.pick(NUMBER_TEXTS)));
      return root;
    }
    case 7: {
      const v = slot.get();
      ops.push(`truncate ${slot.key}`);
      slot.set(
        typeof v === 'string' ? v.slice(0, rng.int(v.length + 1)) : typeof v === 'bigint' ? v / 10n : v,
      );
      return root;
    }
    case 8: {
      if (!obj || obj.entries.length === 0) return root;
      const [key, value] = rng.pick(obj.entries);
      const dup: Node = rng.chance(0.5) ? randomValue(rng, value) : clone(value);
      ops.push(`duplicate-key ${key}`);
      obj.entries.splice(rng.int(obj.entries.length + 1), 0, [key, dup]);
      return root;
    }
    case 9: {
      if (!obj) return root;
      const key = rng.pick(PROTO_KEYS);
      ops.push(`proto-key ${key}`);
      const v: Node = rng.chance(0.6)
        ? new Obj([[rng.pick(FIELD_NAMES), randomValue(rng, null)]])
        : randomValue(rng, null);
      obj.entries.splice(rng.int(obj.entries.length + 1), 0, [key, v]);
      return root;
    }
    case 10:
      ops.push(`deep-nesting ${slot.key}`);
      slot.set(deepNesting(rng));
      return root;
    case 11: {
      if (rng.next() < HUGE_RATE * 5) {
        budget.huge++;
        ops.push(`huge-string ${slot.key}`);
        slot.set(hugeString(rng));
      } else {
        ops.push(`long-string ${slot.key}`);
        slot.set(rng.chance(0.5) ? 'x'.repeat(rng.range(65, 5000)) : hexString(rng, rng.range(129, 3000)));
      }
      return root;
    }
    case 12: {
      ops.push(`unicode ${slot.key}`);
      const v = slot.get();
      if (rng.chance(0.4)) slot.set(new Raw(rng.pick(ESCAPE_TEXTS)));
      else if (typeof v === 'string') {
        const i = rng.int(v.length + 1);
        slot.set(v.slice(0, i) + rng.pick(UNICODE_STRINGS) + v.slice(i));
      } else slot.set(rng.pick(UNICODE_STRINGS));
      return root;
    }
    case 15:
      return numberForm(rng, root, ops);
    case 13: {
      // A field from another seed (the same name if it has it): valid-looking but wrong.
      const other = rng.pick(seeds).tree;
      const match = other instanceof Obj ? other.entries.find(([key]) => key === slot.key) : undefined;
      ops.push(`cross-seed ${slot.key}`);
      slot.set(clone(match ? match[1] : (rng.pick(slotsOf(other))?.get() ?? null)));
      return root;
    }
    default: {
      if (!obj) return root;
      ops.push('add-field');
      obj.entries.splice(rng.int(obj.entries.length + 1), 0, [
        rng.chance(0.8) ? rng.pick(FIELD_NAMES) : asciiString(rng, rng.int(20)),
        randomValue(rng, null),
      ]);
      return root;
    }
  }
}

/** An integer field (nested ones included) rewritten in a form that is not canonical decimal. */
function numberForm(rng: Rng, root: Node, ops: string[]): Node {
  const slots = slotsOf(root);
  const ints = slots.filter((x) => isIntegerNode(x.get()));
  const target = ints.length > 0 ? rng.pick(ints) : slots.length > 0 ? rng.pick(slots) : undefined;
  if (target === undefined) return root;
  const form = rng.pick(NON_CANONICAL_INTS);
  ops.push(`number-form ${target.key}=${form instanceof Raw ? form.text : JSON.stringify(form)}`);
  target.set(form);
  return root;
}

/** Mutations that leave a valid block valid (a different JSON form of the same block). */
function benignMutation(rng: Rng, root: Node, ops: string[]): Node {
  if (!(root instanceof Obj)) return root;
  switch (rng.int(5)) {
    case 0:
      ops.push('benign: unknown field');
      root.entries.push([`x_${hexString(rng, 6)}`, randomValue(rng, null)]);
      break;
    case 1:
      ops.push('benign: reorder');
      rng.shuffle(root.entries);
      break;
    case 2:
      ops.push('benign: uppercase hex');
      for (const e of root.entries) {
        if (
          ['account', 'previous', 'destination', 'source', 'hash', 'signature'].includes(e[0]) &&
          typeof e[1] === 'string'
        ) {
          e[1] = e[1].toUpperCase();
        }
      }
      break;
    case 3:
      ops.push('benign: bare integers');
      for (const e of root.entries)
        if (typeof e[1] === 'string' && /^[0-9]+$/.test(e[1]) && e[0] !== 'previous') e[1] = BigInt(e[1]);
      break;
    default:
      ops.push('benign: none');
  }
  return root;
}

// prettier-ignore
// prettier-ignore
const INVALID_UTF8: readonly number[][] = [
  [0xff], [0xfe], [0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xe2, 0x82], [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xf0, 0x9f, 0x98],
  [0xe0, 0x80, 0xaf], [0xc3],
];

function byteMutation(rng: Rng, body: Buffer, budget: Budget, ops: string[]): Buffer {
  switch (rng.int(11)) {
    case 0: {
      const n = rng.int(body.length);
      ops.push(`truncate-text ${n}/${body.length}`);
      return body.subarray(0, n);
    }
    case 1:
    case 2: {
      // Invalid UTF-8, preferably inside a string value (right after a quote).
      const seq = Buffer.from(rng.pick(INVALID_UTF8));
      let at = rng.int(body.length + 1);
      if (rng.chance(0.7)) {
        const q = body.indexOf(0x22, rng.int(body.length));
        if (q >= 0) at = q + 1;
      }
      ops.push(`invalid-utf8 ${seq.toString('hex')}@${at}`);
      return Buffer.concat([body.subarray(0, at), seq, body.subarray(at)]);
    }
    case 3: {
      const out = Buffer.from(body);
      const flips = rng.range(1, 5);
      for (let i = 0; i < flips && out.length > 0; i++) out[rng.int(out.length)] = rng.int(256);
      ops.push(`byte-flips ${flips}`);
      return out;
    }
    case 4: {
      const n = rng.chance(0.9) ? rng.int(2048) : rng.int(200_000);
      ops.push(`garbage ${n}`);
      return Buffer.from(rng.bytes(n));
    }
    case 5: {
      const prefix = rng.pick(['\ufeff', ' \n\t\r', '\u00a0', '\u2028', '//x\n', '\ufeff\ufeff']);
      ops.push(`prefix ${JSON.stringify(prefix)}`);
      return Buffer.concat([Buffer.from(prefix), body]);
    }
    case 6: {
      const suffix = rng.pick([
        ',',
        ']',
        '}',
        ' x',
        '\u0000',
        '{}',
        ' \n',
        '\ufeff',
        textOf(new Obj([])),
        body.toString(),
      ]);
      ops.push(`suffix ${JSON.stringify(suffix.slice(0, 10))}`);
      return Buffer.concat([body, Buffer.from(suffix)]);
    }
    case 7:
      ops.push('utf16');
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(body.toString('latin1'), 'utf16le')]);
    case 8:
      if (rng.next() < HUGE_RATE * 10) {
        budget.huge++;
        const pad = rng.range(BODY_LIMIT - body.length + 1, BODY_LIMIT + 200_000);
        ops.push(`over-limit +${pad}`);
        return Buffer.concat([body, Buffer.alloc(pad, 0x20)]);
      }
      ops.push('empty');
      return Buffer.alloc(0);
    case 9: {
      const nul = rng.int(body.length + 1);
      ops.push(`nul@${nul}`);
      return Buffer.concat([body.subarray(0, nul), Buffer.from([0]), body.subarray(nul)]);
    }
    default: {
      const ws = rng.pick(['\u000b', '\u000c', '\u0085', '\u3000']);
      const at = rng.int(body.length + 1);
      ops.push(`odd-whitespace@${at}`);
      return Buffer.concat([body.subarray(0, at), Buffer.from(ws), body.subarray(at)]);
    }
  }
}

const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  undefined,
  'text/plain',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  ';;;',
];

interface Submission {
  path: string;
  seed: Seed;
  ops: string[];
  identity: boolean;
  body: Buffer;
  contentType: string | undefined;
  authorization: string | undefined;
}

interface PostRoute {
  /** The manifest's path, parameters as {name}. */
  template: string;
  /** The path requested (parameters filled in). */
  path: string;
  /** An operator route (bearer token). */
  admin: boolean;
}

function makeSubmission(
  rng: Rng,
  route: PostRoute,
  seeds: readonly Seed[],
  budget: Budget,
  identity: Seed | undefined,
  adminToken: string,
): Submission {
  const { path } = route;
  // The token on (nearly) every operator request, so the fuzz reaches their handlers.
  const authorization = rng.chance(route.admin ? 0.9 : 0.5)
    ? `Bearer ${adminToken}`
    : rng.pick([undefined, 'Bearer x', `Bearer ${adminToken.slice(1)}`, 'Basic Og==']);
  if (identity) {
    const body = Buffer.from(textOf(identity.tree));
    const ops = [`seed ${identity.name}`, 'identity'];
    return {
      path,
      seed: identity,
      ops,
      identity: true,
      body,
      contentType: 'application/json',
      authorization,
    };
  }
  const own = seeds.filter((s) => s.path === path);
  const seed = own.length > 0 && rng.chance(0.85) ? rng.pick(own) : rng.pick(seeds);
  const ops: string[] = [own.includes(seed) ? `seed ${seed.name}` : `foreign seed ${seed.name}`];
  let tree = clone(seed.tree);
  if (seed.valid && own.includes(seed) && rng.chance(0.05)) {
    // Only an integer's form changes (the check above holds such a submission to a refusal).
    tree = numberForm(rng, tree, ops);
    return {
      path,
      seed,
      ops,
      identity: false,
      body: Buffer.from(textOf(tree)),
      contentType: 'application/json',
      authorization,
    };
  }
  if (rng.chance(0.04)) tree = benignMutation(rng, tree, ops);
  else {
    const n = 1 + (rng.chance(0.5) ? 0 : rng.int(4));
    for (let i = 0; i < n; i++) tree = structuralMutation(rng, tree, seeds, budget, ops);
  }
  let body: Buffer = Buffer.from(textOf(tree));
  if (rng.chance(0.25)) body = byteMutation(rng, body, budget, ops);
  const contentType = rng.pick(CONTENT_TYPES);
  return { path, seed, ops, identity: false, body, contentType, authorization };
}

// ---- HTTP ------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  contentType: string | undefined;
  text: string;
}

function post(
  base: URL,
  agent: Agent,
  path: string,
  body: Buffer,
  contentType: string | undefined,
  authorization: string | undefined,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-length': body.length };
    if (contentType !== undefined) headers['content-type'] = contentType;
    if (authorization !== undefined) headers.authorization = authorization;
    const req = request(
      { host: base.hostname, port: base.port, path, method: 'POST', agent, headers, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

// ---- the test --------------------------------------------------------------------------------------

interface Snapshot {
  accounts: Record<string, unknown>[];
  frontiers: Record<string, string>;
  pending: Record<string, unknown>[];
  tip: Record<string, unknown>;
  supply: Record<string, unknown>;
}

type Supply = { assets: Record<string, Record<string, string | boolean>> } & Record<string, unknown>;

describe('fuzzing every POST route of a real node', () => {
  let t: TestNode;
  const seedValue =
    process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 32);
  const rng = new Rng(seedValue);
  const seeds: Seed[] = [];
  /** Seed blocks by hash, for the ledger-effect replay. */
  const seedBlocks = new Map<string, Block>();
  let stateSeed: StateBlock & { hash: string };

  const walletSeed = () => rng.bytes(32);
  const nowNs = () => BigInt(Date.now()) * 1_000_000n;
  /** The node clock is real time plus this: the set-up moves it on so a force-settle window is open. */
  const clock = { offset: 0n };
  const nodeNs = () => nowNs() + clock.offset;

  async function solved(block: Block & { hash: string }): Promise<Block> {
    return { ...block, pow_nonce: await jsPowSolver(hexToBytes(block.hash), TEST_DIFFICULTY) };
  }

  function addSeed(name: string, block: Block): void {
    const tree = toNode(parseJson(stringifyJson(blockToJson(block, 'node'))));
    seeds.push({ name, path: `/blocks/${block.type}`, tree, hash: block.hash!, valid: true });
    seedBlocks.set(block.hash!, block);
  }

  beforeAll(async () => {
    console.log(`fuzz seed: ${seedValue} (re-run with FUZZ_SEED=${seedValue})`);
    t = await startTestNode({ rateLimit: false, genesisSet: LEASE_TIMING, now: nodeNs });
    const wallet = (): Promise<Wallet> => t.wallet(walletSeed());
    const [alice, bob, carol, dave, erin] = [
      await wallet(),
      await wallet(),
      await wallet(),
      await wallet(),
      await wallet(),
    ];
    const minter = await t.wallet(hexToBytes(t.keys.minter.seed_hex));
    const info = await t.client.node();

    // Setup that stays: opened accounts, a pending send, an opened multisig account.
    await alice.claim(500_000_000n);
    await bob.claim(100_000_000n);
    await dave.claim(200_000_000n);
    await erin.claim(100n);
    const toBob = await alice.send(bob.address, 50_000_000n);
    const msSeeds = [walletSeed(), walletSeed(), walletSeed()];
    const msKeys = msSeeds.map((s) => keyPairFromSeed(s).pub_key);
    const ks1 = { keys: [msKeys[0]!, msKeys[1]!].sort(), threshold: 2 };
    const ms1 = multisigAddress(ks1);
    const msOpen = await solved(
      signBlockMultisig(
        {
          type: 'multisig_open',
          account: ms1,
          previous: ZERO_HASH,
          balance: 0n,
          timestamp: nowNs(),
          asset: 'XE',
          keyset: ks1,
        },
        [msSeeds[0]!, msSeeds[1]!],
        info.network_id,
      ),
    );
    await t.client.submit(msOpen);

    // Leases in every state a lease seed needs (reference-behavior.md 4.3), each seed on its own
    // account and lease, so any order of acceptance works: c1 leased L2 (created: P2's accept seed)
    // and L3 (accepted, expired: P3's settle seed); c4 leased L4 (created: c4's cancel seed); c5 leased
    // L5 (accepted long enough ago that its force-settle window is open: c5's force-settle seed);
    // c1 leases again from P2 (the lease seed). Attestations come from the devnet timekeeper.
    const p2Seed = walletSeed();
    const p3Seed = walletSeed();
    const [c1, c4, c5, p2, p3] = [
      await wallet(),
      await wallet(),
      await wallet(),
      await t.wallet(p2Seed),
      await t.wallet(p3Seed),
    ];
    for (const w of [c1, c4, c5, p2, p3]) await w.claim(1_000_000n);
    await minter.mint(5n * LEASE_COST);
    for (const [w, n] of [
      [c1, 3n],
      [c4, 1n],
      [c5, 1n],
    ] as const) {
      const sent = await minter.send(w.address, n * LEASE_COST, 'XUSD');
      await w.receive({
        hash: sent.hash!,
        from: minter.address,
        amount: n * LEASE_COST,
        asset: 'XUSD',
        timestamp: sent.timestamp,
      });
    }
    const certify = async (p: Wallet, seed: Uint8Array) => {
      const cert = testCertificate(p.key, seed, info.network_id);
      await t.node.certificates.add(cert);
      return cert.hash;
    };
    const cert2 = await certify(p2, p2Seed);
    const cert3 = await certify(p3, p3Seed);
    const commit = async (w: Wallet, fields: Parameters<Wallet['prepare']>[0]) => {
      const b = await w.prepare(fields);
      await t.client.submit(b);
      w.advance(b);
      return b;
    };
    const leaseFields = (c: Wallet, provider: Wallet, cert: string) => ({
      type: 'lease' as const,
      asset: 'XUSD',
      destination: provider.address,
      amount: LEASE_COST,
      ...LEASE_TERMS,
      access_pub_key: 'ef'.repeat(32),
      certificate_hash: cert,
      balance: c.balances.XUSD! - LEASE_COST,
    });
    const acceptFields = (p: Wallet, lease: Block, at: bigint) => ({
      type: 'lease_accept' as const,
      asset: 'XUSD',
      source: lease.hash!,
      amount: 0n,
      balance: p.balances.XUSD ?? 0n,
      attestations: [attest(t, lease.hash!, at)],
      certificate_hash: lease.certificate_hash!,
      ...LOCKED,
    });
    const l2 = await commit(c1, leaseFields(c1, p2, cert2));
    const l3 = await commit(c1, leaseFields(c1, p3, cert3));
    const l4 = await commit(c4, leaseFields(c4, p2, cert2));
    const l5 = await commit(c5, leaseFields(c5, p3, cert3));
    // L5 starts 5 minutes ago by the timekeeper, so it expires 4 minutes ago: its force-settle window
    // is [expiry + 22 min, expiry + 30 min). The node clock then moves on 14 minutes, so that window
    // is within the 10-minute attestation skew of the node clock for the rest of the test.
    const expiry5 = nodeNs() - 4n * MINUTE_NS;
    await commit(p3, acceptFields(p3, l5, expiry5 - MINUTE_NS));
    clock.offset = 14n * MINUTE_NS;
    // L3 starts 5 minutes ago on the moved clock: expired, its settle window [expiry, expiry + 1 min].
    const expiry3 = nodeNs() - 4n * MINUTE_NS;
    await commit(p3, acceptFields(p3, l3, expiry3 - MINUTE_NS));

    // Valid blocks, signed and solved but never submitted: the material the mutations start from.
    addSeed(
      'claim (opening)',
      await carol.prepare({ type: 'claim', asset: 'XE', amount: 300_000_000n, balance: 300_000_000n }),
    );
    addSeed('claim', await erin.prepare({ type: 'claim', asset: 'XE', amount: 5_000n, balance: 5_100n }));
    addSeed(
      'send',
      await alice.prepare({
        type: 'send',
        asset: 'XE',
        destination: bob.address,
        amount: 10_000_000n,
        memo: 'fuzz ✓ ü',
        balance: alice.balances.XE! - 10_000_000n,
      }),
    );
    addSeed(
      'receive',
      await bob.prepare({
        type: 'receive',
        asset: 'XE',
        source: toBob.hash,
        balance: bob.balances.XE! + 50_000_000n,
      }),
    );
    addSeed(
      'burn',
      await dave.prepare({
        type: 'burn',
        asset: 'XE',
        amount: 1_000_000n,
        balance: dave.balances.XE! - 1_000_000n,
      }),
    );
    addSeed(
      'mint',
      await minter.prepare({
        type: 'mint',
        asset: 'XUSD',
        amount: 777n,
        balance: minter.balances.XUSD! + 777n,
      }),
    );
    addSeed('lease', await c1.prepare(leaseFields(c1, p2, cert2)));
    addSeed('lease_accept', await p2.prepare(acceptFields(p2, l2, nodeNs())));
    addSeed(
      'lease_settle',
      await p3.prepare({
        type: 'lease_settle',
        asset: 'XE',
        source: l3.hash!,
        amount: LEASE_EMISSION,
        balance: p3.balances.XE! + LEASE_EMISSION,
        attestations: [attest(t, l3.hash!, expiry3 + 1_000_000_000n)],
      }),
    );
    addSeed(
      'lease_cancel',
      await c4.prepare({
        type: 'lease_cancel',
        asset: 'XUSD',
        source: l4.hash!,
        balance: c4.balances.XUSD! + LEASE_COST,
      }),
    );
    addSeed(
      'lease_force_settle',
      await c5.prepare({
        type: 'lease_force_settle',
        asset: 'XUSD',
        source: l5.hash!,
        balance: c5.balances.XUSD! + LEASE_COST,
        attestations: [attest(t, l5.hash!, expiry5 + 23n * MINUTE_NS)],
      }),
    );
    const ks2 = { keys: [msKeys[1]!, msKeys[2]!].sort(), threshold: 1 };
    addSeed(
      'multisig_open',
      await solved(
        signBlockMultisig(
          {
            type: 'multisig_open',
            account: multisigAddress(ks2),
            previous: ZERO_HASH,
            balance: 0n,
            timestamp: nowNs(),
            asset: 'XE',
            keyset: ks2,
          },
          [msSeeds[1]!],
          info.network_id,
        ),
      ),
    );
    addSeed(
      'multisig_update',
      await solved(
        signBlockMultisig(
          {
            type: 'multisig_update',
            account: ms1,
            previous: msOpen.hash!,
            balance: 0n,
            timestamp: nowNs(),
            asset: 'XE',
            keyset: { keys: [...msKeys].sort(), threshold: 2 },
          },
          [msSeeds[0]!, msSeeds[1]!],
          info.network_id,
        ),
      ),
    );

    const tip = await t.client.get<{ index: number | bigint; hash: string; timestamp: number | bigint }>(
      '/statechain/tip',
    );
    let sb: StateBlock = {
      index: BigInt(tip.index) + 1n,
      prev_hash: tip.hash,
      ops: [
        { type: 'set', key: 'app.fuzz/seed', value: `{"seed": ${seedValue}, "note": "fuzz \\u00e9"}` },
        { type: 'delete', key: 'app.nothing' },
      ],
      signatures: [],
      timestamp: nowNs(),
    };
    for (const k of t.keys.dao.slice(0, t.keys.dao_threshold))
      sb = signStateBlock(sb, hexToBytes(k.seed_hex));
    stateSeed = sb as StateBlock & { hash: string };
    seeds.push({
      name: 'state block',
      path: '/statechain/blocks',
      tree: toNode(
        parseJson(stringifyJson(stateBlockToJson(sb)), {
          raw: (p) => p.length === 3 && p[0] === 'ops' && p[2] === 'value',
        }),
      ),
      hash: sb.hash!,
      valid: true,
    });
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
  });

  it(`${RUNS_PER_ROUTE.toLocaleString('en')} mutated submissions per POST route: no 5xx, no crash, no ledger change but valid blocks`, async () => {
    const base = new URL(t.node.url);
    const get = <T>(path: string) => t.client.get<T>(path);
    const snapshot = async (): Promise<Snapshot> => ({
      accounts: await get('/accounts?limit=1000'),
      frontiers: await get('/frontiers?limit=1000'),
      pending: await get('/pending?limit=1000'),
      tip: await get('/statechain/tip'),
      supply: await get('/supply'),
    });

    // Every POST route the node lists, so a new one is fuzzed without touching this test. A route
    // without a valid seed gets one shaped by its OpenAPI request schema (so mutations start near
    // something the handler reads); operator routes get the admin token.
    const manifest = await get<{ endpoints: { method: string; path: string }[] }>('/');
    type Operation = {
      requestBody?: { content?: Record<string, { schema?: Schema }> };
      security?: unknown[];
    };
    const openapi = await get<{ paths: Record<string, { post?: Operation }> }>('/openapi.json');
    const routes: PostRoute[] = manifest.endpoints
      .filter((e) => e.method === 'POST')
      .map((e) => ({
        template: e.path,
        path: e.path.replace(/\{[^}]+\}/g, () => hexString(rng, 64)),
        admin: (openapi.paths[e.path]?.post?.security?.length ?? 0) > 0,
      }));
    const postPaths = routes.map((r) => r.path);
    expect(postPaths).toContain('/blocks/claim');
    expect(postPaths).toContain('/statechain/blocks');
    expect(postPaths.length).toBeGreaterThanOrEqual(14);
    const seededPaths = new Set(seeds.filter((s) => s.valid).map((s) => s.path));
    for (const r of routes) {
      if (seededPaths.has(r.path)) continue;
      const schema = openapi.paths[r.template]?.post?.requestBody?.content?.['application/json']?.schema;
      const tree = toNode(parseJson(stringifyJson(exampleOf(rng, schema ?? {}))));
      seeds.push({ name: `schema of ${r.template}`, path: r.path, tree, hash: '', valid: false });
    }

    const before = await snapshot();
    const supplyAt = Date.now();

    // The schedule: RUNS_PER_ROUTE per route, interleaved; a few unmutated seeds among them.
    const schedule: { route: PostRoute; identity?: Seed }[] = [];
    for (const route of routes) {
      const identities = seeds
        .filter((s) => s.valid && s.path === route.path)
        .flatMap((s) => Array<Seed>(IDENTITY_SUBMISSIONS).fill(s));
      for (let i = 0; i < RUNS_PER_ROUTE; i++) schedule.push({ route, identity: identities[i] });
    }
    rng.shuffle(schedule);

    const budget = new Budget();
    const perRoute = new Map<string, Record<string, number>>(postPaths.map((p) => [p, {}]));
    /** 2xx answers of routes this test has no valid block for (their effects must leave no trace either). */
    const otherSuccess = new Map<string, number>();
    const failures: string[] = [];
    const accepted = new Map<string, string>(); // hash -> seed name
    const acceptedIdentity = new Set<string>();
    /** Mutation kinds that still produced a valid block (an equivalent form of a seed). */
    const harmless = new Map<string, number>();
    /** Every distinct 201 answer to a ledger block, by hash, with the first submission that drew it. */
    const answers = new Map<string, Map<string, string>>();
    let retryable503 = 0;
    /** Valid seeds submitted with one integer in a non-canonical form (each must be refused). */
    let numberForms = 0;
    const started = Date.now();
    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

    const describeSub = (s: Submission) =>
      `POST ${s.path} [${s.ops.join('; ')}] content-type=${String(s.contentType)} body(${s.body.length} B)=` +
      JSON.stringify(s.body.subarray(0, 160).toString('latin1'));

    function check(s: Submission, a: Answer): void {
      const fail = (why: string) => {
        if (failures.length < 50)
          failures.push(`${why}: ${a.status} ${a.text.slice(0, 300)}\n    ${describeSub(s)}`);
      };
      if (s.ops.length === 2 && s.ops[1]!.startsWith('number-form ') && s.seed.valid) numberForms++;
      const counts = perRoute.get(s.path)!;
      counts[a.status] = (counts[a.status] ?? 0) + 1;
      if (a.contentType !== 'application/json; charset=utf-8') fail(`content-type ${String(a.contentType)}`);
      let body: unknown;
      try {
        body = JSON.parse(a.text);
      } catch {
        return fail('answer is not JSON');
      }
      const o =
        typeof body === 'object' && body !== null && !Array.isArray(body)
          ? (body as Record<string, unknown>)
          : {};
      if (a.status >= 400) {
        if (typeof o.error !== 'string') fail('error answer without an error string');
        if (a.status === 503) {
          retryable503++;
          const keys = Object.keys(o).sort().join(',');
          if (
            keys !== 'error,retryable' ||
            o.retryable !== true ||
            !(o.error as string).startsWith('block rejected: ')
          ) {
            fail('503 that is not a retryable block rejection');
          }
        } else if (a.status >= 500) fail('5xx');
        if (s.identity) fail('an unmutated valid block was refused');
        return;
      }
      // A valid seed with nothing changed but one integer's form: never an equivalent form of it.
      if (s.ops.length === 2 && s.ops[1]!.startsWith('number-form ') && s.seed.valid)
        return fail('accepted an integer in a non-canonical form');
      if (!seededPaths.has(s.path)) {
        otherSuccess.set(s.path, (otherSuccess.get(s.path) ?? 0) + 1);
        return;
      }
      if (a.status !== 201) return fail('success other than 201');
      // Accepted: it must be one of the valid seeds (or an equivalent JSON form of it) on its own route.
      const hash = o.hash;
      const seed = seeds.find((x) => x.hash === hash);
      if (!seed?.valid) return fail('accepted a block that is not a valid seed');
      if (seed.path !== s.path) return fail(`accepted seed ${seed.name} on the wrong route`);
      accepted.set(seed.hash, seed.name);
      // Harmless only if the answer is the stored block byte for byte (checked after the run): a
      // 201 that echoes a forged signature or any other field the client changed is a failure.
      if (s.path.startsWith('/blocks/')) {
        const texts = answers.get(seed.hash) ?? new Map<string, string>();
        if (!texts.has(a.text)) texts.set(a.text, describeSub(s));
        answers.set(seed.hash, texts);
      }
      if (s.identity) acceptedIdentity.add(seed.hash);
      else {
        const kinds = s.ops
          .slice(1)
          .map((op) => op.replace(/ .*/, ''))
          .join('+');
        harmless.set(kinds, (harmless.get(kinds) ?? 0) + 1);
      }
    }

    let next = 0;
    const resets = new Map<string, number>();
    const worker = async () => {
      while (next < schedule.length) {
        const item = schedule[next++]!;
        const sub = makeSubmission(rng, item.route, seeds, budget, item.identity, t.node.adminToken!);
        try {
          check(sub, await post(base, agent, sub.path, sub.body, sub.contentType, sub.authorization));
        } catch (e) {
          // The node may close the connection on an over-limit body after answering; nothing else.
          if (sub.body.length > BODY_LIMIT) resets.set(sub.path, (resets.get(sub.path) ?? 0) + 1);
          else if (failures.length < 50)
            failures.push(`transport error ${(e as Error).message}\n    ${describeSub(sub)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    agent.destroy();
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `fuzz seed ${seedValue}: ${schedule.length} submissions to ${postPaths.length} routes in ${seconds.toFixed(1)} s ` +
        `(${Math.round(schedule.length / seconds)}/s), ${budget.huge} huge bodies, ${retryable503} retryable 503s, ` +
        `${[...resets.values()].reduce((a, b) => a + b, 0)} resets after over-limit bodies, ` +
        `${numberForms} valid seeds with a non-canonical integer refused, ` +
        `accepted: ${[...accepted.values()].join(', ')}; other 2xx: ${JSON.stringify(Object.fromEntries(otherSuccess))}`,
    );
    for (const [path, counts] of perRoute) console.log(`  ${path}: ${JSON.stringify(counts)}`);
    const top = [...harmless].sort((a, b) => b[1] - a[1]).slice(0, 12);
    console.log(`  mutations that still made a valid block: ${top.map(([k, n]) => `${k} ${n}`).join(', ')}`);

    for (const [hash, texts] of answers) {
      const stored = { ...(await get<Record<string, JsonValue>>(`/blocks/${hash}`)) };
      delete stored.finalized;
      const storedText = stringifyJson(stored);
      for (const [text, sub] of texts)
        if (text !== storedText && failures.length < 50)
          failures.push(`201 that is not the stored block: ${text.slice(0, 300)}\n    ${sub}`);
    }
    expect(failures, `fuzz seed ${seedValue}`).toEqual([]);
    for (const path of postPaths) {
      const total = Object.values(perRoute.get(path)!).reduce((a, b) => a + b, 0);
      expect(total + (resets.get(path) ?? 0)).toBe(RUNS_PER_ROUTE);
    }
    // Each valid seed got through unmutated (so each route really accepts valid input).
    expect([...acceptedIdentity].sort()).toEqual(
      seeds
        .filter((s) => s.valid)
        .map((s) => s.hash)
        .sort(),
    );

    // Still alive and well.
    const health = await t.client.request('GET', '/health');
    expect(health.status).toBe(200);

    // Every accepted block is really there.
    for (const hash of accepted.keys()) {
      if (hash === stateSeed.hash) {
        const stored = await get<{ hash: string }>(`/statechain/blocks/${stateSeed.index}`);
        expect(stored.hash).toBe(hash);
      } else {
        const b = await t.client.block(hash);
        expect(b?.block.hash).toBe(hash);
      }
    }

    // The ledger moved by exactly the accepted blocks: everything refused left no trace.
    await new Promise((r) => setTimeout(r, Math.max(0, 2100 - (Date.now() - supplyAt)))); // /supply caches 2 s
    const after = await snapshot();
    const expected = expectedAfter(
      before,
      [...accepted.keys()].filter((h) => seedBlocks.has(h)).map((h) => seedBlocks.get(h)!),
    );
    expect(after.accounts).toEqual(expected.accounts);
    expect(after.frontiers).toEqual(expected.frontiers);
    const byHash = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      (a.hash as string) < (b.hash as string) ? -1 : 1;
    expect([...after.pending].sort(byHash)).toEqual([...expected.pending].sort(byHash));
    if (accepted.has(stateSeed.hash)) {
      expect(after.tip.hash).toBe(stateSeed.hash);
      expect(BigInt(after.tip.index as number)).toBe(BigInt(before.tip.index as number) + 1n);
    } else expect(after.tip).toEqual(before.tip);
    const volatile = ['computed_at', 'duration_ms', 'attempts', 'stable'];
    const strip = (s: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(s).filter(([k]) => !volatile.includes(k)));
    expect(strip(after.supply)).toEqual(strip(expected.supply));
    expect(after.supply.conserved).toBe(true);
  }, 420_000);
});

/** The snapshot `before` with the effects of `blocks` (accepted seeds, on distinct accounts) applied. */
function expectedAfter(before: Snapshot, blocks: Block[]): Snapshot {
  type AccountEntry = Record<string, unknown> & { balances: Record<string, string> };
  const accounts: AccountEntry[] = before.accounts.map((a) => ({
    ...a,
    balances: { ...(a.balances as Record<string, string>) },
  }));
  const frontiers = { ...before.frontiers };
  let pending = [...before.pending];
  const supply = parseJson(stringifyJson(before.supply)) as unknown as Supply;
  const bump = (asset: string, field: string, delta: bigint) => {
    const a = supply.assets[asset]!;
    a[field] = (BigInt(a[field] as string) + delta).toString();
  };
  for (const b of blocks) {
    let acct = accounts.find((a) => a.address === b.account);
    if (!acct) {
      acct = { address: b.account, balances: {}, block_count: 0 };
      accounts.push(acct);
      supply.accounts = (supply.accounts as number) + 1;
    }
    acct.balances[b.asset] = b.balance.toString();
    if (b.balance === 0n) delete acct.balances[b.asset];
    acct.block_count = Number(acct.block_count) + 1;
    acct.frontier = b.hash;
    acct.last_block_timestamp = b.timestamp;
    if (b.representative) acct.representative = b.representative;
    frontiers[b.account] = b.hash!;
    supply.blocks = (supply.blocks as number) + 1;
    const amount = b.amount ?? 0n;
    switch (b.type) {
      case 'claim':
        bump('XE', 'faucet', amount);
        bump('XE', 'created', amount);
        bump('XE', 'balances', amount);
        break;
      case 'mint':
        bump('XUSD', 'minted', amount);
        bump('XUSD', 'created', amount);
        bump('XUSD', 'balances', amount);
        break;
      case 'burn':
        bump(b.asset, 'burned', amount);
        bump(b.asset, 'destroyed', amount);
        bump(b.asset, 'balances', -amount);
        break;
      case 'send':
        bump(b.asset, 'balances', -amount);
        bump(b.asset, 'in_flight', amount);
        pending.push({
          hash: b.hash,
          from: b.account,
          to: b.destination,
          amount: amount.toString(),
          asset: b.asset,
          timestamp: b.timestamp,
          source: b.hash,
          destination: b.destination,
        });
        supply.pending = (supply.pending as number) + 1;
        break;
      case 'receive':
      case 'lease_cancel':
      case 'lease_force_settle': {
        // The send, or the lease's escrow (the provider's pending entry), back to the account.
        const p = pending.find((x) => x.hash === b.source)!;
        bump(p.asset as string, 'balances', BigInt(p.amount as string));
        bump(p.asset as string, 'in_flight', -BigInt(p.amount as string));
        pending = pending.filter((x) => x.hash !== b.source);
        supply.pending = (supply.pending as number) - 1;
        break;
      }
      case 'lease':
        // The escrow: a pending entry for the provider, keyed by the lease hash.
        bump(b.asset, 'balances', -amount);
        bump(b.asset, 'in_flight', amount);
        pending.push({
          hash: b.hash,
          from: b.account,
          to: b.destination,
          amount: amount.toString(),
          asset: b.asset,
          timestamp: b.timestamp,
          source: b.hash,
          destination: b.destination,
        });
        supply.pending = (supply.pending as number) + 1;
        break;
      case 'lease_settle': {
        // The provider is paid the emission; the escrow is burned (no stake on this network).
        const p = pending.find((x) => x.hash === b.source)!;
        bump('XE', 'emitted', amount);
        bump('XE', 'created', amount);
        bump('XE', 'balances', amount);
        bump(p.asset as string, 'escrow_burned', BigInt(p.amount as string));
        bump(p.asset as string, 'destroyed', BigInt(p.amount as string));
        bump(p.asset as string, 'in_flight', -BigInt(p.amount as string));
        pending = pending.filter((x) => x.hash !== b.source);
        supply.pending = (supply.pending as number) - 1;
        break;
      }
      default:
        break;
    }
  }
  for (const a of Object.values(supply.assets)) {
    a.observed = (BigInt(a.balances as string) + BigInt(a.in_flight as string)).toString();
    a.accounted = (BigInt(a.observed) + BigInt(a.destroyed as string)).toString();
  }
  accounts.sort((a, b) => ((a.address as string) < (b.address as string) ? -1 : 1));
  return { accounts, frontiers, pending, tip: before.tip, supply };
}
