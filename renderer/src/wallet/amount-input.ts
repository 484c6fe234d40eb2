import { DECIMALS, MICRO_PER_UNIT } from '../../../node-core/protocol/units.ts';

/**
 * Amounts as people type them in their own locale: "1,000.5" in English, "1.000,5" or "1,5" in
 * German, "1 000,5" in French. The result is exact micro-units (bigint, never a float). The locale
 * decides which character starts the decimals: "1.000" is a thousand in German and one in English,
 * so nothing is guessed; when the text does not fit the locale the error says exactly what to type
 * instead (the same text with the two separators swapped, when that reads as a number).
 */
export interface NumberSeparators {
  /** The character before the decimals: "." or ",". */
  decimal: string;
  /** The thousands separator of the locale ("," "." "’" or a space). */
  group: string;
}

export type AmountInputErrorCode =
  'empty' | 'negative' | 'not_a_number' | 'separators' | 'too_many_decimals' | 'too_large';

export type AmountInput =
  | { ok: true; micro: bigint }
  | {
      ok: false;
      code: AmountInputErrorCode;
      message: string;
      /** The text that reads as a number here, when swapping "." and "," gives one ("1.5" for "1,5"). */
      suggestion?: string;
    };

const U64_MAX = (1n << 64n) - 1n;
// Every space a keyboard or a copied number can hold: ordinary, no-break, narrow no-break, thin.
const SPACES = /[\s\u00a0\u202f\u2009\u2007]+/g;
const MINUS = /^[-\u2212\u2010\u2012\u2013]/;

/** The decimal and group separators of a locale (through Intl; "." and "," when it gives none). */
export function separatorsOf(locale?: string | readonly string[]): NumberSeparators {
  let decimal = '.';
  let group = ',';
  try {
    const parts = new Intl.NumberFormat(locale as string | string[] | undefined).formatToParts(1234567.5);
    decimal = parts.find((p) => p.type === 'decimal')?.value ?? decimal;
    group = parts.find((p) => p.type === 'group')?.value ?? group;
  } catch {
    // An unknown locale tag: English separators.
  }
  if (decimal !== '.' && decimal !== ',') decimal = '.';
  if (/^[\s\u00a0\u202f\u2009\u2007]+$/.test(group)) group = ' ';
  if (group === decimal) group = decimal === '.' ? ',' : '.';
  return { decimal, group };
}

/** The browser's locale: what the person reads and types. */
export function browserSeparators(): NumberSeparators {
  return separatorsOf(globalThis.navigator?.languages ?? globalThis.navigator?.language);
}

function other(sep: string): string {
  return sep === '.' ? ',' : '.';
}

/** Micro-units written for this locale with its separators (`grouped` adds thousands separators). */
export function formatAmountInput(micro: bigint, seps: NumberSeparators, grouped = false): string {
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  let whole = (abs / MICRO_PER_UNIT).toString();
  const frac = (abs % MICRO_PER_UNIT).toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  if (grouped) whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, seps.group);
  return `${neg ? '-' : ''}${whole}${frac ? `${seps.decimal}${frac}` : ''}`;
}

/** "1,250.5" for this locale: the example every format error shows. */
export function amountExample(seps: NumberSeparators): string {
  return formatAmountInput(1_250_500_000n, seps, true);
}

function sepName(sep: string): string {
  return sep === '.' ? 'a point' : sep === ',' ? 'a comma' : sep === ' ' ? 'a space' : `"${sep}"`;
}

function formatHelp(seps: NumberSeparators): string {
  return `type it like ${amountExample(seps)} (${sepName(seps.decimal)} before the decimals${
    seps.group !== ' '
      ? `, ${sepName(seps.group)} or a space between thousands`
      : ', spaces between thousands'
  })`;
}

/** Reads the text under these separators, or says why it is not a number there (no suggestion). */
function read(text: string, seps: NumberSeparators): AmountInput {
  const fail = (code: AmountInputErrorCode, message: string): AmountInput => ({ ok: false, code, message });
  const t = text.trim();
  if (t === '') return fail('empty', 'Enter an amount.');
  if (MINUS.test(t)) return fail('negative', 'An amount cannot be negative: leave out the minus sign.');
  // Spaces and the locale's group character both separate thousands; "G" marks them below.
  let s = t.replace(SPACES, 'G');
  if (seps.group !== ' ') s = s.split(seps.group).join('G');
  // Swiss "1’000.5" is typed with either apostrophe (and ICU versions differ on which is the locale's).
  if (seps.group === '’' || seps.group === "'") s = s.replace(/['’]/g, 'G');
  if (!new RegExp(`^[0-9G${seps.decimal === '.' ? '\\.' : ','}]+$`).test(s)) {
    const foreign = s.includes(other(seps.decimal));
    return fail(foreign ? 'separators' : 'not_a_number', `"${t}" is not an amount: ${formatHelp(seps)}.`);
  }
  const [intPart = '', fracPart, ...rest] = s.split(seps.decimal);
  if (rest.length > 0) {
    return fail(
      'separators',
      `"${t}" has more than one ${sepName(seps.decimal).slice(2)}: ${formatHelp(seps)}.`,
    );
  }
  const frac = fracPart ?? '';
  if (frac.includes('G')) {
    return fail('separators', `"${t}" has a thousands separator after the decimals: ${formatHelp(seps)}.`);
  }
  if (intPart.replace(/G/g, '') === '' && frac === '') {
    return fail('not_a_number', `"${t}" has no digits: ${formatHelp(seps)}.`);
  }
  if (intPart.includes('G')) {
    const groups = intPart.split('G');
    const ok = /^[0-9]{1,3}$/.test(groups[0]!) && groups.slice(1).every((g) => /^[0-9]{3}$/.test(g));
    if (!ok) return fail('separators', `"${t}" is not an amount: ${formatHelp(seps)}.`);
  }
  if (frac.length > DECIMALS) {
    return fail(
      'too_many_decimals',
      `At most ${DECIMALS} digits after the decimal ${seps.decimal === ',' ? 'comma' : 'point'}: "${t}" has ${frac.length}.`,
    );
  }
  const whole = intPart.replace(/G/g, '') || '0';
  const micro = BigInt(whole) * MICRO_PER_UNIT + BigInt(frac.padEnd(DECIMALS, '0'));
  if (micro > U64_MAX) {
    return fail(
      'too_large',
      `That is more than the largest possible amount, ${formatAmountInput(U64_MAX, seps, true)}.`,
    );
  }
  return { ok: true, micro };
}

/**
 * Parses a typed amount under the locale's separators. When it does not read as a number there but
 * reads with "." and "," swapped, the error names that exact text ("Did you mean 1.5?").
 */
export function parseAmountInput(text: string, seps: NumberSeparators = browserSeparators()): AmountInput {
  const r = read(text, seps);
  if (r.ok || r.code !== 'separators') return r;
  const t = text.trim();
  const swapped = t.replace(/[.,]/g, (c) => other(c));
  if (swapped !== t && read(swapped, seps).ok) {
    return {
      ok: false,
      code: 'separators',
      message: `"${t}" is not an amount here: ${sepName(seps.decimal)} starts the decimals${
        seps.group === '.' || seps.group === ',' ? ` and ${sepName(seps.group)} separates thousands` : ''
      }. Did you mean ${swapped}?`,
      suggestion: swapped,
    };
  }
  return r;
}
