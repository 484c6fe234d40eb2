import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, waitFor } from '../helpers/node.ts';
import { type CliNode, runCli, startCliNode } from './cli-wallet-kit.ts';

/**
 * `ledger-node lease ...` and `chat ...` end to end: real processes against a real node that is its
 * own provider (the sandbox VM driver: a real SSH server in namespaces, no VM boundary, ready in a
 * fraction of a second), so a lease is offered, accepted and reached over SSH through the tunnel.
 */
let node: CliNode;
let env: NodeJS.ProcessEnv;
let ksDir: string | undefined;
const cli = (args: string[], extra: NodeJS.ProcessEnv = {}, timeoutMs?: number) =>
  runCli(args, { env: { ...env, ...extra }, ...(timeoutMs ? { timeoutMs } : {}) });
const json = <T>(s: string): T => JSON.parse(s) as T;
let accounts: { label: string; address: string; pub_key: string }[];

beforeAll(async () => {
  node = await startCliNode(['--vm-driver', 'sandbox', '--provide']);
  env = {
    LEDGER_NODE_URL: node.url,
    LEDGER_KEYSTORE: join((ksDir = tempDir('cli-lease-')), 'keystore.json'),
    LEDGER_KEYSTORE_PASSPHRASE: 'pw',
  };
  for (const label of ['alice', 'bob']) expect((await cli(['keys', 'new', '--label', label])).code).toBe(0);
  const m = await runCli(['keys', 'import', '--seed', '-', '--label', 'minter'], {
    env,
    input: `${node.keys.minter.seed_hex}\n`,
  });
  expect(m.code).toBe(0);
  accounts = json((await cli(['keys', 'list', '--json'])).stdout);
  expect((await cli(['mint', '20', '--account', 'minter'])).code).toBe(0);
  expect(
    (await cli(['send', accounts[0]!.address, '20', '--asset', 'XUSD', '--account', 'minter'])).code,
  ).toBe(0);
  expect((await cli(['receive', '--account', 'alice'])).code).toBe(0);
}, 120_000);
afterAll(async () => {
  await node?.stop();
  if (ksDir) rmSync(ksDir, { recursive: true, force: true });
});

describe('ledger-node lease', { timeout: 120_000 }, () => {
  let lease: string;

  it('request takes an offer with a lease block and keeps the access key; list shows it', async () => {
    const r = await cli(['lease', 'request', '--duration', '120', '--memory', '256', '--json']);
    expect(r.stderr).toMatch(/proof of work for the lease: done/);
    expect(r.code).toBe(0);
    const out = json<{ lease_hash: string; cost: string; access_pub_key: string }>(r.stdout);
    expect(out.lease_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(BigInt(out.cost)).toBeGreaterThan(0n);
    lease = out.lease_hash;
    const list = json<{ lease_hash: string; state: string; memory_mb: string }[]>(
      (await cli(['lease', 'list', '--json'])).stdout,
    );
    expect(list.map((l) => l.lease_hash)).toContain(lease);
    expect(list.find((l) => l.lease_hash === lease)?.memory_mb).toBe('256');
  });

  it('ssh runs a command in the VM through the tunnel once the provider accepted', async () => {
    await waitFor(
      async () => {
        const l = json<{ lease_hash: string; state: string }[]>(
          (await cli(['lease', 'list', '--state', 'accepted', '--json'])).stdout,
        );
        return l.some((x) => x.lease_hash === lease);
      },
      60_000,
      'the provider to accept the lease',
    );
    const r = await cli(['lease', 'ssh', lease, '--', 'echo', 'hello-from-the-vm'], {}, 60_000);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('hello-from-the-vm\n');
  }, 90_000);

  it("renew extends the accepted lease; cancel of an accepted lease is the node's refusal, exit 1", async () => {
    const r = await cli(['lease', 'renew', lease, '--duration', '60', '--json']);
    expect(r.code).toBe(0);
    expect(json<{ duration: string }>(r.stdout).duration).toBe('60');
    const list = json<{ lease_hash: string; duration: string }[]>(
      (await cli(['lease', 'list', '--json'])).stdout,
    );
    expect(list.find((l) => l.lease_hash === lease)?.duration).toBe('180');
    const c = await cli(['lease', 'cancel', lease]);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/ledger-node lease cancel: the node refused: .*cannot cancel.* \(HTTP 400\)\n$/);
  });

  it('names an unknown lease, a lease of another account and an empty purse', async () => {
    const unknown = await cli(['lease', 'cancel', 'cd'.repeat(32)]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`ledger-node lease cancel: the node knows no lease ${'cd'.repeat(32)}\n`);
    const notMine = await cli(['lease', 'renew', lease, '--duration', '60', '--account', 'bob']);
    expect(notMine.code).toBe(1);
    expect(notMine.stderr).toContain('not to "bob"');
    const poor = await cli(['lease', 'request', '--duration', '60', '--account', 'bob']);
    expect(poor.code).toBe(1);
    expect(poor.stderr).toMatch(/insufficient funds: "bob" holds 0 XUSD, the lease costs [0-9.]+ XUSD/);
  });
});

describe('ledger-node chat', { timeout: 120_000 }, () => {
  it('send reaches a registered account; read and follow show it', async () => {
    const bob = accounts[1]!;
    // bob registers by reading (nothing yet), then follows in the background.
    expect((await cli(['chat', 'read', '--account', 'bob'])).stdout).toBe('No messages for "bob".\n');
    const following = cli(
      ['chat', 'follow', '--account', 'bob', '--new', '--count', '1', '--timeout', '30', '--json'],
      {},
      40_000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const s = await cli(['chat', 'send', bob.pub_key, 'hello bob', '--json']);
    expect(s.code).toBe(0);
    expect(json<{ delivery: string; to: string }>(s.stdout)).toMatchObject({
      delivery: 'local',
      to: bob.pub_key,
    });
    const f = await following;
    expect(f.code).toBe(0);
    const got = json<{ from: string; message: string; timestamp: string }>(f.stdout.trim());
    expect(got).toMatchObject({ from: accounts[0]!.pub_key, message: 'hello bob' });
    expect(got.timestamp).toMatch(/^[0-9]{19}$/);
    const r = await cli(['chat', 'read', '--account', 'bob', '--json']);
    const read = json<{ total: number; messages: { message: string }[] }>(r.stdout);
    expect(read.total).toBe(1);
    expect(read.messages[0]!.message).toBe('hello bob');
  }, 60_000);

  it('a recipient registered with no node is said plainly', async () => {
    const r = await cli(['chat', 'send', 'ef'.repeat(32), 'anyone?']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not registered with any node');
  });
});
