import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LeaseActionError, renewalOf } from '../../client/lease-actions.ts';
import { LeasingClient, type LeaseInfo } from '../../client/leasing.ts';
import { bytesToHex } from '../../protocol/hex.ts';
import { keyPairFromSeed, randomSeed } from '../../protocol/keys.ts';
import { marketplaceRequestId, signMarketplaceMessage } from '../../protocol/marketplace.ts';
import { opensshPrivateKey } from '../../protocol/ssh-key.ts';
import { hexToBytes } from '../../protocol/hex.ts';
import { intFlag, positionals } from './args.ts';
import type { WalletCommand } from './command.ts';
import type { WalletContext } from './context.ts';
import { WalletError, WalletUsageError } from './errors.ts';
import { amount, isoOfNs } from './io.ts';
import { saveKeystore } from './keystore.ts';

/**
 * `lease request|list|renew|cancel|ssh`: compute leases paid by a keystore account. A request is
 * signed here and sent to the node, which gathers offers; the cheapest (or --provider's) is taken
 * with a `lease` block carrying a fresh access key, kept in the keystore like the window keeps it.
 * `ssh` opens a shell in the lease's VM through the node's tunnel with that key.
 */

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

function leaseJson(l: LeaseInfo): Record<string, unknown> {
  return {
    lease_hash: l.lease_hash,
    state: l.state,
    provider: l.provider,
    vcpus: l.vcpus,
    memory_mb: l.memory_mb,
    disk_gb: l.disk_gb,
    duration: l.duration,
    cost: l.cost,
    start_time: l.start_time,
  };
}

function leaseLine(l: LeaseInfo): string {
  const start = l.start_time === 0n ? 'not started' : `from ${isoOfNs(l.start_time)}`;
  return `${l.lease_hash}  ${l.state.padEnd(9)} ${l.vcpus} vCPU ${l.memory_mb} MB ${l.disk_gb} GB ${l.duration} s  ${amount(l.cost, 'XUSD')}  ${start}`;
}

function leaseHashArg(ctx: WalletContext): string {
  const [h] = positionals(ctx.args, ['LEASE']);
  const hash = h!.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hash))
    throw new WalletUsageError(`LEASE: "${h}" is not a lease hash (64 hex digits)`);
  return hash;
}

async function ownLease(ctx: WalletContext, hash: string): Promise<LeaseInfo> {
  const lease = await new LeasingClient(ctx.client).lease(hash);
  if (!lease) throw new WalletError('unknown_lease', `the node knows no lease ${hash}`);
  const account = await ctx.account();
  if (lease.consumer !== account.address)
    throw new WalletError(
      'unknown_lease',
      `lease ${hash} belongs to ${lease.consumer}, not to "${account.label}"`,
    );
  return lease;
}

