import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevnet, writeGenesisDir } from '../../node-core/genesis/genesis.ts';
import { NodeStartError } from '../../node-core/node.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { signStateBlock, type StateBlock } from '../../node-core/protocol/statechain.ts';
import { Account, finalFlags, http, type Kit, kitOf, nowNs, waitFinal, XE } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, tempDir, TEST_DIFFICULTY, type TestNode } from '../helpers/node.ts';

/**
 * Persistence and genesis (reference-behavior.md L-14, section 8.3): a restarted node serves the
 * same ledger and state chain; a data directory never changes network; --genesis-dir joins one.
 */
describe('restart and genesis', () => {
  const dataDir = tempDir();
  let t: TestNode;
  let kit: Kit;
  let a: Account;
  let b: Account;
  let pendingToB: string;

  /** Everything a restart must preserve, as the API shows it. */
  async function state(url: string) {
    const get = async (path: string) => (await http(url, 'GET', path)).body;
    const node = (await get('/node')) as Record<string, unknown>;
    return {
      node: {
        network_id: node.network_id,
        genesis_hash: node.genesis_hash,
        address: node.address,
        accounts: node.accounts,
        block_count: node.block_count,
        total_delegated_weight: node.total_delegated_weight,
        statechain_height: node.statechain_height,
      },
      accounts: await get('/accounts?limit=1000'),
      pending: await get('/pending?limit=1000'),
      frontiers: await get('/frontiers?limit=1000'),
      chainOfA: await get(`/accounts/${a.address}/chain`),
      tip: await get('/statechain/tip'),
      kv: await get('/statechain/kv?limit=1000'),
      delegation: await get('/delegation'),
    };
  }

  beforeAll(async () => {
    t = await startTestNode({ dataDir });
    kit = await kitOf(t);
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    a = new Account(kit);
    b = new Account(kit);
    await a.claim(100n * XE);
    await a.receive(await treasury.send(a.address, 1000n * XE));
    pendingToB = (await a.send(b.address, 30n * XE)).hash!;
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.commit(minter.build({ type: 'mint', asset: 'XUSD', amount: 77n * XE, balance: 77n * XE }));
    // A state-chain block, through the library (its HTTP route is tested in statechain.test.ts).
    const tip = t.node.statechain.tip!;
    let sb: StateBlock = {
      index: tip.index + 1n,
      prev_hash: tip.hash,
      ops: [{ type: 'set', key: 'app/restart-check', value: '{"kept":  true}' }],
      signatures: [],
      timestamp: nowNs(),
    };
    sb = signStateBlock(signStateBlock(sb, seedOf(t.keys.dao[0]!.seed_hex)), seedOf(t.keys.dao[2]!.seed_hex));
    await t.node.statechain.submit(sb);
    for (const acct of [a.address, treasury.address, minter.address]) await waitFinal(kit, acct);
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps accounts, balances, pending sends, finality and the state chain across a restart', async () => {
    const before = await state(kit.url);
    expect((before.pending as unknown[]).length).toBe(1);
    // The value reads back as the stored JSON value (issue #14), its text kept byte for byte.
    expect(
      (before.kv as { key: string; value: unknown }[]).find((e) => e.key === 'app/restart-check')?.value,
    ).toEqual({ kept: true });
    expect((await http(kit.url, 'GET', '/statechain/kv/app/restart-check')).text).toBe(
      '{"key":"app/restart-check","value":{"kept":  true}}',
    );
    await t.stop({ keepData: true });
    t = await startTestNode({ dataDir });
    kit = await kitOf(t);
    expect(await state(kit.url)).toEqual(before);
    expect(await finalFlags(kit, a.address)).toEqual([true, true, true]);
    expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '1070000000' });
    expect((await http(kit.url, 'GET', `/pending/${b.address}`)).body).toMatchObject([
      { hash: pendingToB, amount: '30000000' },
    ]);
    expect(((await http(kit.url, 'GET', '/supply')).body as { conserved: boolean }).conserved).toBe(true);

    // The ledger carries on from where it stopped.
    const a2 = new Account(kit, a.seed);
    const b2 = new Account(kit, b.seed);
    await a2.sync();
    await b2.commit(b2.receiveBlock(pendingToB, 30n * XE));
    await a2.send(b2.address, XE);
    await waitFinal(kit, b2.address);
    expect((await http(kit.url, 'GET', '/node')).body).toMatchObject({
      block_count: (before.node.block_count as number) + 2,
    });
  });

  it('L-14: refuses a genesis dir of another network on this data dir, naming both networks', async () => {
    const before = await state(kit.url);
    await t.stop({ keepData: true });
    const otherDir = tempDir();
    const other = createDevnet({ nodeKey: generateKeyPair(), powDifficulty: TEST_DIFFICULTY });
    writeGenesisDir(otherDir, other.bundle);
    try {
      const err = await startTestNode({ dataDir, genesisDir: otherDir }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(NodeStartError);
      const msg = (err as Error).message;
      expect(msg).toContain(`belongs to network ${t.keys.network_id}`);
      expect(msg).toContain(`(network ${other.bundle.networkId}`);
      expect(msg).toContain('use another --data-dir');
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
    // Its own genesis dir is fine, and the refused start left the data untouched.
    t = await startTestNode({ dataDir, genesisDir: join(dataDir, 'genesis') });
    kit = await kitOf(t);
    expect(await state(kit.url)).toEqual(before);
  });

  it('--genesis-dir joins the same network from another data dir', async () => {
    const joined = await startTestNode({ genesisDir: join(dataDir, 'genesis') });
    try {
      const mine = (await http(kit.url, 'GET', '/node')).body as Record<string, unknown>;
      const theirs = (await http(joined.node.url, 'GET', '/node')).body as Record<string, unknown>;
      expect(theirs.network_id).toBe(mine.network_id);
      expect(theirs.genesis_hash).toBe(mine.genesis_hash);
      expect(theirs.pow_difficulty).toBe(mine.pow_difficulty);
      expect(theirs.address).not.toBe(mine.address); // its own node key
      expect(joined.keys).toBeUndefined(); // no devnet keys: it did not create the network
      const genesisOf = async (url: string) =>
        ((await http(url, 'GET', '/statechain/blocks/0')).body as { hash: string }).hash;
      expect(await genesisOf(joined.node.url)).toBe(await genesisOf(kit.url));
      const accounts = (await http(joined.node.url, 'GET', '/accounts')).body as {
        address: string;
        balances: unknown;
      }[];
      expect(accounts).toEqual([
        expect.objectContaining({ address: t.keys.treasury.address, balances: { XE: '42000000000000' } }),
      ]);
    } finally {
      await joined.stop();
    }
  });
});
