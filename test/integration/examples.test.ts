import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatApi, LedgerClient, Wallet } from '../../node-core/client/index.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed, type KeyPair, randomSeed } from '../../node-core/protocol/keys.ts';
import { signChatReadAuth } from '../../node-core/protocol/payloads.ts';
import { tempDir, waitFor } from '../helpers/node.ts';
import { type CliNode, runCli, startCliNode } from './cli-wallet-kit.ts';

/**
 * Every script in examples/ run as a user runs it, against a fresh development node (a real process,
 * its own sandbox provider, short lease windows), with its output checked: the README and the examples
 * cannot drift from what works. TypeScript examples import the package by name (`ledger-node-desktop/
 * client`), resolved in the checkout through the package's "source" export condition.
 */
const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const EX = join(ROOT, 'examples');

let node: CliNode;
let client: LedgerClient;
let alice: KeyPair;
let bob: KeyPair;
let dir: string;

function example(script: string, args: string[], env: NodeJS.ProcessEnv) {
  const isShell = script.endsWith('.sh');
  const p = spawn(
    isShell ? 'sh' : process.execPath,
    [...(isShell ? [] : ['--conditions=source']), join(EX, script), ...args],
    {
      env: { ...process.env, LEDGER_NODE_URL: node.url, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  ) as ChildProcessWithoutNullStreams;
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  p.stdin.end();
  const exited = new Promise<number | null>((r) => p.on('exit', (c) => r(c)));
  return {
    out: () => stdout,
    err: () => stderr,
    waitLine: (re: RegExp, ms = 30_000) => waitFor(() => re.test(stdout), ms, `${script} to print ${re}`),
    done: async (ms = 60_000) => {
      const t = setTimeout(() => p.kill('SIGKILL'), ms);
      const code = await exited;
      clearTimeout(t);
      return { code, stdout, stderr };
    },
  };
}

const hex = (k: KeyPair) => k.seed_hex;

beforeAll(async () => {
  node = await startCliNode([
    '--vm-driver',
    'sandbox',
    '--provide',
    '--genesis-set',
    'lease_min_duration_secs=5',
  ]);
  client = new LedgerClient(node.url);
  alice = keyPairFromSeed(randomSeed());
  bob = keyPairFromSeed(randomSeed());
  dir = tempDir('examples-');
  const a = await Wallet.open(client, hexToBytes(alice.seed_hex));
  await a.claim(500_000_000n);
  // The command line's keystore, for the shell example and the lease and chat set-up.
  const imported = await runCli(['keys', 'import', '--seed', '-', '--label', 'alice'], {
    env: { LEDGER_KEYSTORE: join(dir, 'ks.json'), LEDGER_KEYSTORE_PASSPHRASE: 'pw' },
    input: `${alice.seed_hex}\n`,
  });
  expect(imported.code, imported.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await node?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('examples/ against a fresh development node', { timeout: 120_000 }, () => {
  it('type-check against the package as a script author sees it', async () => {
    const r = await run(process.execPath, [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(EX, 'tsconfig.json'),
    ]).then(
      () => ({ code: 0, out: '' }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('watch-and-receive.ts receives each send as it arrives', async () => {
    const w = example('watch-and-receive.ts', [], {
      LEDGER_SEED: hex(bob),
      MAX_RECEIVES: '2',
      POLL_MS: '200',
    });
    await w.waitLine(/^watching [0-9a-f]{64}/m);
    const a = await Wallet.open(client, hexToBytes(alice.seed_hex));
    await a.send(bob.address, 2_000_000n);
    await a.send(bob.address, 3_500_000n);
    const r = await w.done();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(`watching ${bob.address} on ${node.url}`);
    expect(
      lines
        .slice(1, 3)
        .map((l) => l.replace(/ in block [0-9a-f]{64}$/, ''))
        .sort(),
    ).toEqual([`received 2 XE from ${alice.address}`, `received 3.5 XE from ${alice.address}`].sort());
    expect(lines[3]).toBe('balance 5.5 XE');
    expect(await client.balances(bob.address)).toEqual({ XE: 5_500_000n });
  });

  it('pay-from-csv.ts pays every line, and pays nothing when a line is bad', async () => {
    const [x, y] = [keyPairFromSeed(randomSeed()), keyPairFromSeed(randomSeed())];
    const csv = join(dir, 'pay.csv');
    writeFileSync(csv, `address,amount,memo\n# test run\n${x.address},1.25,first\n${y.address},0.000001\n`);
    const r = await example('pay-from-csv.ts', [csv], { LEDGER_SEED: hex(alice) }).done();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^paid 1\\.25 XE to ${x.address} \\(line 3\\) in block [0-9a-f]{64}$`),
    );
    expect(lines[1]).toMatch(new RegExp(`^paid 0\\.000001 XE to ${y.address} \\(line 4\\) in block`));
    expect(lines[2]).toMatch(/^paid 2 payments, 1\.250001 XE in all; balance [0-9.]+ XE$/);
    expect((await client.pending(x.address)).map((p) => p.amount)).toEqual([1_250_000n]);

    const before = (await client.chain(alice.address, 0, 1))!.total;
    writeFileSync(csv, `${x.address},1\nnot-an-address,2\n`);
    const bad = await example('pay-from-csv.ts', [csv], { LEDGER_SEED: hex(alice) }).done();
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('pay.csv:2: "not-an-address" is not an address');
    expect((await client.chain(alice.address, 0, 1))!.total).toBe(before);
  });

  it('pay-from-csv.sh pays with the command line and shows the balance with curl', async () => {
    const env = { LEDGER_KEYSTORE: join(dir, 'ks.json'), LEDGER_KEYSTORE_PASSPHRASE: 'pw' };
    const z = keyPairFromSeed(randomSeed());
    const csv = join(dir, 'pay-sh.csv');
    writeFileSync(csv, `${z.address},0.5,thanks\n${z.address},0.25`);
    const r = await example('pay-from-csv.sh', [csv], {
      ...env,
      LEDGER_NODE_CMD: `${process.execPath} ${join(ROOT, 'bin/ledger-node.js')}`,
    }).done();
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^paid 0\\.5 XE to ${z.address} in block [0-9a-f]{64}$`));
    expect(lines[1]).toMatch(new RegExp(`^paid 0\\.25 XE to ${z.address} in block [0-9a-f]{64}$`));
    const xe = (await client.balances(alice.address)).XE!;
    expect(lines[2]).toBe(`paid 2 payments; balance of ${alice.address}: ${xe} micro-XE`);
    expect((await client.pending(z.address)).map((p) => p.amount).sort()).toEqual([250_000n, 500_000n]);
  });

  it('export-history.sh writes the chain as CSV with exact figures', async () => {
    const r = await example('export-history.sh', [alice.address], {}).done();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n');
    expect(rows[0]).toBe('timestamp_ns,type,asset,amount,counterparty,balance,finalized,hash');
    const chain = (await client.chain(alice.address, 0, 1000))!;
    expect(rows.length - 1).toBe(chain.total);
    chain.blocks.forEach(({ block: b }, i) => {
      const cells = rows[i + 1]!.split(',').map((c) => c.replace(/^"|"$/g, ''));
      expect(cells[0]).toBe(b.timestamp.toString());
      expect(cells[1]).toBe(b.type);
      expect(cells[3]).toBe(b.amount === undefined ? '' : b.amount.toString());
      expect(cells[5]).toBe(b.balance.toString());
      expect(cells[7]).toBe(b.hash);
    });
  });

  it('chat-bot.ts answers a message', async () => {
    const bot = example('chat-bot.ts', [], { LEDGER_SEED: hex(bob), MAX_REPLIES: '1' });
    await bot.waitLine(/^chat bot [0-9a-f]{64} listening/m);
    const env = {
      LEDGER_KEYSTORE: join(dir, 'ks.json'),
      LEDGER_KEYSTORE_PASSPHRASE: 'pw',
      LEDGER_NODE_URL: node.url,
    };
    const s = await runCli(['chat', 'send', bob.pub_key, 'ping'], { env });
    expect(s.code).toBe(0);
    const r = await bot.done();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`from ${alice.pub_key.slice(0, 12)}: ping\n`);
    expect(r.stdout).toMatch(new RegExp(`replied "pong" to ${alice.pub_key.slice(0, 12)} \\(local\\)`));
    const prove = (c: string) =>
      `account=${alice.pub_key}&pub_key=${alice.pub_key}&challenge=${c}&sig=${signChatReadAuth(c, hexToBytes(alice.seed_hex))}`;
    const { messages } = await new ChatApi(client).messages(prove);
    expect(messages.find((m) => m.from === bob.pub_key)?.message).toBe('pong');
  });

  it('hold-lease.ts renews a lease before it ends', async () => {
    const env = {
      LEDGER_KEYSTORE: join(dir, 'ks.json'),
      LEDGER_KEYSTORE_PASSPHRASE: 'pw',
      LEDGER_NODE_URL: node.url,
    };
    const minter = await Wallet.open(client, hexToBytes(node.keys.minter.seed_hex));
    await minter.mint(10_000_000n);
    await minter.send(alice.address, 10_000_000n, 'XUSD');
    expect((await runCli(['receive'], { env })).code).toBe(0);
    const req = await runCli(['lease', 'request', '--duration', '60', '--json'], { env });
    expect(req.code, req.stderr).toBe(0);
    const lease = (JSON.parse(req.stdout) as { lease_hash: string }).lease_hash;
    await waitFor(
      async () => (await client.get<{ state: string }>(`/leases/${lease}`)).state === 'accepted',
      60_000,
      'accept',
    );
    const r = await example('hold-lease.ts', [lease], {
      LEDGER_SEED: hex(alice),
      SEGMENT_SECS: '10',
      // The offer route holds requests to 60 s at least whatever the genesis says; the renewal's
      // segment follows the genesis (5 s): renew at once, by 10 s.
      RENEW_BEFORE_SECS: '60',
      MAX_RENEWALS: '1',
    }).done(60_000);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^holding lease ${lease} in segments of 10 s\\nrenewed by 10 s for [0-9.]+ XUSD in block [0-9a-f]{64}; now ends \\S+Z\\n$`,
      ),
    );
    expect((await client.get<{ duration: number }>(`/leases/${lease}`)).duration).toBe(70);
  }, 120_000);
});