const request: WalletCommand = {
  name: 'lease request',
  summary: 'lease a VM: ask providers for offers and take the cheapest (paid in XUSD)',
  usage: '--duration SECONDS [--vcpus N] [--memory MB] [--disk GB] [--provider ADDRESS] [--wait MS]',
  details:
    '--vcpus N (default 1), --memory MB (default 512), --disk GB (default 1), --duration SECONDS\n' +
    "--provider ADDRESS   take this provider's offer only\n" +
    '--wait MS            how long the node listens for offers (default 3000)\n' +
    "The lease's access key is kept in the keystore: 'ledger-node lease ssh LEASE' uses it.",
  example: 'ledger-node lease request --vcpus 2 --memory 2048 --duration 3600',
  flags: { values: ['--vcpus', '--memory', '--disk', '--duration', '--provider', '--wait'] },
  async run(ctx) {
    positionals(ctx.args, []);
    if (!ctx.args.values.has('--duration')) throw new WalletUsageError('missing --duration SECONDS');
    const dims = {
      vcpus: BigInt(intFlag(ctx.args, '--vcpus', 1, 1, 4096)),
      memory_mb: BigInt(intFlag(ctx.args, '--memory', 512, 1, 67_108_864)),
      disk_gb: BigInt(intFlag(ctx.args, '--disk', 1, 0, 1_048_576)),
      duration: BigInt(intFlag(ctx.args, '--duration', 0, 1, 31_536_000)),
    };
    const wait = intFlag(ctx.args, '--wait', 3000, 0, 30_000);
    const want = ctx.args.values.get('--provider')?.toLowerCase();
    const account = await ctx.account();
    const info = await ctx.client.node();
    const ts = nowNs();
    const req = signMarketplaceMessage(
      'request',
      {
        consumer: account.address,
        consumer_pub_key: account.pub_key,
        request_id: marketplaceRequestId(account.address, ts),
        ...dims,
        timestamp: ts,
      },
      info.network_id,
      account.seed,
    );
    const { offers } = await new LeasingClient(ctx.client).offers(req, wait);
    const offer = want ? offers.find((o) => o.provider === want) : offers[0];
    if (!offer)
      throw new WalletError(
        'no_offer',
        want
          ? `no offer from provider ${want}`
          : 'no provider offered: none has room, or none answered in time',
      );
    const wallet = await ctx.wallet(account, 'the lease');
    const have = wallet.balances.XUSD ?? 0n;
    if (have < offer.total_cost)
      throw new WalletError(
        'insufficient_funds',
        `insufficient funds: "${account.label}" holds ${amount(have, 'XUSD')}, the lease costs ${amount(offer.total_cost, 'XUSD')}`,
      );
    // The access key is saved before its public key goes anywhere, as the window does.
    const ks = await ctx.keystore();
    const accessSeed = randomSeed();
    const accessPub = keyPairFromSeed(accessSeed).pub_key;
    const entry: { seed: string; pub: string; lease?: string; created: number } = {
      seed: bytesToHex(accessSeed),
      pub: accessPub,
      created: Date.now(),
    };
    ks.contents.accessKeys = [...(ks.contents.accessKeys ?? []), entry];
    saveKeystore(ks);
    const block = await wallet.writeBlock({
      type: 'lease',
      asset: 'XUSD',
      destination: offer.provider,
      amount: offer.total_cost,
      vcpus: offer.vcpus,
      memory_mb: offer.memory_mb,
      disk_gb: offer.disk_gb,
      duration: offer.duration,
      access_pub_key: accessPub,
      certificate_hash: offer.certificate_hash,
      balance: have - offer.total_cost,
    });
    entry.lease = block.hash!;
    saveKeystore(ks);
    ctx.print(
      {
        lease_hash: block.hash,
        provider: offer.provider,
        cost: offer.total_cost,
        ...dims,
        access_pub_key: accessPub,
      },
      `Leased ${dims.vcpus} vCPU for ${dims.duration} s from ${offer.provider} for ${amount(offer.total_cost, 'XUSD')}\n  lease ${block.hash}\n  'ledger-node lease ssh ${block.hash}' opens a shell once the provider accepts`,
    );
  },
};

const list: WalletCommand = {
  name: 'lease list',
  summary: "the account's leases, newest first",
  usage: '[--state created|accepted|settled|cancelled|force_settled]',
  example: 'ledger-node lease list --state accepted --json',
  flags: { values: ['--state'] },
  async run(ctx) {
    positionals(ctx.args, []);
    const account = await ctx.account();
    const state = ctx.args.values.get('--state');
    const leases = await new LeasingClient(ctx.client).leases({
      consumer: account.address,
      ...(state ? { state } : {}),
    });
    ctx.print(
      leases.map(leaseJson),
      leases.length === 0 ? `No leases for "${account.label}".` : leases.map(leaseLine).join('\n'),
    );
  },
};

