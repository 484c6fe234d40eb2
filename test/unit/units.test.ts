import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatUnits, parseUnits, ProtocolError, U64_MAX } from '../../node-core/protocol/index.ts';

describe('decimal units (6 decimals)', () => {
  it('converts typed amounts to exact micro-units', () => {
    expect(parseUnits('1')).toBe(1_000_000n);
    expect(parseUnits('0.000001')).toBe(1n);
    expect(parseUnits('12.5')).toBe(12_500_000n);
    expect(parseUnits(' 1_000 ')).toBe(1_000_000_000n);
    expect(parseUnits('18446744073709.551615')).toBe(U64_MAX);
  });

  it('refuses what it cannot represent exactly', () => {
    for (const bad of ['', '-1', '1e3', '0.0000001', '1.', '.5', 'abc', '18446744073709.551616', '01']) {
      expect(() => parseUnits(bad), bad).toThrow(ProtocolError);
    }
  });

  it('formats without trailing zeros, or with a minimum of decimals', () => {
    expect(formatUnits(12_500_000n)).toBe('12.5');
    expect(formatUnits(1n)).toBe('0.000001');
    expect(formatUnits(0n)).toBe('0');
    expect(formatUnits(1_000_000n, 2)).toBe('1.00');
    expect(formatUnits(-1_500_000n)).toBe('-1.5');
  });

  it('property: format then parse is the identity on u64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), (n) => {
        expect(parseUnits(formatUnits(n))).toBe(n);
      }),
    );
  });
});
