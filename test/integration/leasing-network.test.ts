import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import {
  acceptBlock,
  certify,
  leaseBlock,
  MINUTE_NS,
  settleBlock,
  SHORT_WINDOWS,
  SMALL_COST,
  SMALL_EMISSION,
} from '../helpers/lease-kit.ts';
import { Account, freshSupply, http, type Kit, kitOf, submit, XE, nowNs } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { listenAddr, P2P, peerCount } from '../helpers/p2p.ts';

/**
 * A whole lease across three real nodes on loopback (issue #11): the lease goes to one node, the
 * accept to another, the settle to the third, one node restarts in the middle, and at every step
 * all three agree on the lease record, the balances, the block's finality and the supply.
 */

describe('leasing on three nodes', () => {
  let nodes: TestNode[];
  let kits: Kit[];

  const startJoined = async (genesisDir: string, dial: string[], opts = {}) =>
    startTestNode({ ...P2P, genesisDir, dial, ...opts });

  beforeAll(async () => {
    const a = await startTestNode({ ...P2P, genesisSet: SHORT_WINDOWS });
    const genesisDir = join(a.dataDir, 'genesis');
    const dial = [await listenAddr(a)];
    nodes = [a, await startJoined(genesisDir, dial), await startJoined(genesisDir, dial)];
    await waitFor(async () => (await peerCount(a)) === 2, 15_000, 'peers');
    kits = await Promise.all(nodes.map(kitOf));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((t) => t?.stop()));
  });

  /** Waits until every node answers `path` with the same JSON, and returns it. */
  async function agreed(path: string, ready: (body: JsonValue) => boolean = () => true): Promise<JsonValue> {
    let last: string[] = [];
    await waitFor(
      async () => {
        const answers = await Promise.all(kits.map((k) => http(k.url, 'GET', path)));
        last = answers.map((r) => `${r.status} ${r.text}`);
        return answers.every((r) => r.status === 200 && r.text === answers[0]!.text && ready(r.body!));
      },
      20_000,
      `agreement on ${path}`,
    ).catch((e: Error) => {
      throw new Error(`${e.message}: ${last.join(' | ')}`);
    });
    return (await http(kits[0]!.url, 'GET', path)).body!;
  }

  /** The supply terms and conservation, as every node reports them (the timing fields differ). */
  async function supplyEverywhere(): Promise<void> {
    const views = await Promise.all(
      kits.map(async (k) => {
        const s = await freshSupply(k); // past the 2-second cache
        return { assets: s.assets, conserved: s.conserved, blocks: s.blocks };
      }),
    );
    for (const v of views) expect(v).toEqual(views[0]);
    expect(views[0]!.conserved).toBe(true);
  }

  const final = (hash: string) => agreed(`/blocks/${hash}`, (b) => (b as { finalized: boolean }).finalized);

  it('lease on one node, accept on another, a restart, settle on the third: all agree at every step', async () => {
    const [a] = nodes as [TestNode, TestNode, TestNode];
    const [ka, kb, kc] = kits as [Kit, Kit, Kit];
    const minter = new Account(ka, seedOf(a.keys.minter.seed_hex));
    await minter.sync();
    const c = new Account(ka);
    await c.claim(XE);
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: 10n * XE, balance: minter.bal('XUSD') + 10n * XE }),
    );
    await c.receive(await minter.send(c.address, 10n * XE, 'XUSD'));
    const p = new Account(kb);
    await p.claim(XE);
    await final(c.frontier);
    await final(p.frontier);
    // Certificates travel on their own (tested apart); each node holds the provider's here.
    const cert = await certify(a, ka, p);
    for (const t of nodes.slice(1)) await t.node.certificates.add(cert);

    const send = async (k: Kit, who: Account, block: Block) => {
      const r = await submit(k, block);
      expect(r.status, r.text).toBe(201);
      who.advance(block);
      await final(block.hash!);
    };

    const l = leaseBlock(c, p, cert);
    await send(ka, c, l);
    expect(await agreed(`/leases/${l.hash}`)).toMatchObject({ state: 'created', cost: String(SMALL_COST) });
    await agreed(`/pending/${p.address}`, (b) => (b as unknown[]).length === 1);
    await supplyEverywhere();

    const start = nowNs() - 5n * MINUTE_NS;
    await send(kb, p, acceptBlock(a, p, l, start));
    expect(await agreed(`/leases/${l.hash}`)).toMatchObject({ state: 'accepted', start_time: start });

    // The third node restarts (same data, port and peers) and is still in agreement after.
    const restartAt = Number(new URL(kc.url).port);
    const cDir = nodes[2]!.dataDir;
    await nodes[2]!.stop({ keepData: true });
    nodes[2] = await startTestNode({
      ...P2P,
      dataDir: cDir,
      apiPort: restartAt,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
    });
    await waitFor(() =>
      http(kc.url, 'GET', '/health').then(
        (r) => r.status === 200,
        () => false,
      ),
    );
    expect(await agreed(`/leases/${l.hash}`)).toMatchObject({ state: 'accepted' });

    const expiry = start + MINUTE_NS;
    await send(kc, p, settleBlock(a, p, l, expiry + 1n));
    expect(await agreed(`/leases/${l.hash}`)).toMatchObject({ state: 'settled', settled: true });
    expect(await agreed(`/accounts/${p.address}/balance`)).toEqual({ XE: String(XE + SMALL_EMISSION) });
    expect(await agreed(`/accounts/${c.address}/balance`)).toEqual({
      XE: String(XE),
      XUSD: String(10n * XE - SMALL_COST),
    });
    await agreed(`/pending/${p.address}`, (b) => (b as unknown[]).length === 0);
    await supplyEverywhere();
  }, 90_000);
});
