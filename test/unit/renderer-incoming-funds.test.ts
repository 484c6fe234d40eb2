import { describe, expect, it } from 'vitest';
import { linkFromHash } from '../../renderer/src/deeplink/payment-link.ts';
import { arrivalNotice, ArrivalTracker } from '../../renderer/src/notify/incoming.ts';
import { totalMicro } from '../../renderer/src/notify/tray-balance.ts';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const ANA = '2ca26366' + '0'.repeat(48) + '00005496';
const p = (hash: string, amount: bigint, asset = 'XE', from = ANA) => ({ hash, from, amount, asset });
const label = (a: string) => (a === A ? 'Main' : a === B ? 'Savings' : '?');

describe('ArrivalTracker', () => {
  it('takes the first list of an account as its baseline, then tells each new send once', () => {
    const t = new ArrivalTracker();
    expect(t.update(A, [p('h1', 5n)])).toEqual([]);
    expect(t.update(A, [p('h1', 5n)])).toEqual([]);
    expect(t.update(A, [p('h1', 5n), p('h2', 7n)])).toEqual([{ ...p('h2', 7n), account: A }]);
    expect(t.update(A, [p('h2', 7n)])).toEqual([]);
    // Received and gone, then a new one: only the new one.
    expect(t.update(A, [p('h3', 1n)])).toEqual([{ ...p('h3', 1n), account: A }]);
  });

  it('keeps accounts apart, and a forgotten account starts from a baseline again', () => {
    const t = new ArrivalTracker();
    t.update(A, []);
    expect(t.update(B, [p('h1', 1n)])).toEqual([]);
    expect(t.update(A, [p('h1', 1n)])).toEqual([{ ...p('h1', 1n), account: A }]);
    t.forget(A);
    expect(t.accounts()).toEqual([B]);
    expect(t.update(A, [p('h1', 1n), p('h9', 2n)])).toEqual([]);
  });
});

describe('arrivalNotice', () => {
  it('names the amount exactly, the account and the sender (address book name first)', () => {
    const one = [{ ...p('h', 250_500_000n), account: B }];
    expect(arrivalNotice(one, label)).toEqual({
      title: 'Incoming: 250.5 XE',
      body: 'To Savings, from 2ca26366…00005496. Receive it in the wallet.',
    });
    expect(arrivalNotice(one, label, (a) => (a === ANA ? 'Ana' : undefined))!.body).toBe(
      'To Savings, from Ana (2ca26366…). Receive it in the wallet.',
    );
  });

  it('sums several sends per asset without losing a digit', () => {
    const many = [
      { ...p('1', 9_007_199_254_740_993n), account: A },
      { ...p('2', 7n, 'XUSD'), account: A },
      { ...p('3', 1n), account: B },
    ];
    expect(arrivalNotice(many, label)).toEqual({
      title: 'Incoming: 9,007,199,254.740994 XE and 0.000007 XUSD',
      body: '3 sends to 2 of your accounts. Receive them in the wallet.',
    });
    expect(arrivalNotice(many.slice(0, 2), label)!.body).toBe('2 sends to Main. Receive them in the wallet.');
    expect(arrivalNotice([], label)).toBeUndefined();
  });
});

describe('the tray total and the link route', () => {
  it('sums every account exactly, or says nothing while one is unknown', () => {
    expect(totalMicro([1n, 18446744073709551615n])).toBe(18446744073709551616n);
    expect(totalMicro([])).toBe(0n);
    expect(totalMicro([1n, undefined])).toBeUndefined();
  });

  it('finds the link in #/send?uri=…, and nothing in other routes', () => {
    const uri = `xe:${A}?amount=1.5&memo=a%26b`;
    expect(linkFromHash(`#/send?uri=${encodeURIComponent(uri)}`)).toBe(uri);
    expect(linkFromHash(`#send?uri=${encodeURIComponent(uri)}`)).toBe(uri);
    expect(linkFromHash('#/send?uri=')).toBeUndefined();
    expect(linkFromHash('#/wallet/send')).toBeUndefined();
    expect(linkFromHash(`#/explorer?uri=${encodeURIComponent(uri)}`)).toBeUndefined();
  });
});
