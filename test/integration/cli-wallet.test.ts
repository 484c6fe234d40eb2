import { existsSync, readFileSync, statSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from '../../node-core/client/keystore-file.ts';
import { tempDir } from '../helpers/node.ts';
import { type CliNode, runCli, startCliNode } from './cli-wallet-kit.ts';

/**
 * The wallet subcommands end to end: `ledger-node` run as a real process against a real node (also
 * a real process), each with its happy path and the error a user meets most: wrong passphrase,
 * unknown account, insufficient funds, node not running.
 */
let node: CliNode;
let dir: string;
let env: NodeJS.ProcessEnv;
const other = 'ab'.repeat(32);

beforeAll(async () => {
  node = await startCliNode();
  dir = tempDir('cli-wallet-ks-');
  env = {
    LEDGER_NODE_URL: node.url,
    LEDGER_KEYSTORE: join(dir, 'keystore.json'),
    LEDGER_KEYSTORE_PASSPHRASE: 'correct horse',
  };
}, 90_000);
afterAll(async () => {
  await node?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], extra: NodeJS.ProcessEnv = {}, input?: string) =>
  runCli(args, { env: { ...env, ...extra }, ...(input !== undefined ? { input } : {}) });
/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
const json = <T>(s: string): T => JSON.parse(s) as T;

describe('ledger-node wallet commands against a real node', { timeout: 120_000 }, () => {
  let first: { address: string; phrase: string };

  it('keys new makes an encrypted keystore (the window export format, 0600) and shows the phrase once', async () => {
    const r = await cli(['keys', 'new', '--label', 'main', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = json<{ address: string; phrase: string; label: string; index: number }>(r.stdout);
    expect(out.label).toBe('main');
    expect(out.index).toBe(0);
    expect(out.address).toMatch(/^[0-9a-f]{64}$/);
    expect(out.phrase.split(' ')).toHaveLength(24);
    first = out;
    const text = readFileSync(env.LEDGER_KEYSTORE!, 'utf8');
    expect(parse(text).type).toBe('ledger-node-keystore');
    expect(text).not.toContain(out.phrase.split(' ')[0]! + ' ');
    expect(statSync(env.LEDGER_KEYSTORE!).mode & 0o777).toBe(0o600);

    const second = await cli(['keys', 'new']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^Account "Account 2": [0-9a-f]{64}\n$/);
    expect(second.stdout).not.toContain('Recovery phrase');
  });

  it('keys import restores the same first account from the phrase (read from stdin), and adds a seed', async () => {
    const other = join(dir, 'restored.json');
    const r = await cli(
      ['keys', 'import', '--phrase', '-', '--keystore', other, '--json'],
      {},
      `${first.phrase}\n`,
    );
    expect(r.code).toBe(0);
    expect(json<{ address: string }>(r.stdout).address).toBe(first.address);

    const minter = node.keys.minter;
    const add = await cli(['keys', 'import', '--seed', '-', '--label', 'minter'], {}, `${minter.seed_hex}\n`);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain(minter.address);
    const again = await cli(['keys', 'import', '--seed', minter.seed_hex]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already in the keystore');
  });

  it('keys list shows every account; a wrong passphrase fails with exit 1 and says so', async () => {
    const r = await cli(['keys', 'list', '--json']);
    expect(r.code).toBe(0);
    const list = json<{ label: string; address: string; kind: string }[]>(r.stdout);
    expect(list.map((a) => a.label)).toEqual(['main', 'Account 2', 'minter']);
    expect(list[0]!.address).toBe(first.address);
    expect(list[2]!.kind).toBe('imported');

    const bad = await cli(['keys', 'list'], { LEDGER_KEYSTORE_PASSPHRASE: 'wrong horse' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^ledger-node keys list: Wrong password/);
    expect(bad.stdout).toBe('');
    const badJson = await cli(['balance', '--json'], { LEDGER_KEYSTORE_PASSPHRASE: 'wrong horse' });
    expect(badJson.code).toBe(1);
    expect(json<{ code: string }>(badJson.stdout).code).toBe('wrong_password');
  });

  it('claim shows a proof-of-work progress line; balance reads it back exactly', async () => {
    const r = await cli(['claim', '250.5']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Claimed 250\.5 XE for "main"\n {2}block [0-9a-f]{64}\n {2}balance 250\.5 XE\n$/,
    );
    expect(r.stderr).toMatch(/proof of work for the claim: solving/);
    expect(r.stderr).toMatch(/proof of work for the claim: done, \d+ tries/);
    const b = await cli(['balance', '--json']);
    expect(json(b.stdout)).toEqual({ address: first.address, balances: { XE: '250500000' }, pending: [] });
    const text = await cli(['balance', first.address]);
    expect(text.stdout).toBe(`Account ${first.address}\n  250.5 XE\n`);
  });

  it('send pays an address; insufficient funds fail before anything is submitted', async () => {
    const r = await cli(['send', other, '0.000001', '--memo', 'hi', '--json']);
    expect(r.code).toBe(0);
    const block = json<{ type: string; amount: string; balance: string; memo: string }>(r.stdout);
    expect(block).toMatchObject({ type: 'send', amount: '1', balance: '250499999', memo: 'hi' });

    const poor = await cli(['send', other, '1000000']);
    expect(poor.code).toBe(1);
    expect(poor.stderr).toBe(
      'ledger-node send: insufficient funds: "main" holds 250.499999 XE, the send needs 1000000 XE\n',
    );
    const after = await cli(['balance', '--json']);
    expect(json<{ balances: { XE: string } }>(after.stdout).balances.XE).toBe('250499999');
  });

  it('receive takes every pending send of the account; nothing pending is said plainly', async () => {
    const to2 = await cli(['keys', 'list', '--json']);
    const acct2 = json<{ address: string }[]>(to2.stdout)[1]!.address;
    await cli(['send', acct2, '3']);
    await cli(['send', acct2, '4']);
    const before = await cli(['balance', '--account', 'Account 2']);
    expect(before.stdout).toMatch(/ {2}2 to receive: (3 XE, 4 XE|4 XE, 3 XE) \('ledger-node receive'\)\n$/);
    const r = await cli(['receive', '--account', '#2', '--json']);
    expect(r.code).toBe(0);
    const out = json<{ received: { type: string; balance: string }[] }>(r.stdout);
    expect(out.received.map((b) => b.type)).toEqual(['receive', 'receive']);
    expect(out.received[1]!.balance).toBe('7000000');
    const none = await cli(['receive', '--account', '#2']);
    expect(none.stdout).toBe('Nothing to receive for "Account 2".\n');
  });

  it('history lists the blocks newest first, with --limit', async () => {
    const r = await cli(['history', '--json', '--limit', '2']);
    expect(r.code).toBe(0);
    const h = json<{ total: number; blocks: { type: string; amount: string }[] }>(r.stdout);
    expect(h.total).toBe(4);
    expect(h.blocks.map((b) => [b.type, b.amount])).toEqual([
      ['send', '4000000'],
      ['send', '3000000'],
    ]);
    const text = await cli(['history', 'main']);
    expect(text.stdout.split('\n')[0]).toBe(`Account ${first.address}: 4 blocks`);
    expect(text.stdout).toMatch(/ claim {4}\+250\.5 XE {2}balance 250\.5 XE {2}[0-9a-f]{12}\n$/);
  });

  it("burn takes XE out; mint works for the minter and is refused with the node's error for others", async () => {
    const burn = await cli(['burn', '1.5', '--json']);
    expect(burn.code).toBe(0);
    expect(json<{ type: string; amount: string }>(burn.stdout)).toMatchObject({
      type: 'burn',
      amount: '1500000',
    });
    const mint = await cli(['mint', '100', '--account', 'minter']);
    expect(mint.code).toBe(0);
    expect(mint.stdout).toMatch(/^Minted 100 XUSD\n/);
    const refused = await cli(['mint', '100', '--json']);
    expect(refused.code).toBe(1);
    const err = json<{ code: string; status: number; retryable: boolean; error: string }>(refused.stdout);
    expect(err).toMatchObject({ code: 'block_rejected', status: 400, retryable: false });
    expect(refused.stderr).toMatch(/\nledger-node mint: the node refused: .*not a minter.* \(HTTP 400\)\n$/);
  });

  it('an unknown account is named, with the ones the keystore has', async () => {
    const r = await cli(['balance', '--account', 'savings']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'ledger-node balance: no account "savings" in the keystore (it has: main, Account 2, minter)\n',
    );
    const missing = await cli(['balance'], { LEDGER_KEYSTORE: join(dir, 'none.json') });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no keystore at');
    expect(missing.stderr).toContain('ledger-node keys new');
  });

  it('a node that is not running is said plainly, with exit 1', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const r = await cli(['balance', other, '--node', down]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `ledger-node balance: cannot reach the node at ${down} (ECONNREFUSED): is it running? Start it with 'ledger-node', or pass --node URL\n`,
    );
    const j = await cli(['send', other, '1', '--node', down, '--json']);
    expect(j.code).toBe(1);
    expect(json<{ code: string }>(j.stdout).code).toBe('node_unreachable');
  });

  it('every command has --help with an example; a bad command line exits 2', async () => {
    for (const args of [
      ['keys', 'new'],
      ['keys', 'import'],
      ['keys', 'list'],
      ['balance'],
      ['history'],
      ['send'],
      ['receive'],
      ['claim'],
      ['burn'],
      ['mint'],
    ]) {
      const r = await cli([...args, '--help']);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: ledger-node ${args.join(' ')}`));
      expect(r.stdout).toMatch(/\nExample:\n {2}.*ledger-node /);
    }
    const group = await cli(['keys', '--help']);
    expect(group.stdout).toContain('keys import');
    const bad = await cli(['send', 'nowhere', '1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not an address');
    const unknown = await cli(['balance', '--bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown option --bogus');
    const top = await cli(['--help']);
    expect(top.stdout).toContain('Wallet commands');
    expect(existsSync(join(dir, 'keystore.json'))).toBe(true);
  });
});
