import { beforeEach, describe, expect, it } from 'vitest';
import { type ChainBlock, LedgerClient } from '../../node-core/client/client.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import type { Block, BlockType } from '../../node-core/protocol/block.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { fetchBalances, resetProxyProbe, spendableFromBlocks } from '../../renderer/src/wallet/balances.ts';
import { groupedUnits } from '../../renderer/src/wallet/format.ts';
import { csvField, historyCsv, rowOf } from '../../renderer/src/wallet/history.ts';
import { separatorsOf } from '../../renderer/src/wallet/amount-input.ts';
import { checkSend } from '../../renderer/src/wallet/send-check.ts';

/** The wallet's pure parts: spendable funds, history rows and CSV, the send form's checks. */
const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);
// The send form reads amounts in the browser's locale; these checks pin English separators.
const EN = separatorsOf('en-US');
let n = 0;

function blk(
  type: BlockType,
  asset: string,
  balance: bigint,
  amount?: bigint,
  extra: Partial<Block> = {},
): Block {
  n += 1;
  return {
    type,
    account: A,
    previous: n.toString(16).padStart(64, '0'),
    balance,
    timestamp: BigInt(n) * 1_000_000_000n,
    asset,
    ...(amount !== undefined ? { amount } : {}),
    hash: (n + 1000).toString(16).padStart(64, '0'),
    ...extra,
  };
}

const cb = (block: Block, finalized: boolean): ChainBlock => ({ block, finalized });

describe('spendable funds from the chain', () => {
  it('is the whole balance when the newest block is final', () => {
    const chain = [cb(blk('claim', 'XE', 100n, 100n), true)];
    expect(spendableFromBlocks(chain, false, 7, { XE: 100n })).toEqual({
      spendable: { XE: 100n },
      finalHeight: 7,
    });
  });

  it('is the final balance less unfinalized outflows; unfinalized inflows do not count', () => {
    // oldest -> newest: claim 1000 (final), send 300 (not final), receive +50 (not final)
    const claim = blk('claim', 'XE', 1000n, 1000n);
    const send = blk('send', 'XE', 700n, 300n, { destination: B });
    const recv = blk('receive', 'XE', 750n, undefined, { source: B });
    const newestFirst = [cb(recv, false), cb(send, false), cb(claim, true)];
    expect(spendableFromBlocks(newestFirst, true, 3, { XE: 750n })).toEqual({
      spendable: { XE: 700n },
      finalHeight: 1,
    });
  });

  it('asks for older blocks when the window does not reach a final block of the asset', () => {
    const usd = blk('mint', 'XUSD', 5n, 5n);
    const send = blk('send', 'XE', 10n, 1n, { destination: B });
    expect(spendableFromBlocks([cb(send, false)], false, 9, { XE: 10n })).toBeUndefined();
    expect(
      spendableFromBlocks([cb(send, false), cb(usd, true)], false, 9, { XE: 10n, XUSD: 5n }),
    ).toBeUndefined();
    expect(spendableFromBlocks([cb(send, false), cb(usd, true)], true, 2, { XE: 10n, XUSD: 5n })).toEqual({
      spendable: { XUSD: 5n },
      finalHeight: 1,
    });
  });
});

describe('fetchBalances', () => {
  beforeEach(() => resetProxyProbe());

  /** A fake node: routes answered from a table; unknown paths 404 like the node. */
  function fakeClient(
    routes: Record<string, { status?: number; body: unknown; headers?: Record<string, string> }>,
  ) {
    const seen: string[] = [];
    const client = new LedgerClient('http://node.test', {
      fetch: async (input) => {
        const url = new URL(String(input));
        const path = url.pathname + url.search;
        seen.push(path);
        const r = routes[path] ?? { status: 404, body: { error: 'not found' } };
        return new Response(stringifyJson(r.body), { status: r.status ?? 200, headers: r.headers });
      },
    });
    return { client, seen };
  }

  it('uses the proxy form when the node has it', async () => {
    const { client } = fakeClient({
      [`/api/v1/accounts/${A}/balance`]: {
        body: { address: A, balances: { XE: '750' }, spendable: { XE: '700' }, final_height: 1 },
      },
    });
    expect(await fetchBalances(client, A)).toEqual({
      balances: { XE: 750n },
      spendable: { XE: 700n },
      finalHeight: 1,
      source: 'proxy',
    });
  });

  it('falls back to the node form and the chain when the proxy form answers 404', async () => {
    const claim = blk('claim', 'XE', 1000n, 1000n);
    const send = blk('send', 'XE', 700n, 300n, { destination: B });
    const json = (b: Block, finalized: boolean) => ({ ...blockToJson(b, 'node'), finalized });
    const { client, seen } = fakeClient({
      [`/accounts/${A}/balance`]: { body: { XE: '700' } },
      [`/accounts/${A}/chain?offset=0&limit=1`]: {
        body: [json(claim, true)],
        headers: { 'x-total-count': '2' },
      },
      [`/accounts/${A}/chain?offset=1&limit=1`]: {
        body: [json(send, false)],
        headers: { 'x-total-count': '2' },
      },
    });
    expect(await fetchBalances(client, A)).toEqual({
      balances: { XE: 700n },
      spendable: { XE: 700n },
      finalHeight: 1,
      source: 'node',
    });
    // The proxy form is known to be absent from then on.
    seen.length = 0;
    await fetchBalances(client, A);
    expect(seen.some((p) => p.startsWith('/api/v1/'))).toBe(false);
  });
});

