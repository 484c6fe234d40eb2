import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertHex, bytesToHex, hexToBytes, utf8, writeHex } from '../../node-core/protocol/hex.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';

/** The hex codec's three entry points agree: same bytes, same typed errors naming the field. */
describe('hex', () => {
  const bad: [string, unknown, number][] = [
    ['upper case', 'AB'.repeat(32), 32],
    ['a non-hex character', 'g' + 'a'.repeat(63), 32],
    ['a character past ASCII', 'é' + 'a'.repeat(63), 32],
    ['a wrong length', 'ab'.repeat(31), 32],
    ['an odd length', 'abc', 2],
    ['not a string', 42, 32],
  ];
  for (const [name, input, len] of bad) {
    it(`refuses ${name} alike in hexToBytes, assertHex and writeHex`, () => {
      const error = (f: () => unknown): { code: string; field?: string } => {
        try {
          f();
        } catch (e) {
          expect(e).toBeInstanceOf(ProtocolError);
          const pe = e as ProtocolError;
          return { code: pe.code, field: pe.field };
        }
        throw new Error('no error');
      };
      const want = error(() => hexToBytes(input as string, len, 'account'));
      expect(want.field).toBe('account');
      expect(error(() => assertHex(input as string, len, 'account'))).toEqual(want);
      expect(error(() => writeHex(new Uint8Array(64), 0, input as string, len, 'account'))).toEqual(want);
    });
  }

  it('writeHex writes the bytes hexToBytes decodes, at the offset, touching nothing else', () => {
    const hex = Array.from({ length: 32 }, (_, i) => (i * 8 + 7).toString(16).padStart(2, '0')).join('');
    const out = new Uint8Array(40).fill(0xee);
    writeHex(out, 4, hex, 32);
    expect(out.subarray(4, 36)).toEqual(hexToBytes(hex));
    expect([...out.subarray(0, 4), ...out.subarray(36)]).toEqual(new Array(8).fill(0xee));
    expect(bytesToHex(out.subarray(4, 36))).toBe(hex);
  });

  it('bytesToHex gives the lowercase hex of any length and any view, past its 4 KB scratch too', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const want = Array.from(all, (b) => b.toString(16).padStart(2, '0')).join('');
    expect(bytesToHex(all)).toBe(want);
    for (const n of [0, 1, 32, 4095, 4096, 4097, 9000]) {
      const bytes = Uint8Array.from({ length: n + 3 }, (_, i) => (i * 37 + 11) & 0xff);
      const view = bytes.subarray(3);
      expect(bytesToHex(view)).toBe(Buffer.from(view).toString('hex'));
    }
    // A long input does not disturb the next short one (the scratch is reused).
    expect(bytesToHex(Uint8Array.of(0xab, 0x01))).toBe('ab01');
  });
});

/** utf8 copies short ASCII itself and hands the rest to TextEncoder: the same bytes either way. */
describe('utf8', () => {
  const encoder = new TextEncoder();
  it('matches TextEncoder at the edges of its own copy', () => {
    const cases = [
      '',
      'XE',
      'XUSD',
      'a'.repeat(128),
      'a'.repeat(129),
      'a'.repeat(127) + 'é',
      'é' + 'a'.repeat(127),
      '\u007f\u0000',
      '\u0080',
      'x\ud800y',
      '😀',
      'memo: café',
    ];
    for (const s of cases) expect(utf8(s), JSON.stringify(s)).toEqual(encoder.encode(s));
  });
  it('matches TextEncoder on random text', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 140 })),
        (s) => {
          expect(utf8(s)).toEqual(encoder.encode(s));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
