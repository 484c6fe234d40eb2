import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildPaymentUri,
  isPaymentUri,
  MAX_PAYMENT_URI_LENGTH,
  PaymentUriError,
  parsePaymentUri,
} from '../../node-core/protocol/payment-uri.ts';
import { U64_MAX } from '../../node-core/protocol/int.ts';

const ADDR = '2ca26366' + 'ab'.repeat(26) + '5496';

function fails(uri: string): PaymentUriError {
  try {
    parsePaymentUri(uri);
  } catch (e) {
    expect(e).toBeInstanceOf(PaymentUriError);
    return e as PaymentUriError;
  }
  throw new Error(`parsed: ${uri}`);
}

describe('parsePaymentUri', () => {
  it('reads an address alone, with XE as the asset', () => {
    expect(parsePaymentUri(`xe:${ADDR}`)).toEqual({ address: ADDR, asset: 'XE' });
  });

  it('reads amount, memo and label exactly (bigint micro-units, percent-decoded text)', () => {
    const r = parsePaymentUri(`xe:${ADDR}?amount=12.5&memo=lunch%20%F0%9F%8D%95%2C+ok&label=Ana%20B.`);
    expect(r).toEqual({
      address: ADDR,
      asset: 'XE',
      amount: 12_500_000n,
      memo: 'lunch 🍕,+ok',
      label: 'Ana B.',
    });
  });

  it('keeps every digit of a large amount (no float on the way)', () => {
    expect(parsePaymentUri(`xe:${ADDR}?amount=18446744073709.551615`).amount).toBe(U64_MAX);
    expect(parsePaymentUri(`xe:${ADDR}?amount=9007199254.740993`).amount).toBe(9_007_199_254_740_993n);
    expect(parsePaymentUri(`xe:${ADDR}?amount=0.000001`).amount).toBe(1n);
    expect(parsePaymentUri(`xe:${ADDR}?amount=007`).amount).toBe(7_000_000n);
  });

  it('accepts the forms desktops and browsers hand over: any case, xe://, web+xe:, a trailing slash', () => {
    const upper = ADDR.toUpperCase();
    expect(parsePaymentUri(`XE:${upper}`).address).toBe(ADDR);
    expect(parsePaymentUri(`xe://${ADDR}/?amount=1`)).toMatchObject({ address: ADDR, amount: 1_000_000n });
    expect(parsePaymentUri(`web+xe:${ADDR}?asset=xusd`)).toMatchObject({ asset: 'XUSD' });
    expect(parsePaymentUri(`  xe:${ADDR}  `).address).toBe(ADDR);
    expect(isPaymentUri(`web+XE:${ADDR}`)).toBe(true);
    expect(isPaymentUri(`https://example.com`)).toBe(false);
  });

  it('ignores unknown parameters but refuses an unknown req- one (BIP-21)', () => {
    expect(parsePaymentUri(`xe:${ADDR}?foo=bar&amount=2`).amount).toBe(2_000_000n);
    const e = fails(`xe:${ADDR}?req-expires=10`);
    expect(e.code).toBe('ERR_URI_PARAM');
    expect(e.message).toMatch(/requires "req-expires"/);
  });

  it.each([
    ['bitcoin:abc', 'ERR_URI_SCHEME', 'scheme', /starts with "xe:"/],
    ['xe:', 'ERR_URI_ADDRESS', 'address', /names no address/],
    [`xe:${ADDR.slice(2)}`, 'ERR_URI_ADDRESS', 'address', /64 hexadecimal/],
    [`xe:${ADDR}zz`, 'ERR_URI_ADDRESS', 'address', /64 hexadecimal/],
    [`xe:${ADDR}?amount=1e3`, 'ERR_URI_AMOUNT', 'amount', /plain decimal/],
    [`xe:${ADDR}?amount=-1`, 'ERR_URI_AMOUNT', 'amount', /plain decimal/],
    [`xe:${ADDR}?amount=1,5`, 'ERR_URI_AMOUNT', 'amount', /plain decimal/],
    [`xe:${ADDR}?amount=`, 'ERR_URI_AMOUNT', 'amount', /plain decimal/],
    [`xe:${ADDR}?amount=0.0000001`, 'ERR_URI_AMOUNT', 'amount', /at most 6 decimal places/],
    [`xe:${ADDR}?amount=18446744073709.551616`, 'ERR_URI_AMOUNT', 'amount', /too large/],
    [`xe:${ADDR}?amount=0`, 'ERR_URI_AMOUNT', 'amount', /more than 0/],
    [`xe:${ADDR}?asset=BTC`, 'ERR_URI_ASSET', 'asset', /not an asset/],
    [`xe:${ADDR}?memo=${'x'.repeat(65)}`, 'ERR_URI_MEMO', 'memo', /65 bytes; the limit is 64/],
    [`xe:${ADDR}?memo=a%07b`, 'ERR_URI_MEMO', 'memo', /control character/],
    [`xe:${ADDR}?memo=%E0%A4`, 'ERR_URI_PARAM', 'memo', /percent-encoded/],
    [`xe:${ADDR}?amount=1&amount=2`, 'ERR_URI_PARAM', 'amount', /twice/],
    [`xe:${ADDR}?memo=${'a'.repeat(MAX_PAYMENT_URI_LENGTH)}`, 'ERR_URI_TOO_LONG', 'uri', /at most 2048/],
  ])('refuses %s with a clear error', (uri, code, field, message) => {
    const e = fails(uri);
    expect(e.code).toBe(code);
    expect(e.field).toBe(field);
    expect(e.message).toMatch(message);
  });
});

describe('buildPaymentUri', () => {
  it('writes the canonical form', () => {
    expect(buildPaymentUri({ address: ADDR, asset: 'XE' })).toBe(`xe:${ADDR}`);
    expect(
      buildPaymentUri({ address: ADDR, asset: 'XUSD', amount: 250_500_000n, memo: 'a b&c', label: 'Bo' }),
    ).toBe(`xe:${ADDR}?amount=250.5&asset=XUSD&memo=a%20b%26c&label=Bo`);
  });

  it('refuses what it could not write back', () => {
    expect(() => buildPaymentUri({ address: 'abc', asset: 'XE' })).toThrow(PaymentUriError);
    expect(() => buildPaymentUri({ address: ADDR, asset: 'XE', amount: 0n })).toThrow(/more than 0/);
    expect(() => buildPaymentUri({ address: ADDR, asset: 'XE', memo: 'é'.repeat(33) })).toThrow(/66 bytes/);
  });

  it('round-trips every request it accepts', () => {
    const memo = fc.string({ unit: 'grapheme', maxLength: 16 }).filter((s) => {
      const bytes = new TextEncoder().encode(s);
      return bytes.length <= 64 && bytes.every((b) => (b >= 0x20 && b !== 0x7f) || b === 0x09 || b === 0x0a);
    });
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9a-f]{64}$/),
        fc.option(fc.bigInt({ min: 1n, max: U64_MAX }), { nil: undefined }),
        fc.constantFrom('XE' as const, 'XUSD' as const),
        fc.option(memo, { nil: undefined }),
        fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
        (address, amount, asset, m, label) => {
          const req = { address, amount, asset, memo: m || undefined, label: label || undefined };
          const back = parsePaymentUri(buildPaymentUri(req));
          expect(back).toEqual(Object.fromEntries(Object.entries(req).filter(([, v]) => v !== undefined)));
        },
      ),
      { numRuns: 300 },
    );
  });
});