describe('history', () => {
  it('takes a receive’s amount, sender and memo from its send', () => {
    const send: Block = {
      ...blk('send', 'XE', 1n, 250_500_000n, { destination: A, memo: 'hi' }),
      account: B,
    };
    const recv = blk('receive', 'XE', 250_500_000n, undefined, { source: send.hash });
    const row = rowOf(cb(recv, true), 1, send);
    expect(row).toMatchObject({ direction: 'in', amount: 250_500_000n, counterparty: B, memo: 'hi' });
    expect(rowOf(cb(recv, true), 1).amount).toBeUndefined();
  });

  it('writes CSV with exact micro-units, quoting, and a guard against spreadsheet formulas', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    const claim = blk('claim', 'XE', 18_446_744_073_709_551_615n, 18_446_744_073_709_551_615n);
    const csv = historyCsv([rowOf(cb(claim, false), 1)]);
    const [header, line] = csv.split('\r\n');
    expect(header!.split(',')).toContain('amount_micro');
    expect(line).toContain(',claim,in,XE,18446744073709551615,18446744073709.551615,');
    expect(line!.endsWith(',false')).toBe(true);
  });
});

describe('send checks', () => {
  const draft = { to: B, asset: 'XE', amount: '1.5', memo: 'ok' };
  const spendable = { XE: 2_000_000n };

  it('accepts a good send, converting the amount exactly', () => {
    expect(checkSend(draft, A, spendable, spendable, EN)).toEqual({
      ok: { destination: B, amount: 1_500_000n, asset: 'XE', memo: 'ok' },
    });
    expect(
      checkSend({ ...draft, to: B.toUpperCase(), amount: '0.000001' }, A, spendable, spendable, EN),
    ).toMatchObject({
      ok: { destination: B, amount: 1n },
    });
  });

  it('explains each problem', () => {
    const errs = (d: Partial<typeof draft>, s: Record<string, bigint> | null = spendable) => {
      const r = checkSend({ ...draft, ...d }, A, s ?? undefined, { XE: 3_000_000n }, EN);
      return 'errors' in r ? r.errors : {};
    };
    expect(errs({ to: 'abc' }).to).toBe('An address is 64 hexadecimal characters; this has 3.');
    expect(errs({ to: 'zz'.repeat(32) }).to).toMatch(/hexadecimal/);
    expect(errs({ to: A }).to).toMatch(/sending account itself/);
    expect(errs({ amount: '1.0000001' }).amount).toBe(
      'At most 6 digits after the decimal point: "1.0000001" has 7.',
    );
    expect(errs({ amount: '1e3' }).amount).toMatch(/"1e3" is not an amount: type it like 1,250\.5/);
    expect(errs({ amount: '0' }).amount).toBe('Enter an amount greater than 0.');
    expect(errs({ amount: '2.000001' }).amount).toBe(
      'Not enough funds: 2.000001 XE asked, 2 XE available to send (balance 3 XE, of which 1 XE is waiting for confirmation).',
    );
    expect(errs({}, null).amount).toMatch(/still loading/);
    expect(errs({ memo: 'é'.repeat(33) }).memo).toBe('Memo is 66 bytes; the limit is 64.');
    expect(errs({ memo: 'a\u0001' }).memo).toMatch(/control character/);
  });

  it('groups thousands exactly', () => {
    expect(groupedUnits(1_234_567_890_123n, 0, EN)).toBe('1,234,567.890123');
    expect(groupedUnits(-1_000_000n, 0, EN)).toBe('-1');
    // In the person's locale when asked: what is shown reads back in the send form.
    expect(groupedUnits(1_234_567_890_123n, 0, separatorsOf('de-DE'))).toBe('1.234.567,890123');
    expect(groupedUnits(1_250_500_000n, 0, EN)).toBe('1,250.5');
  });
});
