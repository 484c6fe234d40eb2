import type { Block } from '../../protocol/block.ts';
import { isAsset, parseUnits } from '../../protocol/units.ts';
import { positionals } from './args.ts';
import type { WalletCommand } from './command.ts';
import type { WalletContext } from './context.ts';
import { WalletError, WalletUsageError } from './errors.ts';
import { amount } from './io.ts';

/**
 * The writes of a single-key account: send, receive, claim, burn, mint. Each builds the block from
 * the account's chain on the node, signs it here (the seed never leaves this process), solves its
 * proof of work on every core and submits it; the node's refusal is the command's error.
 */

function blockJson(b: Block): Record<string, unknown> {
  return {
    hash: b.hash,
    type: b.type,
    account: b.account,
    asset: b.asset,
    ...(b.amount !== undefined ? { amount: b.amount } : {}),
    ...(b.destination !== undefined ? { destination: b.destination } : {}),
    ...(b.source !== undefined ? { source: b.source } : {}),
    ...(b.memo !== undefined ? { memo: b.memo } : {}),
    balance: b.balance,
    timestamp: b.timestamp,
  };
}

function amountArg(text: string | undefined, what: string): bigint {
  if (text === undefined) throw new WalletUsageError(`missing ${what}`);
  const v = parseUnits(text, what);
  if (v === 0n) throw new WalletUsageError(`${what} must be more than 0`);
  return v;
}

function assetFlag(ctx: WalletContext): string {
  const a = (ctx.args.values.get('--asset') ?? 'XE').toUpperCase();
  if (!isAsset(a)) throw new WalletUsageError(`--asset: "${a}" is not XE or XUSD`);
  return a;
}

const send: WalletCommand = {
  name: 'send',
  summary: 'send an amount to an address',
  usage: 'TO AMOUNT [--asset XE|XUSD] [--memo TEXT]',
  details: 'AMOUNT is in whole units with up to 6 decimals (1.5 = 1,500,000 micro-units).',
  example: 'ledger-node send 9c1e...04 12.5 --memo "invoice 7"',
  flags: { values: ['--asset', '--memo'] },
  async run(ctx) {
    const [to, amt] = positionals(ctx.args, ['TO', 'AMOUNT']);
    const destination = to!.toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(destination))
      throw new WalletUsageError(`TO: "${to}" is not an address (64 hex digits)`);
    const value = amountArg(amt, 'AMOUNT');
    const asset = assetFlag(ctx);
    const account = await ctx.account();
    const wallet = await ctx.wallet(account, 'the send');
    const have = wallet.balances[asset] ?? 0n;
    if (have < value)
      throw new WalletError(
        'insufficient_funds',
        `insufficient funds: "${account.label}" holds ${amount(have, asset)}, the send needs ${amount(value, asset)}`,
      );
    const b = await wallet.send(destination, value, asset, ctx.args.values.get('--memo'));
    ctx.print(
      blockJson(b),
      `Sent ${amount(value, asset)} to ${destination}\n  block ${b.hash}\n  balance ${amount(b.balance, asset)}`,
    );
  },
};

const receive: WalletCommand = {
  name: 'receive',
  summary: 'receive what was sent to the account: one send by its hash, or all of them',
  usage: '[SEND_HASH]',
  example: 'ledger-node receive --account savings',
  async run(ctx) {
    const [hash] = positionals(ctx.args, [], 1);
    const account = await ctx.account();
    const pending = await ctx.client.pending(account.address);
    const chosen = hash === undefined ? pending : pending.filter((p) => p.hash === hash.toLowerCase());
    if (hash !== undefined && chosen.length === 0)
      throw new WalletError('nothing_pending', `no pending send ${hash} for "${account.label}"`);
    if (chosen.length === 0) {
      ctx.print({ address: account.address, received: [] }, `Nothing to receive for "${account.label}".`);
      return;
    }
    const wallet = await ctx.wallet(account, 'the receive');
    const blocks: Block[] = [];
    for (const p of chosen) blocks.push(await wallet.receive(p));
    ctx.print(
      { address: account.address, received: blocks.map(blockJson) },
      [
        `Received ${blocks.length} send${blocks.length === 1 ? '' : 's'} for "${account.label}":`,
        ...chosen.map((p, i) => `  ${amount(p.amount, p.asset)} from ${p.from}  block ${blocks[i]!.hash}`),
      ].join('\n'),
    );
  },
};

const claim: WalletCommand = {
  name: 'claim',
  summary: 'claim test funds on a development network (1,000 XE per account per 24 hours)',
  usage: '[AMOUNT]',
  example: 'ledger-node claim 250',
  async run(ctx) {
    const [amt] = positionals(ctx.args, [], 1);
    const value = amountArg(amt ?? '1000', 'AMOUNT');
    const account = await ctx.account();
    const wallet = await ctx.wallet(account, 'the claim');
    const b = await wallet.claim(value);
    ctx.print(
      blockJson(b),
      `Claimed ${amount(value, 'XE')} for "${account.label}"\n  block ${b.hash}\n  balance ${amount(b.balance, 'XE')}`,
    );
  },
};

const burn: WalletCommand = {
  name: 'burn',
  summary: 'burn XE (it leaves the supply)',
  usage: 'AMOUNT [--memo TEXT]',
  example: 'ledger-node burn 5 --memo "bridge 42"',
  flags: { values: ['--memo'] },
  async run(ctx) {
    const [amt] = positionals(ctx.args, ['AMOUNT']);
    const value = amountArg(amt, 'AMOUNT');
    const account = await ctx.account();
    const wallet = await ctx.wallet(account, 'the burn');
    const have = wallet.balances.XE ?? 0n;
    if (have < value)
      throw new WalletError(
        'insufficient_funds',
        `insufficient funds: "${account.label}" holds ${amount(have, 'XE')}, the burn needs ${amount(value, 'XE')}`,
      );
    const b = await wallet.burn(value, ctx.args.values.get('--memo'));
    ctx.print(
      blockJson(b),
      `Burned ${amount(value, 'XE')}\n  block ${b.hash}\n  balance ${amount(b.balance, 'XE')}`,
    );
  },
};

const mint: WalletCommand = {
  name: 'mint',
  summary: "mint XUSD (the network's minter account only)",
  usage: 'AMOUNT',
  example: 'ledger-node mint 100 --account minter',
  async run(ctx) {
    const [amt] = positionals(ctx.args, ['AMOUNT']);
    const value = amountArg(amt, 'AMOUNT');
    const account = await ctx.account();
    const wallet = await ctx.wallet(account, 'the mint');
    const b = await wallet.mint(value);
    ctx.print(
      blockJson(b),
      `Minted ${amount(value, 'XUSD')}\n  block ${b.hash}\n  balance ${amount(b.balance, 'XUSD')}`,
    );
  },
};

export const transferCommands: WalletCommand[] = [send, receive, claim, burn, mint];
