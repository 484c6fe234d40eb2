import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multisigAddress } from '../../node-core/protocol/keys.ts';
import { tempDir } from '../helpers/node.ts';
import { type CliNode, runCli, startCliNode } from './cli-wallet-kit.ts';

/**
 * `ledger-node multisig ...` and `statechain ...` end to end (real processes, a real node): a block
 * prepared by one signer and co-signed from the file by the next, submitted once the threshold is
 * reached; what a member-less signer, a changed file and an empty purse get.
 */
let node: CliNode;
let env: NodeJS.ProcessEnv;
let dir: string;
const cli = (args: string[], input?: string) =>
  runCli(args, { env, ...(input !== undefined ? { input } : {}) });
const json = <T>(s: string): T => JSON.parse(s) as T;
let alice: { address: string; pub_key: string };
let bob: { address: string; pub_key: string };
let ms: string;

beforeAll(async () => {
  node = await startCliNode();
  dir = tempDir('cli-ms-');
  env = {
    LEDGER_NODE_URL: node.url,
    LEDGER_KEYSTORE: join(dir, 'ks.json'),
    LEDGER_KEYSTORE_PASSPHRASE: 'pw',
  };
  for (const l of ['alice', 'bob']) expect((await cli(['keys', 'new', '--label', l])).code).toBe(0);
  for (const [i, k] of node.keys.dao.slice(0, 2).entries())
    expect(
      (await cli(['keys', 'import', '--seed', '-', '--label', `dao-${i}`], `${k.seed_hex}\n`)).code,
    ).toBe(0);
  const list = json<{ address: string; pub_key: string }[]>((await cli(['keys', 'list', '--json'])).stdout);
  [alice, bob] = [list[0]!, list[1]!];
  ms = multisigAddress({ keys: [alice.pub_key, bob.pub_key], threshold: 2 });
  expect((await cli(['claim', '100'])).code).toBe(0);
}, 120_000);
afterAll(async () => {
  await node?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('ledger-node multisig', { timeout: 120_000 }, () => {
  it('open: prepared by one member, submitted by the co-signature that reaches the threshold', async () => {
    const f = join(dir, 'open.json');
    const r = await cli([
      'multisig',
      'open',
      '--keys',
      `${alice.pub_key},${bob.pub_key}`,
      '--threshold',
      '2',
      '--out',
      f,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `Signed multisig_open of ${ms}: 1 of 2 signatures\n  next signer: ledger-node multisig cosign ${f}\n`,
    );
    const c = await cli(['multisig', 'cosign', f, '--account', 'bob', '--json']);
    expect(c.code).toBe(0);
    expect(json(c.stdout)).toMatchObject({
      submitted: true,
      type: 'multisig_open',
      account: ms,
      signatures: 2,
    });
    const ks = await (await fetch(`${node.url}/accounts/${ms}/keyset`)).json();
    expect(ks).toEqual({ keys: [alice.pub_key, bob.pub_key].sort(), threshold: 2 });
  });

  it('receive and send of the multisig account, each co-signed from its file', async () => {
    expect((await cli(['send', ms, '10'])).code).toBe(0);
    const rf = join(dir, 'receive.json');
    expect((await cli(['multisig', 'receive', ms, '--out', rf])).code).toBe(0);
    expect((await cli(['multisig', 'cosign', rf, '--account', 'bob'])).code).toBe(0);
    const sf = join(dir, 'send.json');
    expect(
      (await cli(['multisig', 'send', ms, alice.address, '4', '--out', sf, '--account', 'bob'])).code,
    ).toBe(0);
    const done = await cli(['multisig', 'cosign', sf, '--account', 'alice']);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/^Submitted send of [0-9a-f]{64} with 2 of 2 signatures\n/);
    expect(json((await cli(['balance', ms, '--json'])).stdout)).toMatchObject({
      balances: { XE: '6000000' },
    });
  });

  it('refuses a non-member, a changed file and a send beyond the balance', async () => {
    const f = join(dir, 'send2.json');
    expect((await cli(['multisig', 'send', ms, alice.address, '1', '--out', f])).code).toBe(0);
    const outsider = await cli(['multisig', 'cosign', f, '--account', 'dao-0']);
    expect(outsider.code).toBe(2);
    expect(outsider.stderr).toContain(`"dao-0" is not a member of ${ms}`);
    const changed = JSON.parse(readFileSync(f, 'utf8')) as { block: { amount: string } };
    changed.block.amount = '2000000';
    writeFileSync(f, JSON.stringify(changed));
    const tampered = await cli(['multisig', 'cosign', f, '--account', 'bob']);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain('does not match its hash');
    const poor = await cli(['multisig', 'send', ms, alice.address, '7']);
    expect(poor.code).toBe(1);
    expect(poor.stderr).toBe(
      `ledger-node multisig send: insufficient funds: ${ms} holds 6 XE, the send needs 7 XE\n`,
    );
  });

  it('update replaces the keyset, signed by the current threshold', async () => {
    const f = join(dir, 'update.json');
    expect(
      (
        await cli([
          'multisig',
          'update',
          ms,
          '--keys',
          `${alice.pub_key},${bob.pub_key}`,
          '--threshold',
          '1',
          '--out',
          f,
        ])
      ).code,
    ).toBe(0);
    expect((await cli(['multisig', 'cosign', f, '--account', 'bob'])).code).toBe(0);
    expect(await (await fetch(`${node.url}/accounts/${ms}/keyset`)).json()).toMatchObject({ threshold: 1 });
  });
});

describe('ledger-node statechain', { timeout: 120_000 }, () => {
  it('propose by one DAO key, cosign by another: the value is written byte for byte', async () => {
    const f = join(dir, 'sc.json');
    const p = await cli([
      'statechain',
      'propose',
      '--set',
      'app/motd="hi"',
      '--set',
      'app/big=12345678901234567890',
      '--out',
      f,
      '--account',
      'dao-0',
    ]);
    expect(p.code).toBe(0);
    expect(p.stdout).toMatch(/^Signed state block \d+: 1 of 2 signatures\n/);
    const c = await cli(['statechain', 'cosign', f, '--account', 'dao-1', '--json']);
    expect(c.code).toBe(0);
    expect(json(c.stdout)).toMatchObject({ submitted: true });
    expect((await cli(['statechain', 'get', 'app/big'])).stdout).toBe('app/big = 12345678901234567890\n');
    expect(await (await fetch(`${node.url}/statechain/kv/app/motd`)).text()).toContain('"hi"');
  });

  it('refuses a proposal from a non-DAO account and names a missing key', async () => {
    const p = await cli(['statechain', 'propose', '--set', 'app/x=1', '--account', 'alice']);
    expect(p.code).toBe(2);
    expect(p.stderr).toContain('"alice" is not a DAO key of this network');
    const g = await cli(['statechain', 'get', 'app/none']);
    expect(g.code).toBe(1);
    expect(g.stderr).toMatch(/^ledger-node statechain get: the node refused: .* \(HTTP 404\)\n$/);
  });
});
