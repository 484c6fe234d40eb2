import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import {
  Account,
  finalFlags,
  http,
  type Kit,
  kitOf,
  nowNs,
  sealed,
  waitFinal,
  XE,
  openConflicts,
} from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Finality (reference-behavior.md section 2): on a development network the node's representative
 * holds all the weight and finalizes every block; a receive waits for its source. Moving most of the
 * weight to a representative that never votes stalls finality until the weight comes back.
 */
describe('finality', () => {
  let t: TestNode;
  let kit: Kit;
  let treasury: Account;

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('finalizes every block: chain flags, GET /blocks/{hash}, readiness', async () => {
    const a = new Account(kit);
    const b = new Account(kit);
    await a.claim(20n * XE);
    const send = await a.send(b.address, 5n * XE);
    const recv = await b.receive(send);
    await waitFinal(kit, a.address);
    await waitFinal(kit, b.address);
    expect(await finalFlags(kit, a.address)).toEqual([true, true]);
    const got = await http(kit.url, 'GET', `/blocks/${recv.hash}`);
    expect(got.body).toMatchObject({ hash: recv.hash, type: 'receive', finalized: true });
    const ready = await http(kit.url, 'GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, unfinalized_positions: 0 });
  });

  it('stalls without quorum, keeps a receive behind its source, and recovers when the weight returns', async () => {
    const node = (await http(kit.url, 'GET', '/node')).body as { address: string };
    const silentRep = new Account(kit).address; // a representative that never votes
    const x = new Account(kit);
    const y = new Account(kit);

    // 30M XE of 42M end up delegated to the silent representative: the node keeps 12M (29%).
    const big = await treasury.send(x.address, 30_000_000n * XE);
    await waitFinal(kit, treasury.address);
    const xOpen = await x.commit(
      x.build({
        type: 'receive',
        asset: 'XE',
        source: big.hash!,
        balance: 30_000_000n * XE,
        representative: silentRep,
      }),
    );
    const delegation = (await http(kit.url, 'GET', '/delegation')).body as {
      weights: Record<string, string>;
    };
    expect(delegation.weights).toEqual({ [node.address]: '12000000000000', [silentRep]: '30000000000000' });

    const toY = await treasury.send(y.address, XE);
    const yOpen = await y.receive(toY);
    await new Promise((r) => setTimeout(r, 300));
    expect(await finalFlags(kit, x.address)).toEqual([false]);
    expect((await finalFlags(kit, treasury.address)).at(-1)).toBe(false);
    expect(await finalFlags(kit, y.address)).toEqual([false]);
    const stalled = await http(kit.url, 'GET', '/ready');
    expect(stalled.status).toBe(503);
    expect((stalled.body as { checks: { name: string; ok: boolean }[] }).checks).toContainEqual(
      expect.objectContaining({ name: 'quorum_reachable', ok: false }),
    );

    // A second block at y's unfinalized position is staged as a conflict (decisions D8: 202). Its
    // hash is made higher than the receive's, so the receive wins the conflict (the lowest hash is
    // every representative's preference) and the test can watch it wait for its source.
    let sibling: Block;
    for (let k = 0n; ; k++) {
      sibling = sealed(
        {
          account: y.address,
          previous: ZERO_HASH,
          timestamp: nowNs() + k,
          type: 'claim',
          asset: 'XE',
          amount: XE,
          balance: XE,
        },
        y.seed,
        kit,
      );
      if (sibling.hash! > yOpen.hash!) break;
    }
    const staged = await http(kit.url, 'POST', '/blocks/claim', blockToJson(sibling));
    expect(staged.status).toBe(202);
    expect(staged.body).toEqual({ status: 'conflict', hash: sibling.hash });
    const open = await http(kit.url, 'GET', `/conflicts/${y.address}`);
    expect(open.status).toBe(200);
    const candidates = (open.body as { blocks: { hash: string }[] }[])[0]!.blocks.map((b) => b.hash).sort();
    expect(candidates).toEqual([yOpen.hash, sibling.hash].sort());

    // x delegates back to the node: quorum returns, and every stalled block finalizes, the receive
    // never before its source.
    await x.commit(
      x.build({
        type: 'send',
        asset: 'XE',
        destination: treasury.address,
        amount: 1n,
        balance: x.bal() - 1n,
        representative: node.address,
      }),
    );
    const end = Date.now() + 5000;
    for (;;) {
      const [yFinal, tFlags] = [await finalFlags(kit, y.address), await finalFlags(kit, treasury.address)];
      if (yFinal[0]) expect(tFlags.every(Boolean)).toBe(true);
      if (yFinal[0] && tFlags.every(Boolean)) break;
      if (Date.now() > end)
        throw new Error(`stalled blocks never finalized: y ${yFinal}, treasury ${tFlags}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitFinal(kit, x.address);
    expect((await http(kit.url, 'GET', `/blocks/${xOpen.hash}`)).body).toMatchObject({ finalized: true });
    expect((await http(kit.url, 'GET', '/ready')).status).toBe(200);
    // y's receive (the lower hash) won its position by finalizing: the staged sibling is gone.
    expect(await openConflicts(kit, y.address)).toEqual([]);
    expect((await http(kit.url, 'GET', `/conflicts/${y.address}`)).body).toMatchObject([
      { status: 'resolved', winner: yOpen.hash },
    ]);
    expect((await http(kit.url, 'GET', `/blocks/${sibling.hash}`)).status).toBe(404);
    expect((await http(kit.url, 'GET', `/blocks/${yOpen.hash}`)).body).toMatchObject({ finalized: true });
  });
});
