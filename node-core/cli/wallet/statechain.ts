import { readFileSync, writeFileSync } from 'node:fs';
import { bytesToHex } from '../../protocol/hex.ts';
import { parseJson, stringifyJson } from '../../protocol/json.ts';
import { signBytes } from '../../protocol/keys.ts';
import {
  checkStateKey,
  parseStateBlock,
  type StateBlock,
  stateBlockHashBytes,
  stateBlockToJson,
  type StateOp,
} from '../../protocol/statechain.ts';
import { positionals } from './args.ts';
import type { WalletCommand } from './command.ts';
import type { WalletContext } from './context.ts';
import { WalletError, WalletUsageError } from './errors.ts';
import type { Account } from './keystore.ts';

/**
 * `statechain get|propose|cosign`: the network's state chain (key/values written by the DAO).
 * `propose` builds a block on the tip with this account's signature (a DAO key) and writes it to a
 * file, exactly the body `POST /statechain/blocks` takes; each other DAO member runs `cosign FILE`;
 * the signature that reaches the DAO threshold submits it.
 */

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

async function daoKeyset(ctx: WalletContext): Promise<{ keys: string[]; threshold: number }> {
  const k = await ctx.client.get<{ keys: string[]; threshold: number | bigint }>('/statechain/keyset');
  return { keys: k.keys, threshold: Number(k.threshold) };
}

function sign(block: StateBlock, account: Account): StateBlock {
  const hash = stateBlockHashBytes(block);
  if (block.hash !== undefined && block.hash !== bytesToHex(hash))
    throw new WalletError('usage', 'the proposed block does not match its hash: it was changed');
  const signatures = [
    ...block.signatures.filter((s) => s.public_key !== account.pub_key),
    { public_key: account.pub_key, signature: bytesToHex(signBytes(hash, account.seed)) },
  ];
  return { ...block, signatures, hash: bytesToHex(hash) };
}

async function finish(
  ctx: WalletContext,
  block: StateBlock,
  threshold: number,
  file: string | undefined,
): Promise<void> {
  const body = stateBlockToJson(block);
  if (block.signatures.length >= threshold) {
    const r = await ctx.client.post<Record<string, unknown>>('/statechain/blocks', stringifyJson(body));
    ctx.print(
      { submitted: true, hash: block.hash, index: block.index, answer: r },
      `Submitted state block ${block.index} with ${block.signatures.length} of ${threshold} signatures\n  hash ${block.hash}`,
    );
    return;
  }
  const text = `${stringifyJson(body)}\n`;
  if (file !== undefined) writeFileSync(file, text);
  ctx.print(
    {
      submitted: false,
      hash: block.hash,
      index: block.index,
      signatures: block.signatures.length,
      threshold,
      ...(file ? { file } : {}),
    },
    file
      ? `Signed state block ${block.index}: ${block.signatures.length} of ${threshold} signatures\n  next DAO member: ledger-node statechain cosign ${file}`
      : text,
  );
}

async function member(ctx: WalletContext): Promise<{ account: Account; threshold: number }> {
  const [account, ks] = [await ctx.account(), await daoKeyset(ctx)];
  if (!ks.keys.includes(account.pub_key))
    throw new WalletUsageError(`"${account.label}" is not a DAO key of this network`);
  return { account, threshold: ks.threshold };
}

const get: WalletCommand = {
  name: 'statechain get',
  summary: 'read a state-chain value (or every key under a prefix)',
  usage: '(KEY | --prefix PREFIX)',
  example: 'ledger-node statechain get sys.pow_difficulty',
  flags: { values: ['--prefix'] },
  async run(ctx) {
    const prefix = ctx.args.values.get('--prefix');
    if (prefix !== undefined) {
      positionals(ctx.args, []);
      const list = await ctx.client.get<{ key: string; value: unknown }[]>(
        `/statechain/kv?prefix=${encodeURIComponent(prefix)}&limit=1000`,
      );
      ctx.print(
        list,
        list.length === 0
          ? `No keys under "${prefix}".`
          : list.map((e) => `${e.key} = ${stringifyJson(e.value as never)}`).join('\n'),
      );
      return;
    }
    const [key] = positionals(ctx.args, ['KEY']);
    const r = await ctx.client.send('GET', `/statechain/kv/${encodeURIComponent(checkStateKey(key, 'KEY'))}`);
    const value = (r.body as { value?: unknown } | undefined)?.value;
    ctx.print(r.body, `${key} = ${stringifyJson(value as never)}`);
  },
};

const propose: WalletCommand = {
  name: 'statechain propose',
  summary: 'propose a state-chain write signed by this DAO key; other members co-sign the file',
  usage: '(--set KEY=JSON | --delete KEY)... --out FILE',
  details:
    'Repeat --set and --delete in one block. JSON values are kept byte for byte (the hash covers them).',
  example: 'ledger-node statechain propose --set \'app/motd="hello"\' --out motd.json --account dao-1',
  flags: { values: ['--set', '--delete', '--out'] },
  async run(ctx) {
    positionals(ctx.args, []);
    // parseFlags keeps the last of a repeated flag: read every occurrence from the raw order instead.
    const ops: StateOp[] = ctx.rawFlags(['--set', '--delete']).map(([flag, v]): StateOp => {
      if (flag === '--delete') return { type: 'delete', key: checkStateKey(v, '--delete') };
      const eq = v.indexOf('=');
      if (eq < 1) throw new WalletUsageError(`--set: "${v}" is not KEY=JSON`);
      const text = v.slice(eq + 1);
      try {
        parseJson(text);
      } catch (e) {
        throw new WalletUsageError(
          `--set ${v.slice(0, eq)}: the value is not JSON (${(e as Error).message})`,
        );
      }
      return { type: 'set', key: checkStateKey(v.slice(0, eq), '--set'), value: text };
    });
    if (ops.length === 0) throw new WalletUsageError('give at least one --set KEY=JSON or --delete KEY');
    const { account, threshold } = await member(ctx);
    const tip = await ctx.client.get<{ index: number | bigint; hash: string; timestamp: number | bigint }>(
      '/statechain/tip',
    );
    const ts = nowNs();
    const block = sign(
      {
        index: BigInt(tip.index) + 1n,
        prev_hash: tip.hash,
        ops,
        signatures: [],
        timestamp: ts > BigInt(tip.timestamp) ? ts : BigInt(tip.timestamp) + 1n,
      },
      account,
    );
    await finish(ctx, block, threshold, ctx.args.values.get('--out'));
  },
};

const cosign: WalletCommand = {
  name: 'statechain cosign',
  summary: "add this DAO key's signature to a proposed block; the last one needed submits it",
  usage: 'FILE',
  example: 'ledger-node statechain cosign motd.json --account dao-2',
  async run(ctx) {
    const [file] = positionals(ctx.args, ['FILE']);
    let block: StateBlock;
    try {
      block = parseStateBlock(readFileSync(file!, 'utf8'));
    } catch (e) {
      throw new WalletUsageError(`${file}: not a state block file (${(e as Error).message})`);
    }
    const { account, threshold } = await member(ctx);
    await finish(ctx, sign(block, account), threshold, file);
  },
};

export const statechainCommands: WalletCommand[] = [get, propose, cosign];
