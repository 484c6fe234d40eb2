import { describe, expect, it } from 'vitest';
import {
  amountExample,
  formatAmountInput,
  parseAmountInput,
  separatorsOf,
  type NumberSeparators,
} from '../../renderer/src/wallet/amount-input.ts';

/** Typed amounts in the person's locale, to exact micro-units, or an error that says what to type. */
const EN = separatorsOf('en-US');
const DE = separatorsOf('de-DE');
const FR = separatorsOf('fr-FR');
const CH = separatorsOf('de-CH');

function micro(text: string, seps: NumberSeparators): bigint {
  const r = parseAmountInput(text, seps);
  if (!r.ok) throw new Error(`${text}: ${r.message}`);
  return r.micro;
}

function error(text: string, seps: NumberSeparators): { code: string; message: string } {
  const r = parseAmountInput(text, seps);
  if (r.ok) throw new Error(`${text} parsed as ${r.micro}`);
  return { code: r.code, message: r.message };
}

function suggestion(text: string, seps: NumberSeparators): string | undefined {
  const r = parseAmountInput(text, seps);
  return r.ok ? undefined : r.suggestion;
}

describe('separators of a locale (Intl)', () => {
  it('English, German, French and Swiss German', () => {
    expect(EN).toEqual({ decimal: '.', group: ',' });
    expect(DE).toEqual({ decimal: ',', group: '.' });
    expect(FR).toEqual({ decimal: ',', group: ' ' });
    // ICU versions differ between the typographic and the ASCII apostrophe.
    expect(CH.decimal).toBe('.');
    expect(CH.group).toMatch(/^['’]$/);
  });

  it('an unknown tag falls back to English separators', () => {
    expect(separatorsOf('not a locale')).toEqual({ decimal: '.', group: ',' });
  });
});

describe('amounts that read', () => {
  it.each([
    ['1000.5', 1_000_500_000n],
    ['1,000.5', 1_000_500_000n],
    ['1,000,000', 1_000_000_000_000n],
    ['  12.25  ', 12_250_000n],
    ['1 000.5', 1_000_500_000n],
    ['1\u00a0000.5', 1_000_500_000n],
    ['.5', 500_000n],
    ['5.', 5_000_000n],
    ['0', 0n],
    ['0.000001', 1n],
    ['18,446,744,073,709.551615', (1n << 64n) - 1n],
  ])('en: %j', (text, want) => expect(micro(text, EN)).toBe(want));

  it.each([
    ['1,5', 1_500_000n],
    ['1.000,5', 1_000_500_000n],
    ['1000,5', 1_000_500_000n],
    ['1.000', 1_000_000_000n],
    ['1 000,5', 1_000_500_000n],
    ['1.234.567,891011', 1_234_567_891_011n],
    ['0,000001', 1n],
  ])('de: %j', (text, want) => expect(micro(text, DE)).toBe(want));

  it.each([
    ['1 000,5', 1_000_500_000n],
    ['1\u202f000,5', 1_000_500_000n],
    ['2,75', 2_750_000n],
  ])('fr: %j', (text, want) => expect(micro(text, FR)).toBe(want));

  it.each([
    ['1’000.5', 1_000_500_000n],
    ["1'000.5", 1_000_500_000n],
  ])('de-CH: %j', (text, want) => expect(micro(text, CH)).toBe(want));

  it('"1.000" means a thousand in German and one in English: nothing is guessed', () => {
    expect(micro('1.000', DE)).toBe(1_000_000_000n);
    expect(micro('1.000', EN)).toBe(1_000_000n);
  });
});

describe('amounts that do not read, with what to type instead', () => {
  it('empty', () => {
    expect(error('', EN)).toEqual({ code: 'empty', message: 'Enter an amount.' });
    expect(error('   ', DE).code).toBe('empty');
  });

  it('negative, with either minus sign', () => {
    const want = { code: 'negative', message: 'An amount cannot be negative: leave out the minus sign.' };
    expect(error('-5', EN)).toEqual(want);
    expect(error('\u22125', DE)).toEqual(want);
  });

  it('too many decimals, named in the locale’s words', () => {
    expect(error('1.1234567', EN)).toEqual({
      code: 'too_many_decimals',
      message: 'At most 6 digits after the decimal point: "1.1234567" has 7.',
    });
    expect(error('0,00000001', DE)).toEqual({
      code: 'too_many_decimals',
      message: 'At most 6 digits after the decimal comma: "0,00000001" has 8.',
    });
  });

  it('beyond u64 micro-units', () => {
    expect(error('18446744073709.551616', EN)).toEqual({
      code: 'too_large',
      message: 'That is more than the largest possible amount, 18,446,744,073,709.551615.',
    });
    expect(error('99999999999999999999', DE).message).toBe(
      'That is more than the largest possible amount, 18.446.744.073.709,551615.',
    );
  });

  it('a German "1,5" typed under English separators suggests 1.5', () => {
    expect(error('1,5', EN)).toEqual({
      code: 'separators',
      message:
        '"1,5" is not an amount here: a point starts the decimals and a comma separates thousands. Did you mean 1.5?',
    });
  });

  it('an English "1.5" or "1,000.5" under German separators suggests 1,5 and 1.000,5', () => {
    expect(error('1.5', DE).message).toBe(
      '"1.5" is not an amount here: a comma starts the decimals and a point separates thousands. Did you mean 1,5?',
    );
    expect(error('1,000.5', DE).message).toMatch(/Did you mean 1\.000,5\?$/);
    expect(error('1000.5', DE).message).toMatch(/Did you mean 1000,5\?$/);
  });

  it('the suggestion comes apart from the words, for a one-click fix, and only when it reads', () => {
    expect(suggestion('1,5', EN)).toBe('1.5');
    expect(suggestion('1,000.5', DE)).toBe('1.000,5');
    expect(suggestion('1,2,3', EN)).toBeUndefined();
    expect(suggestion('5 XE', EN)).toBeUndefined();
    expect(suggestion('1.1234567', EN)).toBeUndefined();
  });

  it('a point under French separators suggests the comma', () => {
    expect(error('2.75', FR)).toEqual({
      code: 'separators',
      message: '"2.75" is not an amount here: a comma starts the decimals. Did you mean 2,75?',
    });
  });

  it('letters, exponents and currency codes get the locale’s example', () => {
    expect(error('5 XE', EN)).toEqual({
      code: 'not_a_number',
      message:
        '"5 XE" is not an amount: type it like 1,250.5 (a point before the decimals, a comma or a space between thousands).',
    });
    expect(error('1e5', DE).message).toBe(
      '"1e5" is not an amount: type it like 1.250,5 (a comma before the decimals, a point or a space between thousands).',
    );
    expect(error('+5', EN).code).toBe('not_a_number');
  });

  it('separators that fit no reading either way', () => {
    expect(error('1,2,3', EN).code).toBe('separators');
    expect(error('1.2.3', EN)).toEqual({
      code: 'separators',
      message:
        '"1.2.3" has more than one point: type it like 1,250.5 (a point before the decimals, a comma or a space between thousands).',
    });
    expect(error('.', EN).code).toBe('not_a_number');
    expect(error('1.000 5', EN).code).toBe('separators');
  });
});

describe('amounts written for a locale', () => {
  it('round-trips exactly, grouped or not', () => {
    for (const seps of [EN, DE, FR, CH]) {
      for (const m of [0n, 1n, 1_500_000n, 1_000_500_000n, (1n << 64n) - 1n]) {
        expect(micro(formatAmountInput(m, seps), seps)).toBe(m);
        expect(micro(formatAmountInput(m, seps, true), seps)).toBe(m);
      }
    }
  });

  it('examples', () => {
    expect(amountExample(EN)).toBe('1,250.5');
    expect(amountExample(DE)).toBe('1.250,5');
    expect(formatAmountInput(749_500_000n, DE)).toBe('749,5');
  });
});
