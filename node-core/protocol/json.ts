import { ProtocolError } from './errors.ts';

/**
 * Lossless JSON (decisions D3, protocol.md section 5.4).
 *
 * `JSON.parse` rounds integers above 2^53 and drops the exact text of values. This parser:
 * - returns integer literals outside the safe range as `bigint` (safe ones stay `number`, so ordinary
 *   fields such as thresholds keep their usual type);
 * - returns a whole number written otherwise than as an integer (`1.0`, `1e3`, `-0`) as a RawJson of
 *   its text, so that no reader mistakes it for an integer literal; other fractions stay `number`;
 * - can hand back the exact source text of chosen values as `RawJson` (state-chain values are hashed
 *   byte for byte as submitted, protocol.md section 7.2);
 * - refuses what JSON refuses (trailing commas, comments, lone surrogates in escapes are kept as
 *   JSON allows), and bounds nesting depth so hostile input cannot exhaust the stack.
 */
export class RawJson {
  /** Exact source text of the value, whitespace included. */
  readonly text: string;
  /** The parsed value (lossless, as the rest of the document). */
  readonly value: JsonValue;
  constructor(text: string, value: JsonValue) {
    this.text = text;
    this.value = value;
  }
}

export type JsonValue =
  null | boolean | number | bigint | string | RawJson | JsonValue[] | { [key: string]: JsonValue };

export type JsonPath = readonly (string | number)[];

export interface ParseOptions {
  /** Return a RawJson for values at paths where this answers true. */
  raw?: (path: JsonPath) => boolean;
  /** Maximum nesting of arrays and objects (default 64). */
  maxDepth?: number;
  /**
   * Refuse (ERR_JSON_NUMBER) a number that could not be written back exactly: one beyond the range
   * of a double (1e400 is Infinity), or a whole number beyond 2^53 not written as an integer (1e21),
   * which is neither a bigint nor a safe number. Checked as each number is read: a walk over the
   * parsed body afterwards cost every request 2 µs (issue #18).
   */
  exactNumbers?: boolean;
}

/**
 * A parsed JSON object: no prototype chain beyond an empty object of its own, so keys such as
 * "__proto__" or "constructor" are plain data, never a prototype change or an inherited value.
 * Made with `new`, not `Object.create(null)`: V8 keeps a null-prototype object in dictionary mode,
 * where every field is a hash lookup: copying a block's body (the block routes spread it) and decoding
 * it cost 5.2 µs against 2.9 (issue #18).
 */
const JsonObject = function JsonObject(this: object) {} as unknown as new () => object;
JsonObject.prototype = Object.create(null) as object;

class Parser {
  private i = 0;
  private readonly text: string;
  private readonly raw: ParseOptions['raw'];
  private readonly exactNumbers: boolean;
  private readonly maxDepth: number;
  private readonly path: (string | number)[] = [];

  constructor(text: string, opts: ParseOptions) {
    this.text = text;
    this.raw = opts.raw;
    this.exactNumbers = opts.exactNumbers === true;
    this.maxDepth = opts.maxDepth ?? 64;
  }

  parseDocument(): JsonValue {
    this.skipWs();
    const v = this.value(0);
    this.skipWs();
    if (this.i !== this.text.length) this.fail('unexpected text after the JSON value');
    return v;
  }

  private fail(msg: string): never {
    throw new ProtocolError('ERR_JSON', `${msg} at position ${this.i}`);
  }

