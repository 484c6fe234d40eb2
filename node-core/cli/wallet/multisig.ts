import { readFileSync, writeFileSync } from 'node:fs';
import type { NodeInfo } from '../../client/client.ts';
import { blockToJson, decodeBlock } from '../../protocol/block-json.ts';
import { type Block, blockHashBytes, ZERO_HASH } from '../../protocol/block.ts';
import { bytesToHex, hexToBytes } from '../../protocol/hex.ts';
import { parseJson } from '../../protocol/json.ts';
import { multisigAddress, normalizeKeyset, signBytes, type Keyset } from '../../protocol/keys.ts';
import { parseUnits } from '../../protocol/units.ts';
import { positionals } from './args.ts';
import type { WalletCommand } from './command.ts';
import type { WalletContext } from './context.ts';
import { WalletError, WalletUsageError } from './errors.ts';
import { amount, exactJson } from './io.ts';
import type { Account } from './keystore.ts';

/**
 * `multisig open|update|receive|send|cosign`: blocks of a multisig account, signed by several people. A
 * command prepares the block (from the account's chain on the node), signs it with this keystore's
 * account and writes it to a file; each other signer runs `multisig cosign FILE`; the signature that
 * reaches the threshold solves the proof of work and submits it. The file holds the block in the
 * node form, the network and the threshold: nothing secret.
 */
export interface PreparedBlock {
  type: 'ledger-node-prepared-block';
  network_id: string;
  threshold: number;
  block: Record<string, unknown>;
}

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

function keysetFlag(ctx: WalletContext): Keyset {
  const keys = ctx.args.values.get('--keys');
  const t = ctx.args.values.get('--threshold');
  if (keys === undefined || t === undefined)
    throw new WalletUsageError('give --keys K1,K2,... and --threshold N');
  if (!/^[0-9]+$/.test(t)) throw new WalletUsageError(`--threshold: "${t}" is not a whole number`);
  try {
    return normalizeKeyset({
      keys: keys.split(',').map((k) => k.trim().toLowerCase()),
      threshold: Number(t),
    });
  } catch (e) {
    throw new WalletUsageError((e as Error).message);
  }
}

/** Adds this account's signature over the block's hash (checked against the network first). */
function addSignature(block: Block, networkId: string, account: Account): Block {
  const unsigned: Block = { ...block };
  delete unsigned.signatures;
  delete unsigned.hash;
  delete unsigned.pow_nonce;
  const hash = blockHashBytes(unsigned, networkId);
  if (block.hash !== undefined && block.hash !== bytesToHex(hash))
    throw new WalletError(
      'usage',
      'the prepared block does not match its hash: it was changed, or is for another network',
    );
  const others = (block.signatures ?? []).filter((s) => s.public_key !== account.pub_key);
  const signatures = [
    ...others,
    { public_key: account.pub_key, signature: bytesToHex(signBytes(hash, account.seed)) },
  ].sort((a, b) => (a.public_key < b.public_key ? -1 : 1));
  return { ...unsigned, signatures, hash: bytesToHex(hash) };
}

/** Writes the prepared block, or submits it once it carries `threshold` signatures. */
async function finish(
  ctx: WalletContext,
  info: NodeInfo,
  prepared: PreparedBlock,
  block: Block,
  file: string | undefined,
): Promise<void> {
  const count = block.signatures?.length ?? 0;
  if (count >= prepared.threshold) {
    const pow = ctx.pow(`the ${block.type}`);
    const nonce =
      info.pow_difficulty === 0n ? 0n : await pow.solve(hexToBytes(block.hash!, 32), info.pow_difficulty);
    ctx.powDone();
    await ctx.client.submit({ ...block, pow_nonce: nonce });
    ctx.print(
      { submitted: true, hash: block.hash, type: block.type, account: block.account, signatures: count },
      `Submitted ${block.type} of ${block.account} with ${count} of ${prepared.threshold} signatures\n  block ${block.hash}`,
    );
    return;
  }
  const out: PreparedBlock = { ...prepared, block: blockToJson(block, 'node') };
  const text = `${exactJson(out)}\n`;
  if (file !== undefined) writeFileSync(file, text);
  ctx.print(
    {
      submitted: false,
      hash: block.hash,
      signatures: count,
      threshold: prepared.threshold,
      ...(file ? { file } : { prepared: out }),
    },
    file
      ? `Signed ${block.type} of ${block.account}: ${count} of ${prepared.threshold} signatures\n  next signer: ledger-node multisig cosign ${file}`
      : text,
  );
}

