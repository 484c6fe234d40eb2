import { describe, expect, it } from 'vitest';
import { DEFAULT_LEASE_TIMING } from '../../node-core/leasing/timing.ts';
import { LedgerError } from '../../node-core/ledger/errors.ts';
import type { AccountRecord, PendingRecord } from '../../node-core/ledger/records.ts';
import { applyTypeRule, type RuleView, type SignedBlock } from '../../node-core/ledger/rules/index.ts';
import { ZERO_HASH } from '../../node-core/protocol/block.ts';
import { U64_MAX } from '../../node-core/protocol/int.ts';
import { multisigAddress } from '../../node-core/protocol/keys.ts';

/**
 * The per-type rules as pure checks over a view of the ledger (the view here is plain data: the
 * rules read nothing else). The HTTP integration tests cover the same rules through a real node.
 */
const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);
const S = 'cc'.repeat(32);
const DAY = 86_400_000_000_000n;

function view(
  over: Partial<{ pending: Record<string, PendingRecord>; blocks: Record<string, SignedBlock> }> = {},
): RuleView {
  return {
    faucet: { amount: 1000n, period_ns: DAY },
    isMinter: (a) => a === A,
    pending: (account, source) => over.pending?.[`${account}:${source}`],
    block: (hash) => over.blocks?.[hash],
    leasing: {
      lease: () => undefined,
      certificate: () => undefined,
      timekeepers: undefined,
      epochCandidates: () => undefined,
      timing: DEFAULT_LEASE_TIMING,
      stakeMilli: 0n,
      account: () => undefined,
      hashAt: () => undefined,
      verify: () => false,
    },
  };
}

function block(fields: Partial<SignedBlock>): SignedBlock {
  return {
    type: 'send',
    account: A,
    previous: S,
    balance: 0n,
    timestamp: 10n * DAY,
    asset: 'XE',
    hash: 'dd'.repeat(32),
    ...fields,
  };
}

function refusal(fn: () => unknown): { code: string; retryable: boolean } {
  try {
    fn();
  } catch (e) {
    if (e instanceof LedgerError) return { code: e.code, retryable: e.retryable };
    throw e;
  }
  throw new Error('not refused');
}

const acct = (over: Partial<AccountRecord> = {}): AccountRecord => ({
  height: 1,
  frontier: S,
  balances: {},
  final_height: 1,
  final_balances: {},
  last_timestamp: 0n,
  ...over,
});