  private skipWs(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.i); // NaN past the end: not whitespace
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.i++;
    }
  }

  private value(depth: number): JsonValue {
    if (this.raw === undefined) return this.bareValue(depth);
    const start = this.i;
    const v = this.bareValue(depth);
    if (this.raw(this.path)) return new RawJson(this.text.slice(start, this.i), v);
    return v;
  }

  private bareValue(depth: number): JsonValue {
    const c = this.text.charCodeAt(this.i);
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x22) return this.string();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (this.text.startsWith('true', this.i)) return ((this.i += 4), true);
    if (this.text.startsWith('false', this.i)) return ((this.i += 5), false);
    if (this.text.startsWith('null', this.i)) return ((this.i += 4), null);
    return this.fail(this.i >= this.text.length ? 'unexpected end of JSON' : 'unexpected character');
  }

  private object(depth: number): { [key: string]: JsonValue } {
    if (depth > this.maxDepth) this.fail('JSON nested too deeply');
    this.i++; // {
    const out = new JsonObject() as { [key: string]: JsonValue };
    this.skipWs();
    if (this.text.charCodeAt(this.i) === 0x7d) return (this.i++, out);
    for (;;) {
      this.skipWs();
      if (this.text.charCodeAt(this.i) !== 0x22) this.fail('expected a string key');
      const key = this.string();
      this.skipWs();
      if (this.text.charCodeAt(this.i) !== 0x3a) this.fail("expected ':'");
      this.i++;
      this.skipWs();
      // The path is kept only for the `raw` option, the one reader of it.
      if (this.raw === undefined) out[key] = this.bareValue(depth);
      else {
        this.path.push(key);
        out[key] = this.value(depth);
        this.path.pop();
      }
      this.skipWs();
      const c = this.text.charCodeAt(this.i);
      if (c === 0x2c) {
        this.i++;
        continue;
      }
      if (c === 0x7d) return (this.i++, out);
      this.fail("expected ',' or '}'");
    }
  }

  private array(depth: number): JsonValue[] {
    if (depth > this.maxDepth) this.fail('JSON nested too deeply');
    this.i++; // [
    const out: JsonValue[] = [];
    this.skipWs();
    if (this.text.charCodeAt(this.i) === 0x5d) return (this.i++, out);
    for (;;) {
      this.skipWs();
      if (this.raw === undefined) out.push(this.bareValue(depth));
      else {
        this.path.push(out.length);
        out.push(this.value(depth));
        this.path.pop();
      }
      this.skipWs();
      const c = this.text.charCodeAt(this.i);
      if (c === 0x2c) {
        this.i++;
        continue;
      }
      if (c === 0x5d) return (this.i++, out);
      this.fail("expected ',' or ']'");
    }
  }

  private string(): string {
    const start = ++this.i; // opening quote
    // Fast path: no escapes.
    for (;;) {
      if (this.i >= this.text.length) this.fail('unterminated string');
      const c = this.text.charCodeAt(this.i);
      if (c === 0x22) {
        const s = this.text.slice(start, this.i);
        this.i++;
        return s;
      }
      if (c === 0x5c) break;
      if (c < 0x20) this.fail('control character in string');
      this.i++;
    }
    // Slow path with escapes: JSON.parse handles exactly the JSON escape grammar.
    let j = this.i;
    for (;;) {
      if (j >= this.text.length) this.fail('unterminated string');
      const c = this.text.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) break;
      else {
        if (c < 0x20) this.fail('control character in string');
        j++;
      }
    }
    let s: string;
    try {
      s = JSON.parse(this.text.slice(start - 1, j + 1)) as string;
    } catch {
      this.fail('bad escape in string');
    }
    this.i = j + 1;
    return s;
  }

  private number(): number | bigint | RawJson {
    const start = this.i;
    if (this.text.charCodeAt(this.i) === 0x2d) this.i++;
    const intStart = this.i;
    while (this.isDigit()) this.i++;
    const intLen = this.i - intStart;
    if (intLen === 0) this.fail('bad number');
    if (intLen > 1 && this.text.charCodeAt(intStart) === 0x30) this.fail('leading zero in number');
    let isInt = true;
    if (this.text.charCodeAt(this.i) === 0x2e) {
      isInt = false;
      this.i++;
      const f = this.i;
      while (this.isDigit()) this.i++;
      if (this.i === f) this.fail('bad fraction');
    }
    const e = this.text.charCodeAt(this.i);
    if (e === 0x65 || e === 0x45) {
      isInt = false;
      this.i++;
      const s = this.text.charCodeAt(this.i);
      if (s === 0x2b || s === 0x2d) this.i++;
      const d = this.i;
      while (this.isDigit()) this.i++;
      if (this.i === d) this.fail('bad exponent');
    }
    const lit = this.text.slice(start, this.i);
    const n = Number(lit);
    // `1.0`, `1e3` and `-0` are whole numbers not written as integers: as plain numbers they would
    // pass for the integers they equal, which 64-bit fields must refuse (decisions D3). They keep
    // their text, and their value beside it.
    if (isInt ? Object.is(n, -0) : Number.isInteger(n)) {
      if (this.exactNumbers && !Number.isSafeInteger(n)) this.inexact(start);
      return new RawJson(lit, n);
    }
    if (isInt && !Number.isSafeInteger(n)) return BigInt(lit);
    if (this.exactNumbers && !Number.isFinite(n)) this.inexact(start);
    return n;
  }

  private inexact(at: number): never {
    throw new ProtocolError(
      'ERR_JSON_NUMBER',
      `a number that cannot be written back exactly at position ${at}`,
    );
  }

  private isDigit(): boolean {
    const c = this.text.charCodeAt(this.i);
    return c >= 0x30 && c <= 0x39;
  }
}