/** The first signer's step: signs the new block and writes it to --out (or submits it at threshold 1). */
function signFirst(
  ctx: WalletContext,
  info: NodeInfo,
  account: Account,
  block: Block,
  threshold: number,
): Promise<void> {
  const prepared: PreparedBlock = {
    type: 'ledger-node-prepared-block',
    network_id: info.network_id,
    threshold,
    block: {},
  };
  return finish(
    ctx,
    info,
    prepared,
    addSignature(block, info.network_id, account),
    ctx.args.values.get('--out'),
  );
}

/** A new block of the multisig account at its current frontier (ZERO_HASH before it is opened). */
async function draft(
  ctx: WalletContext,
  address: string,
  fields: Omit<Block, 'account' | 'previous' | 'timestamp'>,
): Promise<Block> {
  const head = await ctx.client.chain(address, 0, 1);
  let previous = ZERO_HASH;
  let timestamp = nowNs();
  if (head && head.total > 0) {
    const last = (await ctx.client.chain(address, head.total - 1, 1))!.blocks[0]!.block;
    previous = last.hash!;
    if (last.timestamp >= timestamp) timestamp = last.timestamp + 1n;
  }
  return { ...fields, account: address, previous, timestamp };
}

async function currentKeyset(ctx: WalletContext, address: string): Promise<Keyset> {
  const r = await ctx.client.request('GET', `/accounts/${address}/keyset`);
  if (r.status === 404)
    throw new WalletError('unknown_account', `${address} is not an open multisig account`);
  return normalizeKeyset(r.body);
}