const renew: WalletCommand = {
  name: 'lease renew',
  summary: "extend an accepted lease at the provider's current price",
  usage: 'LEASE --duration SECONDS',
  example: 'ledger-node lease renew 7d0c...e1 --duration 600',
  flags: { values: ['--duration'] },
  async run(ctx) {
    const hash = leaseHashArg(ctx);
    if (!ctx.args.values.has('--duration')) throw new WalletUsageError('missing --duration SECONDS');
    const extension = BigInt(intFlag(ctx.args, '--duration', 0, 1, 31_536_000));
    const lease = await ownLease(ctx, hash);
    let renewal: Awaited<ReturnType<typeof renewalOf>>;
    try {
      renewal = await renewalOf(new LeasingClient(ctx.client), lease, extension);
    } catch (e) {
      if (e instanceof LeaseActionError) throw new WalletError('no_offer', e.message);
      throw e;
    }
    const cost = renewal.cost;
    const account = await ctx.account();
    const wallet = await ctx.wallet(account, 'the renewal');
    const have = wallet.balances.XUSD ?? 0n;
    if (have < cost)
      throw new WalletError(
        'insufficient_funds',
        `insufficient funds: "${account.label}" holds ${amount(have, 'XUSD')}, the renewal costs ${amount(cost, 'XUSD')}`,
      );
    const block = await wallet.writeBlock({ ...renewal.fields, balance: have - cost });
    ctx.print(
      { lease_hash: hash, renew_hash: block.hash, duration: extension, cost },
      `Renewed lease ${hash} by ${extension} s for ${amount(cost, 'XUSD')}\n  block ${block.hash}`,
    );
  },
};

const cancel: WalletCommand = {
  name: 'lease cancel',
  summary: 'cancel a lease nobody accepted yet (its escrow comes back)',
  usage: 'LEASE',
  example: 'ledger-node lease cancel 7d0c...e1',
  async run(ctx) {
    const hash = leaseHashArg(ctx);
    const lease = await ownLease(ctx, hash);
    const account = await ctx.account();
    const wallet = await ctx.wallet(account, 'the cancel');
    const block = await wallet.writeBlock({
      type: 'lease_cancel',
      asset: 'XUSD',
      source: hash,
      balance: (wallet.balances.XUSD ?? 0n) + lease.cost,
    });
    ctx.print(
      { lease_hash: hash, cancel_hash: block.hash, refund: lease.cost },
      `Cancelled lease ${hash}: ${amount(lease.cost, 'XUSD')} back\n  block ${block.hash}`,
    );
  },
};

const BIN = fileURLToPath(new URL('../../../bin/ledger-node.js', import.meta.url));

const ssh: WalletCommand = {
  name: 'lease ssh',
  summary: "open a shell in the lease's VM through the node's tunnel (OpenSSH, the lease's access key)",
  usage: 'LEASE [-- COMMAND...]',
  details: 'Anything after -- is run in the VM instead of a shell. Needs the ssh client.',
  example: 'ledger-node lease ssh 7d0c...e1 -- uname -a',
  async run(ctx) {
    const [h, ...command] = ctx.args.positionals;
    if (h === undefined) throw new WalletUsageError('missing LEASE');
    ctx.args.positionals.splice(1);
    const hash = leaseHashArg(ctx);
    const ks = await ctx.keystore();
    const key = ks.contents.accessKeys?.find((k) => k.lease === hash);
    if (!key) throw new WalletError('unknown_lease', `the keystore has no access key of lease ${hash}`);
    const dir = mkdtempSync(join(tmpdir(), 'ledger-ssh-'));
    const keyFile = join(dir, 'key');
    try {
      writeFileSync(keyFile, opensshPrivateKey(hexToBytes(key.seed, 32), key.pub), { mode: 0o600 });
      const proxy = `${process.execPath} ${BIN} tunnel %h --key ${keyFile} --node ${ctx.nodeUrl}`;
      const args = [
        ...[
          '-i',
          keyFile,
          '-o',
          `ProxyCommand=${proxy}`,
          '-o',
          'StrictHostKeyChecking=no',
          '-o',
          'UserKnownHostsFile=/dev/null',
        ],
        ...['-o', 'LogLevel=ERROR', '-o', 'IdentitiesOnly=yes', `root@${hash}`, ...command],
      ];
      const code = await new Promise<number>((resolve, reject) => {
        const p = spawn('ssh', args, { stdio: 'inherit' });
        p.on('error', (e) => reject(new WalletError('ssh_failed', `cannot run ssh: ${e.message}`)));
        p.on('exit', (c) => resolve(c ?? 1));
      });
      if (code !== 0) throw new WalletError('ssh_failed', `ssh exited with status ${code}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const leaseCommands: WalletCommand[] = [request, list, renew, cancel, ssh];
