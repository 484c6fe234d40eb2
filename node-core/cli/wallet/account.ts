import type { Block } from '../../protocol/block.ts';
import { intFlag, positionals } from './args.ts';
import type { WalletCommand } from './command.ts';
import type { WalletContext } from './context.ts';
import { amount, isoOfNs } from './io.ts';

/**
 * `balance` and `history`: reads of an account, the keystore's (--account) or any address given
 * as an argument (then no keystore and no passphrase are needed).
 */

/** The address a read is about: the argument when it is one, else the keystore's account. */
async function addressOf(ctx: WalletContext): Promise<string> {
  const [given] = positionals(ctx.args, [], 1);
  if (given !== undefined) {
    const a = given.toLowerCase();
    if (/^[0-9a-f]{64}$/.test(a)) return a;
    // A label or #N: the keystore's account of that name.
    ctx.args.values.set('--account', given);
  }
  return (await ctx.account()).address;
}

const balance: WalletCommand = {
  name: 'balance',
  summary: "an account's balances and what waits for it to receive",
  usage: '[ADDRESS | LABEL]',
  example: 'ledger-node balance --account savings --json',
  async run(ctx) {
    const address = await addressOf(ctx);
    const balances = await ctx.client.balances(address);
    const pending = await ctx.client.pending(address);
    const assets = Object.keys(balances).sort();
    ctx.print(
      {
        address,
        balances,
        pending: pending.map((p) => ({ hash: p.hash, from: p.from, amount: p.amount, asset: p.asset })),
      },
      [
        `Account ${address}`,
        ...(assets.length === 0 ? ['  no funds'] : assets.map((a) => `  ${amount(balances[a]!, a)}`)),
        ...(pending.length === 0
          ? []
          : [
              `  ${pending.length} to receive: ${pending.map((p) => amount(p.amount, p.asset)).join(', ')} ('ledger-node receive')`,
            ]),
      ].join('\n'),
    );
  },
};

/** What a block did to its account, for a line of history. */
function effect(b: Block): string {
  switch (b.type) {
    case 'send':
      return `-${amount(b.amount ?? 0n, b.asset)} to ${b.destination}`;
    case 'receive':
      return `received (source ${b.source})`;
    case 'claim':
    case 'mint':
      return `+${amount(b.amount ?? 0n, b.asset)}`;
    case 'burn':
      return `-${amount(b.amount ?? 0n, b.asset)} burned`;
    default:
      return b.type;
  }
}

const history: WalletCommand = {
  name: 'history',
  summary: "an account's blocks, newest first",
  usage: '[ADDRESS | LABEL] [--limit N]',
  details: '--limit N   at most N blocks (default 20, at most 1000)',
  example: 'ledger-node history 3f2a...c9 --limit 5',
  flags: { values: ['--limit'] },
  async run(ctx) {
    const limit = intFlag(ctx.args, '--limit', 20, 1, 1000);
    const address = await addressOf(ctx);
    const head = await ctx.client.chain(address, 0, 1);
    const total = head?.total ?? 0;
    const page =
      total === 0 ? [] : ((await ctx.client.chain(address, Math.max(0, total - limit), limit))?.blocks ?? []);
    const blocks = [...page].reverse();
    ctx.print(
      {
        address,
        total,
        blocks: blocks.map(({ block: b, finalized }) => ({
          hash: b.hash,
          type: b.type,
          asset: b.asset,
          ...(b.amount !== undefined ? { amount: b.amount } : {}),
          ...(b.destination !== undefined ? { destination: b.destination } : {}),
          ...(b.source !== undefined ? { source: b.source } : {}),
          ...(b.memo !== undefined ? { memo: b.memo } : {}),
          balance: b.balance,
          timestamp: b.timestamp,
          finalized,
        })),
      },
      total === 0
        ? `Account ${address} has no blocks.`
        : [
            `Account ${address}: ${total} block${total === 1 ? '' : 's'}${total > blocks.length ? `, newest ${blocks.length}` : ''}`,
            ...blocks.map(
              ({ block: b, finalized }) =>
                `  ${isoOfNs(b.timestamp)}  ${b.type.padEnd(8)} ${effect(b)}  balance ${amount(b.balance, b.asset)}  ${b.hash!.slice(0, 12)}${finalized ? '' : '  (not final)'}`,
            ),
          ].join('\n'),
    );
  },
};

export const accountCommands: WalletCommand[] = [balance, history];