describe('ledger type rules', () => {
  it('claim: within the faucet window only, counting claims inside the period', () => {
    const b = block({ type: 'claim', amount: 400n });
    const a = acct({
      claims: [
        [b.timestamp - DAY, 900n],
        [b.timestamp - DAY + 1n, 600n],
      ],
    });
    const fx = applyTypeRule({ block: b, acct: a, old: 5n, view: view() });
    expect(fx).toEqual({
      balance: 405n,
      claims: [
        [b.timestamp - DAY + 1n, 600n],
        [b.timestamp, 400n],
      ],
      supply: [{ asset: 'XE', term: 'faucet', amount: 400n }],
    });
    expect(
      refusal(() => applyTypeRule({ block: { ...b, amount: 401n }, acct: a, old: 0n, view: view() })),
    ).toEqual({ code: 'claim_limit', retryable: false });
    expect(
      refusal(() => applyTypeRule({ block: { ...b, asset: 'XUSD' }, acct: a, old: 0n, view: view() })).code,
    ).toBe('wrong_asset');
    expect(
      refusal(() => applyTypeRule({ block: b, acct: a, old: 0n, view: { ...view(), faucet: undefined } }))
        .code,
    ).toBe('faucet_disabled');
    expect(
      refusal(() => applyTypeRule({ block: { ...b, amount: 0n }, acct: a, old: 0n, view: view() })).code,
    ).toBe('amount_zero');
    expect(
      refusal(() => applyTypeRule({ block: { ...b, amount: 1n }, acct: a, old: U64_MAX, view: view() })).code,
    ).toBe('overflow');
  });

  it('send: debits into a pending entry; never to itself, never past the balance', () => {
    const b = block({ type: 'send', destination: B, amount: 7n });
    expect(applyTypeRule({ block: b, acct: acct(), old: 10n, view: view() })).toEqual({
      balance: 3n,
      pendingPut: { destination: B, from: A, amount: 7n, asset: 'XE', timestamp: b.timestamp },
    });
    expect(refusal(() => applyTypeRule({ block: b, acct: acct(), old: 6n, view: view() })).code).toBe(
      'insufficient_balance',
    );
    expect(
      refusal(() => applyTypeRule({ block: { ...b, destination: A }, acct: acct(), old: 10n, view: view() }))
        .code,
    ).toBe('self_send');
  });

  it('receive: takes a pending send; an unknown source is retryable, a known non-pending one is not', () => {
    const b = block({ type: 'receive', source: S, previous: ZERO_HASH });
    const pending = { [`${A}:${S}`]: { from: B, amount: 9n, asset: 'XE', timestamp: 1n } };
    expect(applyTypeRule({ block: b, acct: undefined, old: 0n, view: view({ pending }) })).toEqual({
      balance: 9n,
      pendingDelete: [A, S],
    });
    expect(refusal(() => applyTypeRule({ block: b, acct: undefined, old: 0n, view: view() }))).toEqual({
      code: 'source_not_pending',
      retryable: true,
    });
    const sent = block({ type: 'send', account: B, destination: A, hash: S });
    expect(
      refusal(() =>
        applyTypeRule({ block: b, acct: undefined, old: 0n, view: view({ blocks: { [S]: sent } }) }),
      ).code,
    ).toBe('source_received');
    const burn = block({ type: 'burn', account: B, hash: S });
    expect(
      refusal(() =>
        applyTypeRule({ block: b, acct: undefined, old: 0n, view: view({ blocks: { [S]: burn } }) }),
      ),
    ).toEqual({ code: 'source_not_pending', retryable: false });
    expect(
      refusal(() =>
        applyTypeRule({ block: { ...b, asset: 'XUSD' }, acct: undefined, old: 0n, view: view({ pending }) }),
      ).code,
    ).toBe('wrong_asset');
    expect(
      refusal(() =>
        applyTypeRule({ block: { ...b, amount: 8n }, acct: undefined, old: 0n, view: view({ pending }) }),
      ).code,
    ).toBe('balance_mismatch');
  });

  it('burn and mint: the asset each allows, the minter list, the supply term each moves', () => {
    expect(
      applyTypeRule({ block: block({ type: 'burn', amount: 4n }), acct: acct(), old: 4n, view: view() }),
    ).toEqual({
      balance: 0n,
      supply: [{ asset: 'XE', term: 'burned', amount: 4n }],
    });
    const mint = block({ type: 'mint', asset: 'XUSD', amount: 3n });
    expect(applyTypeRule({ block: mint, acct: acct(), old: 1n, view: view() })).toEqual({
      balance: 4n,
      supply: [{ asset: 'XUSD', term: 'minted', amount: 3n }],
    });
    expect(
      refusal(() => applyTypeRule({ block: { ...mint, account: B }, acct: acct(), old: 0n, view: view() }))
        .code,
    ).toBe('not_minter');
    expect(
      refusal(() => applyTypeRule({ block: { ...mint, asset: 'XE' }, acct: acct(), old: 0n, view: view() }))
        .code,
    ).toBe('wrong_asset');
  });

  it('multisig: open only at the keyset address, update only on a multisig account', () => {
    const keyset = { keys: [A, B], threshold: 2 };
    const open = block({
      type: 'multisig_open',
      account: multisigAddress(keyset),
      previous: ZERO_HASH,
      keyset,
    });
    expect(applyTypeRule({ block: open, acct: undefined, old: 0n, view: view() })).toEqual({
      balance: 0n,
      keyset,
    });
    expect(
      refusal(() => applyTypeRule({ block: { ...open, account: A }, acct: undefined, old: 0n, view: view() }))
        .code,
    ).toBe('multisig');
    const update = block({ type: 'multisig_update', keyset });
    expect(refusal(() => applyTypeRule({ block: update, acct: acct(), old: 5n, view: view() })).code).toBe(
      'multisig',
    );
    expect(applyTypeRule({ block: update, acct: acct({ keyset }), old: 5n, view: view() })).toEqual({
      balance: 5n,
      keyset,
    });
  });

  it('a type without a rule is refused as one this node cannot judge yet (retryable)', () => {
    expect(
      refusal(() =>
        applyTypeRule({ block: block({ type: 'genesis' }), acct: acct(), old: 0n, view: view() }),
      ),
    ).toEqual({
      code: 'unsupported_type',
      retryable: true,
    });
  });
});