/** Parses JSON text losslessly. Throws ProtocolError('ERR_JSON') on malformed input. */
export function parseJson(text: string, opts: ParseOptions = {}): JsonValue {
  return new Parser(text, opts).parseDocument();
}

/**
 * Serializes to JSON (compact, or indented by `indent` spaces): bigint as bare digits (every digit, never exponent form), RawJson as
 * its exact text, `undefined` object members omitted. Refuses non-finite numbers and integral
 * numbers beyond 2^53 (they have already lost precision: such values must be bigint).
 */
export function stringifyJson(value: unknown, indent = 0): string {
  return write(value, indent > 0 ? ' '.repeat(indent) : '', '');
}

/**
 * Object keys as JSON strings, kept: the same few keys (a block's fields) are written for every
 * answer. Bounded, as keys come from data too (an app's stored documents).
 */
const quotedKeys = new Map<string, string>();

function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < 1024) quotedKeys.set(k, q);
  }
  return q;
}

/**
 * One value's text. Built by concatenation, own keys walked with for-in: Object.entries, a parts
 * array and a join made an answer's block cost 3.1-3.7 µs against 1.9 this way (ingest profile:
 * the 201's body was among the largest allocators per block).
 */
function write(v: unknown, step: string, pad: string): string {
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      if (!Number.isFinite(v)) throw new TypeError('cannot serialize a non-finite number');
      if (Number.isInteger(v) && !Number.isSafeInteger(v)) {
        throw new TypeError(`integer ${v} exceeds 2^53: use bigint`);
      }
      return JSON.stringify(v);
    case 'string':
    case 'boolean':
      return JSON.stringify(v);
    case 'object': {
      if (v === null) return 'null';
      if (v instanceof RawJson) return v.text;
      const inner = pad + step;
      if (Array.isArray(v)) {
        if (v.length === 0) return '[]';
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += ',';
          if (step) out += '\n' + inner;
          const item: unknown = v[i];
          out += write(item === undefined ? null : item, step, inner);
        }
        return out + (step ? `\n${pad}]` : ']');
      }
      let out = '{';
      let empty = true;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        const item = (v as Record<string, unknown>)[k];
        if (item === undefined) continue;
        if (!empty) out += ',';
        empty = false;
        if (step) out += '\n' + inner;
        out += quotedKey(k) + (step ? ': ' : ':') + write(item, step, inner);
      }
      return empty ? '{}' : out + (step ? `\n${pad}}` : '}');
    }
    default:
      throw new TypeError(`cannot serialize a ${typeof v}`);
  }
}