function addressArg(text: string | undefined): string {
  const a = (text ?? '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(a)) throw new WalletUsageError(`"${text}" is not an address (64 hex digits)`);
  return a;
}

const open: WalletCommand = {
  name: 'multisig open',
  summary: 'open a multisig account (its address comes from the keys and threshold)',
  usage: '--keys K1,K2,... --threshold N [--out FILE]',
  details:
    "--keys are the members' public keys (hex); this account must be one. --out: the prepared block file.",
  example: 'ledger-node multisig open --keys 1f..aa,5c..0b,9e..41 --threshold 2 --out open.json',
  flags: { values: ['--keys', '--threshold', '--out'] },
  async run(ctx) {
    positionals(ctx.args, []);
    const keyset = keysetFlag(ctx);
    const account = await ctx.account();
    if (!keyset.keys.includes(account.pub_key))
      throw new WalletUsageError(`"${account.label}" (${account.pub_key}) is not one of --keys`);
    const info = await ctx.client.node();
    const address = multisigAddress(keyset);
    const block = await draft(ctx, address, { type: 'multisig_open', asset: 'XE', balance: 0n, keyset });
    await signFirst(ctx, info, account, block, keyset.threshold);
  },
};

const update: WalletCommand = {
  name: 'multisig update',
  summary: "replace a multisig account's keys and threshold (signed by the current threshold)",
  usage: 'ADDRESS --keys K1,K2,... --threshold N [--out FILE]',
  example: 'ledger-node multisig update 4b7e...d2 --keys 1f..aa,9e..41 --threshold 2 --out update.json',
  flags: { values: ['--keys', '--threshold', '--out'] },
  async run(ctx) {
    const [a] = positionals(ctx.args, ['ADDRESS']);
    const address = addressArg(a);
    const next = keysetFlag(ctx);
    const now = await currentKeyset(ctx, address);
    const account = await ctx.account();
    if (!now.keys.includes(account.pub_key))
      throw new WalletUsageError(`"${account.label}" is not a member of ${address}`);
    const info = await ctx.client.node();
    const balances = await ctx.client.balances(address);
    const block = await draft(ctx, address, {
      type: 'multisig_update',
      asset: 'XE',
      balance: balances.XE ?? 0n,
      keyset: next,
    });
    await signFirst(ctx, info, account, block, now.threshold);
  },
};

const send: WalletCommand = {
  name: 'multisig send',
  summary: 'prepare a send from a multisig account',
  usage: 'ADDRESS TO AMOUNT [--asset XE|XUSD] [--memo TEXT] [--out FILE]',
  example: 'ledger-node multisig send 4b7e...d2 9c1e...04 25 --out pay.json',
  flags: { values: ['--asset', '--memo', '--out'] },
  async run(ctx) {
    const [a, to, amt] = positionals(ctx.args, ['ADDRESS', 'TO', 'AMOUNT']);
    const address = addressArg(a);
    const destination = addressArg(to);
    const value = parseUnits(amt!, 'AMOUNT');
    const asset = (ctx.args.values.get('--asset') ?? 'XE').toUpperCase();
    const now = await currentKeyset(ctx, address);
    const account = await ctx.account();
    if (!now.keys.includes(account.pub_key))
      throw new WalletUsageError(`"${account.label}" is not a member of ${address}`);
    const have = (await ctx.client.balances(address))[asset] ?? 0n;
    if (have < value)
      throw new WalletError(
        'insufficient_funds',
        `insufficient funds: ${address} holds ${amount(have, asset)}, the send needs ${amount(value, asset)}`,
      );
    const info = await ctx.client.node();
    const memo = ctx.args.values.get('--memo');
    const block = await draft(ctx, address, {
      type: 'send',
      asset,
      destination,
      amount: value,
      balance: have - value,
      ...(memo !== undefined ? { memo } : {}),
    });
    await signFirst(ctx, info, account, block, now.threshold);
  },
};

const receive: WalletCommand = {
  name: 'multisig receive',
  summary: 'prepare the receive of a send to a multisig account (the oldest pending, or SEND_HASH)',
  usage: 'ADDRESS [SEND_HASH] [--out FILE]',
  example: 'ledger-node multisig receive 4b7e...d2 --out receive.json',
  flags: { values: ['--out'] },
  async run(ctx) {
    const [a, h] = positionals(ctx.args, ['ADDRESS'], 1);
    const address = addressArg(a);
    const now = await currentKeyset(ctx, address);
    const account = await ctx.account();
    if (!now.keys.includes(account.pub_key))
      throw new WalletUsageError(`"${account.label}" is not a member of ${address}`);
    const pending = await ctx.client.pending(address);
    const oldest = [...pending].sort((x, y) =>
      x.timestamp < y.timestamp ? -1 : x.timestamp > y.timestamp ? 1 : 0,
    )[0];
    const p = h === undefined ? oldest : pending.find((x) => x.hash === h.toLowerCase());
    if (!p)
      throw new WalletError(
        'nothing_pending',
        `nothing to receive for ${address}${h ? ` with hash ${h}` : ''}`,
      );
    const have = (await ctx.client.balances(address))[p.asset] ?? 0n;
    const info = await ctx.client.node();
    const block = await draft(ctx, address, {
      type: 'receive',
      asset: p.asset,
      source: p.hash,
      balance: have + p.amount,
    });
    await signFirst(ctx, info, account, block, now.threshold);
  },
};

const cosign: WalletCommand = {
  name: 'multisig cosign',
  summary: "add this account's signature to a prepared block; the last one needed submits it",
  usage: 'FILE',
  example: 'ledger-node multisig cosign open.json --account carol',
  async run(ctx) {
    const [file] = positionals(ctx.args, ['FILE']);
    let prepared: PreparedBlock;
    let block: Block;
    try {
      prepared = parseJson(readFileSync(file!, 'utf8')) as unknown as PreparedBlock;
      if (prepared.type !== 'ledger-node-prepared-block') throw new Error('not a prepared block');
      block = decodeBlock(prepared.block);
    } catch (e) {
      throw new WalletUsageError(`${file}: not a prepared block file (${(e as Error).message})`);
    }
    const info = await ctx.client.node();
    if (prepared.network_id !== info.network_id)
      throw new WalletError(
        'usage',
        `${file} is for network ${prepared.network_id}, the node runs ${info.network_id}`,
      );
    const account = await ctx.account();
    const keyset = block.type === 'multisig_open' ? block.keyset! : await currentKeyset(ctx, block.account);
    if (!keyset.keys.includes(account.pub_key))
      throw new WalletUsageError(`"${account.label}" is not a member of ${block.account}`);
    await finish(
      ctx,
      info,
      { ...prepared, threshold: Number(prepared.threshold) },
      addSignature(block, info.network_id, account),
      file,
    );
  },
};

export const multisigCommands: WalletCommand[] = [open, update, receive, send, cosign];
