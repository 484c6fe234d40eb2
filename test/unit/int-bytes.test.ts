import { describe, expect, it } from 'vitest';
import { I64_MAX, I64_MIN, readI64BE, readU64BE, U64_MAX, writeU64BE } from '../../node-core/protocol/int.ts';

/** DataView's own big-endian 64-bit writer: the reference the protocol's writer must match. */
function viaDataView(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, v));
  return out;
}

/** Values at every byte and half boundary, the ends of both ranges, and a nanosecond timestamp. */
const EDGES: bigint[] = [
  0n,
  1n,
  0x7fn,
  0x80n,
  0xffn,
  0x100n,
  U64_MAX,
  I64_MAX,
  I64_MIN,
  -1n,
  1764661000123456789n,
];
for (let bit = 8n; bit < 64n; bit += 8n) EDGES.push((1n << bit) - 1n, 1n << bit, (1n << bit) + 1n);
EDGES.push((1n << 31n) - 1n, 1n << 31n, (1n << 32n) - 1n, 1n << 32n, (1n << 63n) - 1n, 1n << 63n);

describe('64-bit integers as bytes (protocol int.ts)', () => {
  it('writes u64 and i64 as 8 bytes big-endian two’s complement, and reads them back', () => {
    for (const v of EDGES) {
      const expected = viaDataView(v);
      const out = new Uint8Array(13).fill(0xee);
      writeU64BE(out, 3, v);
      expect(out.subarray(3, 11), String(v)).toEqual(expected);
      // The bytes around the value are left alone.
      expect([...out.subarray(0, 3), ...out.subarray(11)]).toEqual([0xee, 0xee, 0xee, 0xee, 0xee]);
      expect(readU64BE(out, 3), String(v)).toBe(BigInt.asUintN(64, v));
      expect(readI64BE(out, 3), String(v)).toBe(BigInt.asIntN(64, v));
    }
  });

  it('matches DataView on pseudo-random values over the whole range', () => {
    // A fixed linear congruential sequence: the same values every run.
    let x = 0x243f6a8885a308d3n;
    for (let i = 0; i < 2000; i++) {
      x = BigInt.asUintN(64, x * 6364136223846793005n + 1442695040888963407n);
      const out = new Uint8Array(8);
      writeU64BE(out, 0, x);
      expect(out).toEqual(viaDataView(x));
      expect(readU64BE(out, 0)).toBe(x);
    }
  });

  it('refuses to read past the end instead of taking missing bytes for zeros', () => {
    const bytes = new Uint8Array(10);
    expect(readU64BE(bytes, 2)).toBe(0n);
    expect(() => readU64BE(bytes, 3)).toThrow(RangeError);
    expect(() => readI64BE(bytes, 9)).toThrow(RangeError);
    expect(() => readU64BE(bytes, -1)).toThrow(RangeError);
  });
});
