import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseJson,
  ProtocolError,
  RawJson,
  stringifyJson,
  toBigIntField,
  U64_MAX,
} from '../../node-core/protocol/index.ts';

describe('lossless JSON', () => {
  it('keeps every digit of integers above 2^53 (bare numbers parse to bigint)', () => {
    const v = parseJson(
      '{"a":18446744073709551615,"b":9007199254740993,"c":12,"d":-9223372036854775808}',
    ) as Record<string, unknown>;
    expect(v.a).toBe(18446744073709551615n);
    expect(v.b).toBe(9007199254740993n);
    expect(v.c).toBe(12);
    expect(v.d).toBe(-9223372036854775808n);
  });

  it('property: any u64 or i64 round-trips through stringify and parse, bare or as a digit string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 63n), max: U64_MAX }), (n) => {
        const text = stringifyJson({ n, s: n.toString() });
        expect(text).not.toMatch(/e/i);
        const back = parseJson(text) as { n: unknown; s: unknown };
        const kind = n < 0n ? 'i64' : 'u64';
        expect(toBigIntField(back.n, kind, 'n')).toBe(n);
        expect(toBigIntField(back.s, kind, 's')).toBe(n);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: values above 2^53 survive nested in arrays and objects', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 1n << 53n, max: U64_MAX }), { maxLength: 20 }), (xs) => {
        const back = parseJson(stringifyJson({ xs, nested: { list: [xs] } })) as {
          xs: bigint[];
          nested: { list: bigint[][] };
        };
        expect(back.xs).toEqual(xs);
        expect(back.nested.list[0]).toEqual(xs);
      }),
    );
  });

  it('property: agrees with JSON.parse on documents without big integers', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => {
        const text = JSON.stringify(v);
        // Integral numbers beyond 2^53 are exactly what JSON.parse gets wrong: left to the tests above.
        let unsafe = false;
        JSON.parse(text, (_k, x: unknown) => {
          if (typeof x === 'number' && Number.isInteger(x) && !Number.isSafeInteger(x)) unsafe = true;
          return x;
        });
        fc.pre(!unsafe);
        // -0 is printed as 0 by JSON.stringify, so the comparison is exact.
        expect(JSON.parse(stringifyJson(parseJson(text)))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('refuses malformed JSON with a typed error', () => {
    for (const bad of [
      '',
      '{',
      '{"a":}',
      '[1,]',
      '{"a":1,}',
      '01',
      '1.',
      '.5',
      '"\u0001"',
      'tru',
      '{"a" 1}',
      '[1 2]',
      '"\\x"',
      'nul',
      '1 2',
    ]) {
      expect(() => parseJson(bad), bad).toThrow(ProtocolError);
    }
  });

  it('bounds nesting depth instead of overflowing the stack', () => {
    expect(() => parseJson('['.repeat(100_000) + ']'.repeat(100_000))).toThrow(/deeply/);
    expect(parseJson('['.repeat(60) + ']'.repeat(60))).toBeInstanceOf(Array);
  });

  it('keeps "__proto__" as a plain key', () => {
    const v = parseJson('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(v)).toEqual(['__proto__']);
  });

  it('inherits nothing: names of Object.prototype are absent unless sent, and plain data when sent', () => {
    const empty = parseJson('{}') as Record<string, unknown>;
    for (const k of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__'])
      expect(k in empty, k).toBe(false);
    const v = parseJson('{"constructor":2,"toString":"x","hasOwnProperty":null}') as Record<string, unknown>;
    expect(v.constructor).toBe(2);
    expect(v.toString).toBe('x');
    expect(v.hasOwnProperty).toBeNull();
    expect(Object.keys(v)).toEqual(['constructor', 'toString', 'hasOwnProperty']);
    // A copy keeps them as data too (the block routes spread a body before decoding it).
    expect({ ...v }).toEqual({ constructor: 2, toString: 'x', hasOwnProperty: null });
  });

  describe('exactNumbers', () => {
    /**
     * What the option must refuse, as the API server checked it by a walk over the parsed body
     * before: a number beyond a double's range, or a whole number beyond 2^53 that is not a bigint
     * (a RawJson's value included: `1e21` is one).
     */
    const representable = (v: unknown): boolean => {
      if (typeof v === 'number')
        return Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v));
      if (v instanceof RawJson) return representable(v.value);
      if (typeof v !== 'object' || v === null) return true;
      return Object.values(v).every(representable);
    };
    const exact = (text: string) => parseJson(text, { exactNumbers: true });

    it('refuses a number that cannot be written back, wherever it is', () => {
      for (const text of [
        '1e400',
        '-1e400',
        '1e21',
        '[-1e21]',
        '{"a":{"b":[0,1e400]}}',
        '1E+309',
        '9.9e15',
      ]) {
        expect(() => exact(text), text).toThrow(ProtocolError);
        expect(representable(parseJson(text)), text).toBe(false);
      }
      expect(() => exact('{"a":1e400}')).toThrow(/cannot be written back exactly at position 5/);
    });

    it('accepts every number that can, with the same value as without the option', () => {
      const texts = [
        '0',
        '-0',
        '1.0',
        '1e2',
        '2e0',
        '0.5',
        '-1.5',
        '1e-400',
        '1.5e-7',
        '9007199254740991',
        '9007199254740992',
        '-12345678901234567890',
        '18446744073709551615',
        '9e15',
        '{"a":[1,2.5,-3]}',
      ];
      for (const text of texts) {
        expect(stringifyJson(exact(text)), text).toBe(stringifyJson(parseJson(text)));
        expect(representable(parseJson(text)), text).toBe(true);
      }
    });

    it('refuses exactly what a walk over the parsed value refuses (random numbers)', () => {
      const digits = fc.stringMatching(/^(0|[1-9][0-9]{0,24})$/);
      const number = fc
        .tuple(
          fc.boolean(),
          digits,
          fc.option(fc.stringMatching(/^[0-9]{1,6}$/)),
          fc.option(fc.integer({ min: -420, max: 420 })),
        )
        .map(
          ([neg, int, frac, exp]) =>
            `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`,
        );
      fc.assert(
        fc.property(number, (text) => {
          let refused = false;
          try {
            exact(`[${text}]`);
          } catch {
            refused = true;
          }
          expect(refused).toBe(!representable(parseJson(`[${text}]`)));
        }),
        { numRuns: 2000 },
      );
    });
  });

  it('captures exact raw text of chosen values', () => {
    const text = '{"ops":[{"value": {\n  "b": 1,  "a": [2]\n}}]}';
    const v = parseJson(text, { raw: (p) => p.join('.') === 'ops.0.value' }) as { ops: { value: RawJson }[] };
    expect(v.ops[0]!.value).toBeInstanceOf(RawJson);
    expect(v.ops[0]!.value.text).toBe('{\n  "b": 1,  "a": [2]\n}');
    expect(stringifyJson(v)).toBe('{"ops":[{"value":{\n  "b": 1,  "a": [2]\n}}]}');
  });

  it('refuses to serialize numbers that already lost precision', () => {
    expect(() => stringifyJson({ x: 2 ** 60 })).toThrow(/bigint/);
    expect(() => stringifyJson({ x: NaN })).toThrow();
  });

  it('reads 64-bit fields from digit strings or bare integers only', () => {
    expect(toBigIntField('18446744073709551615', 'u64', 'f')).toBe(U64_MAX);
    expect(() => toBigIntField('18446744073709551616', 'u64', 'f')).toThrow(/range/);
    expect(() => toBigIntField(-1, 'u64', 'f')).toThrow(/range/);
    expect(() => toBigIntField(1.5, 'u64', 'f')).toThrow(ProtocolError);
    expect(() => toBigIntField(1e20, 'u64', 'f')).toThrow(/digits/);
    expect(() => toBigIntField('1e3', 'u64', 'f')).toThrow(ProtocolError);
    expect(() => toBigIntField(' 1', 'u64', 'f')).toThrow(ProtocolError);
    expect(() => toBigIntField('01', 'u64', 'f')).toThrow(ProtocolError);
    expect(() => toBigIntField(true, 'u64', 'f')).toThrow(ProtocolError);
    expect(() => toBigIntField(-0, 'i64', 'f')).toThrow(/digits only/);
    for (const text of ['-0', '+1', '00', '-01', '1.0', '1e3', '0x10', '', '-']) {
      expect(() => toBigIntField(text, 'i64', 'f'), text).toThrow(/f: expected an integer as a string/);
    }
    // Far too many digits is out of range, decided before any BigInt is built from them.
    expect(() => toBigIntField('9'.repeat(100_000), 'u64', 'f')).toThrow(/f: out of u64 range/);
    expect(() => toBigIntField('-9223372036854775809', 'i64', 'f')).toThrow(/range/);
    expect(toBigIntField('-9223372036854775808', 'i64', 'f')).toBe(-(2n ** 63n));
    try {
      toBigIntField('x', 'u64', 'balance');
    } catch (e) {
      expect((e as ProtocolError).field).toBe('balance');
      expect((e as ProtocolError).code).toBe('ERR_FIELD_TYPE');
    }
  });
});

describe('whole numbers not written as integers', () => {
  const forms = [
    '1.0',
    '1e3',
    '1E3',
    '1e+3',
    '10e-1',
    '0.0',
    '-0',
    '-0.0',
    '0e0',
    '1.5e1',
    '18446744073709551615.0',
  ];

  it('parse as RawJson keeping their text, so no reader takes them for integers', () => {
    for (const text of forms) {
      const v = parseJson(`{"x":${text}}`) as { x: unknown };
      expect(v.x, text).toBeInstanceOf(RawJson);
      expect((v.x as RawJson).text).toBe(text);
      expect((v.x as RawJson).value).toBe(Number(text));
      expect(stringifyJson(v)).toBe(`{"x":${text}}`);
    }
    // Integer literals and true fractions keep their plain types.
    expect(parseJson('[0,-1,1.5,-2.25e-1,9007199254740993]')).toEqual([
      0,
      -1,
      1.5,
      -0.225,
      9007199254740993n,
    ]);
  });

  it('are refused in 64-bit fields, bare or quoted, naming the field', () => {
    for (const text of forms) {
      for (const doc of [`{"amount":${text}}`, `{"amount":"${text}"}`]) {
        const v = parseJson(doc) as { amount: unknown };
        try {
          toBigIntField(v.amount, 'u64', 'amount');
          expect.unreachable(doc);
        } catch (e) {
          expect(e, doc).toBeInstanceOf(ProtocolError);
          expect((e as ProtocolError).code).toBe('ERR_FIELD_TYPE');
          expect((e as ProtocolError).field).toBe('amount');
        }
      }
    }
  });
});

describe('indented output', () => {
  it('matches JSON.stringify with an indent for ordinary values, and keeps bigint digits', () => {
    const v = { a: [1, { b: 'x', c: [] }], d: {}, e: null, f: true };
    expect(stringifyJson(v, 2)).toBe(JSON.stringify(v, null, 2));
    expect(stringifyJson({ n: 18446744073709551615n }, 2)).toBe('{\n  "n": 18446744073709551615\n}');
  });
});
