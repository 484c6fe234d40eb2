import { describe, expect, it } from 'vitest';
import { paymentLinkUrl, paymentUriFromArgv, protocolClientArgs } from '../../electron/deep-link.ts';
import { checkNotice, shouldShowNotice } from '../../electron/notice.ts';
import { balanceLine } from '../../electron/tray-status.ts';

const ADDR = 'ab'.repeat(32);

describe('xe: links handed to the desktop app', () => {
  it('finds the link among the arguments a desktop starts the app with', () => {
    // Windows and Linux: the second instance's argv, link last.
    expect(paymentUriFromArgv(['/opt/Ledger/ledger', '--no-sandbox', `xe:${ADDR}?amount=1`])).toBe(
      `xe:${ADDR}?amount=1`,
    );
    // Development: electron . <link>
    expect(paymentUriFromArgv(['/usr/bin/electron', '/work/app', `XE:${ADDR}`])).toBe(`XE:${ADDR}`);
    expect(paymentUriFromArgv(['/opt/Ledger/ledger', '--flag', '/tmp/xe:file'])).toBeUndefined();
    expect(paymentUriFromArgv(['/opt/Ledger/ledger'])).toBeUndefined();
    expect(paymentUriFromArgv(['app', 'https://example.com/?to=xe:abc'])).toBeUndefined();
  });

  it('opens the send route with the link as its uri parameter, exactly', () => {
    const uri = `xe:${ADDR}?amount=12.5&memo=lunch%20%26%20tea`;
    const url = paymentLinkUrl('http://127.0.0.1:8080/ui/', uri)!;
    expect(url).toBe(`http://127.0.0.1:8080/ui/#/send?uri=${encodeURIComponent(uri)}`);
    expect(new URLSearchParams(new URL(url).hash.slice('#/send?'.length)).get('uri')).toBe(uri);
    expect(paymentLinkUrl('http://127.0.0.1:8080/ui/', 'javascript:alert(1)')).toBeUndefined();
    expect(paymentLinkUrl('http://127.0.0.1:8080/ui/', `xe:${'a'.repeat(5000)}`)).toBeUndefined();
  });

  it('registers as the xe: handler with its entry when run from source', () => {
    expect(protocolClientArgs(false, '/opt/Ledger/ledger', undefined)).toEqual(['xe']);
    expect(protocolClientArgs(true, '/usr/bin/electron', '/work/app')).toEqual([
      'xe',
      '/usr/bin/electron',
      ['/work/app'],
    ]);
  });
});

describe('the tray balance and the page notices', () => {
  it('shows the balance exactly, grouped, and nothing while locked', () => {
    expect(balanceLine(1_250_500_000n)).toBe('Balance: 1,250.5 XE');
    expect(balanceLine(18446744073709551615n)).toBe('Balance: 18,446,744,073,709.551615 XE');
    expect(balanceLine(0n)).toBe('Balance: 0 XE');
    expect(balanceLine(null)).toBe('');
  });

  it('checks a notice and shows it only while the window is not in front', () => {
    expect(checkNotice(' Incoming ', 'To Savings.')).toEqual({ title: 'Incoming', body: 'To Savings.' });
    expect(() => checkNotice(1, 'x')).toThrow(/title must be text/);
    expect(() => checkNotice('', 'x')).toThrow(/title is empty/);
    expect(() => checkNotice('a\u0007', 'x')).toThrow(/control characters/);
    expect(() => checkNotice('t', 'é'.repeat(301))).toThrow(/longer than 300/);
    expect(shouldShowNotice(true)).toBe(false);
    expect(shouldShowNotice(false)).toBe(true);
  });
});
