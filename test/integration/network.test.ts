import { join } from 'node:path';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { delegateTo, finalizedOn, listenAddr, P2P, peerCount, threeNodes, twoNodes } from '../helpers/p2p.ts';

/**
 * Several real nodes on loopback, each with its own LMDB and libp2p host, sharing one genesis:
 * blocks gossip to every node, the representative's votes travel with them, and every node
 * finalizes; a node on another network is refused.
 */
describe('three nodes on loopback', () => {
  let a: TestNode;
  let b: TestNode;
  let c: TestNode;

  beforeAll(async () => {
    [a, b, c] = await threeNodes();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
  });

  it('share one network and genesis, and list each other as peers', async () => {
    const [na, nb] = await Promise.all([a.client.node(), b.client.node()]);
    expect(nb.network_id).toBe(na.network_id);
    expect(nb.genesis_hash).toBe(na.genesis_hash);
    const peers = (
      await a.client.get<{ peers: { id: string; address: string; version: string; connected_at: bigint }[] }>(
        '/node',
      )
    ).peers;
    expect(peers.map((p) => p.id).sort()).toEqual([nb.id, (await c.client.node()).id].sort());
    for (const p of peers) {
      expect(p.address).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
      expect(typeof p.connected_at).toBe('bigint');
    }
  });

  it('peers that only dialled the same node find each other through peer exchange', async () => {
    const [nb, nc] = await Promise.all([b.client.node(), c.client.node()]);
    await waitFor(
      async () => (await peerCount(b)) === 2 && (await peerCount(c)) === 2,
      15_000,
      'peer exchange',
    );
    const bPeers = (await b.client.get<{ peers: { id: string }[] }>('/node')).peers.map((p) => p.id);
    expect(bPeers).toContain(nc.id);
    expect(bPeers).not.toContain(nb.id);
  });

  it('a block submitted to the representative node is finalized on all nodes', async () => {
    const alice = await a.wallet();
    const claim = await alice.claim(1_000_000_000n);
    for (const t of [a, b, c]) {
      await waitFor(() => finalizedOn(t, claim.hash!), 10_000, 'finality everywhere');
    }
    expect(await b.client.balances(alice.address)).toEqual({ XE: 1_000_000_000n });
  });

  it('a block submitted to another node reaches the representative and is finalized everywhere', async () => {
    const bob = await c.wallet();
    const claim = await bob.claim(5_000_000n);
    const send = await bob.send((await b.wallet()).address, 1_000_000n, 'XE', 'via gossip');
    for (const t of [a, b, c]) {
      await waitFor(() => finalizedOn(t, send.hash!), 10_000, 'finality everywhere');
      expect(await finalizedOn(t, claim.hash!)).toBe(true);
    }
    const onA = await a.client.block(send.hash!);
    expect(onA?.block.memo).toBe('via gossip');
  });

  it('refuses a node on another network and does not count it as a peer', async () => {
    const stranger = await startTestNode({ ...P2P, dial: [await listenAddr(a)] });
    try {
      await new Promise((r) => setTimeout(r, 2500));
      expect(await peerCount(stranger)).toBe(0);
      const ids = (await a.client.get<{ peers: { id: string }[] }>('/node')).peers.map((p) => p.id);
      expect(ids).not.toContain((await stranger.client.node()).id);
      expect(await peerCount(a)).toBe(2);
    } finally {
      await stranger.stop();
    }
  });
});

describe('catching up', () => {
  let a: TestNode;
  beforeAll(async () => {
    a = await startTestNode({ ...P2P });
  });
  afterAll(async () => {
    await a?.stop();
  });

  async function blockCount(t: TestNode): Promise<number> {
    return (await t.client.node()).block_count;
  }

  async function allFinal(t: TestNode): Promise<boolean> {
    const r = await t.client.get<{ unfinalized_positions: number }>('/ready').catch(() => undefined);
    return r?.unfinalized_positions === 0;
  }

  it('a node started after 1,000 blocks syncs them all and finalizes them', async () => {
    const wallets = await Promise.all(Array.from({ length: 10 }, () => a.wallet()));
    await Promise.all(
      wallets.map(async (w, i) => {
        await w.claim(1_000_000n);
        for (let k = 0; k < 99; k++) await w.send(wallets[(i + 1) % wallets.length]!.address, 1n);
      }),
    );
    expect(await blockCount(a)).toBe(1001);
    const late = await startTestNode({
      ...P2P,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
    });
    try {
      await waitFor(async () => (await blockCount(late)) === 1001, 60_000, 'sync of 1,000 blocks');
      await waitFor(() => allFinal(late), 30_000, 'finality of synced blocks');
      for (const w of wallets.slice(0, 3)) {
        expect(await late.client.balances(w.address)).toEqual(await a.client.balances(w.address));
      }
      const progress = (await late.client.get<{ sync: { blocks_left: number; rounds: number } }>('/node'))
        .sync;
      expect(progress.blocks_left).toBe(0);
      expect(progress.rounds).toBeGreaterThan(0);
    } finally {
      await late.stop();
    }
  }, 120_000);

  it('a node killed and restarted rejoins and catches up', async () => {
    const genesisDir = join(a.dataDir, 'genesis');
    const b = await startTestNode({ ...P2P, genesisDir, dial: [await listenAddr(a)] });
    await waitFor(async () => (await blockCount(b)) === (await blockCount(a)), 60_000, 'initial sync');
    await b.stop({ keepData: true });
    const w = await a.wallet();
    await w.claim(10_000n);
    for (let k = 0; k < 20; k++) await w.send(a.keys.treasury.address, 1n);
    const b2 = await startTestNode({ ...P2P, dataDir: b.dataDir, genesisDir, dial: [await listenAddr(a)] });
    try {
      await waitFor(
        async () => (await blockCount(b2)) === (await blockCount(a)),
        30_000,
        'catch-up after restart',
      );
      await waitFor(() => allFinal(b2), 30_000, 'finality after restart');
      expect(await b2.client.balances(w.address)).toEqual(await a.client.balances(w.address));
    } finally {
      await b2.stop();
    }
  }, 120_000);
});

describe('two representatives', () => {
  it('reach quorum together when neither holds 67% alone', async () => {
    const [a, b] = await twoNodes();
    try {
      // 20M of the 42M XE move to an account that delegates to B's representative: A keeps 52%.
      const bRep = await delegateTo(a, b, 20_000_000_000_000n);
      await waitFor(
        async () =>
          (await b.client.get<{ weights: Record<string, string> }>('/delegation')).weights[bRep] ===
          '20000000000000',
        10_000,
        'delegation on B',
      );
      const w = await a.wallet();
      const claim = await w.claim(1_000n);
      for (const t of [a, b])
        await waitFor(() => finalizedOn(t, claim.hash!), 15_000, 'finality with two representatives');
      // Neither alone holds the quorum: both votes were needed.
      const d = await a.client.get<{ weights: Record<string, string>; total_weight: string }>('/delegation');
      expect(Object.keys(d.weights).sort()).toEqual([(await a.client.node()).address, bRep].sort());
      expect(BigInt(d.weights[bRep]!) * 100n < BigInt(d.total_weight) * 67n).toBe(true);
      // Without B's votes, A's 52% is not a quorum: a new block stays unfinalized.
      await b.stop({ keepData: true });
      const lonely = await w.claim(1_000n);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await finalizedOn(a, lonely.hash!)).toBe(false);
      // After the 10 s fallback, more than half of the weight is enough (the finality wall, C-01).
      await waitFor(() => finalizedOn(a, lonely.hash!), 15_000, 'fallback finality');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);
});

describe('a double spend', () => {
  it('submitted to two nodes at once ends with one winner everywhere, the loser and what was built on it undone, supply conserved', async () => {
    const [a, b, c] = await threeNodes();
    try {
      const nodes = [a, b, c];
      const x = await a.wallet();
      const fund = await x.claim(10_000_000n);
      for (const t of nodes) await waitFor(() => finalizedOn(t, fund.hash!), 10_000, 'funding final');

      // Two sends of the whole balance on the same previous block, signed by the same key.
      const y = await a.wallet();
      const zSeed = globalThis.crypto.getRandomValues(new Uint8Array(32));
      const s1 = await x.prepare({
        type: 'send',
        asset: 'XE',
        destination: y.address,
        amount: 10_000_000n,
        balance: 0n,
      });
      const z = await c.wallet(zSeed);
      let built = false;
      const s2 = await x.prepare({
        type: 'send',
        asset: 'XE',
        destination: z.address,
        amount: 10_000_000n,
        balance: 0n,
      });
      const [r1, r2] = await Promise.all([
        a.client.request('POST', '/blocks/send', blockToJson(s1)),
        c.client.request('POST', '/blocks/send', blockToJson(s2)).then(async (r) => {
          // Build on the second send at once: a receive that must go if that send loses.
          built = await z
            .receive({
              hash: s2.hash!,
              from: x.address,
              amount: 10_000_000n,
              asset: 'XE',
              timestamp: s2.timestamp,
            })
            .then(
              () => true,
              () => false,
            );
          return r;
        }),
      ]);
      expect([201, 202]).toContain(r1.status);
      expect([201, 202, 400]).toContain(r2.status);

      // One winner, final on every node; the loser is gone everywhere.
      let winner = '';
      await waitFor(
        async () => {
          const frontiers = await Promise.all(
            nodes.map(async (t) => (await t.client.chain(x.address, 1, 1))?.blocks[0]),
          );
          if (!frontiers.every((f) => f?.finalized && f.block.hash === frontiers[0]!.block.hash))
            return false;
          winner = frontiers[0]!.block.hash!;
          return true;
        },
        20_000,
        'one final winner on every node',
      );
      const loser = winner === s1.hash ? s2.hash! : s1.hash!;
      // Which send wins depends on which one the representative saw first; when the first wins
      // after a receive was built on the second, that receive was undone with it (printed so a
      // run shows which case it exercised).
      console.log(
        `double spend: ${winner === s1.hash ? 'first' : 'second'} send won; receive built on the second: ${built}`,
      );
      for (const t of nodes) {
        expect(await t.client.block(loser)).toBeUndefined();
        const supply = await t.client.get<{ conserved: boolean }>('/supply');
        expect(supply.conserved).toBe(true);
        if (winner === s1.hash) {
          // The receive built on the losing send is undone too.
          expect(await t.client.balances(z.address)).toEqual({});
          expect((await t.client.pending(y.address)).map((p) => p.hash)).toEqual([s1.hash]);
        } else {
          expect((await t.client.pending(y.address)).length).toBe(0);
        }
        await waitFor(
          async () => (await t.client.get<{ conflicts_open: number }>('/ready')).conflicts_open === 0,
          10_000,
          'conflict closed',
        );
      }
    } finally {
      await Promise.all([a.stop(), b.stop(), c.stop()]);
    }
  }, 90_000);
});

describe('a fork made while a node was cut off', () => {
  it('is settled when it reconnects: the other send wins, the blocks built on its own send are undone', async () => {
    const a = await startTestNode({ ...P2P });
    const genesisDir = join(a.dataDir, 'genesis');
    const c0 = await startTestNode({ ...P2P, genesisDir, dial: [await listenAddr(a)] });
    try {
      const x = await a.wallet();
      const fund = await x.claim(10_000_000n);
      await waitFor(() => finalizedOn(c0, fund.hash!), 10_000, 'funding final on C');
      await c0.stop({ keepData: true });

      // While C is offline, the representative's node accepts (and finalizes) one send...
      const y = await a.wallet();
      const s1 = await x.prepare({
        type: 'send',
        asset: 'XE',
        destination: y.address,
        amount: 10_000_000n,
        balance: 0n,
      });
      expect((await a.client.request('POST', '/blocks/send', blockToJson(s1))).status).toBe(201);
      // ...and C, alone, accepts a competing send of the same funds and a receive built on it.
      const alone = await startTestNode({ ...P2P, dataDir: c0.dataDir, genesisDir });
      const z = await alone.wallet();
      const s2 = await x.prepare({
        type: 'send',
        asset: 'XE',
        destination: z.address,
        amount: 10_000_000n,
        balance: 0n,
      });
      expect((await alone.client.request('POST', '/blocks/send', blockToJson(s2))).status).toBe(201);
      await z.receive({
        hash: s2.hash!,
        from: x.address,
        amount: 10_000_000n,
        asset: 'XE',
        timestamp: s2.timestamp,
      });
      expect(await alone.client.balances(z.address)).toEqual({ XE: 10_000_000n });
      await alone.stop({ keepData: true });

      // Back online: the fork is found by sync, staged, and the representative's vote settles it.
      const c = await startTestNode({ ...P2P, dataDir: c0.dataDir, genesisDir, dial: [await listenAddr(a)] });
      try {
        await waitFor(
          async () => (await c.client.chain(x.address, 1, 1))?.blocks[0]?.block.hash === s1.hash,
          20_000,
          'swap to the winner',
        );
        await waitFor(() => finalizedOn(c, s1.hash!), 10_000, 'winner final');
        expect(await c.client.block(s2.hash!)).toBeUndefined();
        expect((await c.client.get<{ conserved: boolean }>('/supply')).conserved).toBe(true);
        expect((await c.client.pending(y.address)).map((p) => p.hash)).toEqual([s1.hash]);
        expect(await c.client.balances(x.address)).toEqual({});
        // The receive built on the losing send went with it: the account it opened is gone.
        expect(await c.client.balances(z.address)).toEqual({});
        expect(await c.client.chain(z.address)).toBeUndefined();
      } finally {
        await c.stop();
      }
    } finally {
      await a.stop();
    }
  }, 90_000);
});

describe('a double spend between two equal representatives', () => {
  it('is settled by both preferring the lowest hash, without waiting for the fallback', async () => {
    const [a, b] = await twoNodes();
    try {
      // Exactly half of the weight moves to B's representative: neither node can finalize alone.
      await delegateTo(a, b, 21_000_000_000_000n);
      const x = await a.wallet();
      const fund = await x.claim(10_000_000n);
      for (const t of [a, b]) await waitFor(() => finalizedOn(t, fund.hash!), 15_000, 'funding final');

      const s1 = await x.prepare({
        type: 'send',
        asset: 'XE',
        destination: (await a.wallet()).address,
        amount: 10_000_000n,
        balance: 0n,
      });
      const s2 = await x.prepare({
        type: 'send',
        asset: 'XE',
        destination: (await b.wallet()).address,
        amount: 10_000_000n,
        balance: 0n,
      });
      const started = Date.now();
      await Promise.all([
        a.client.request('POST', '/blocks/send', blockToJson(s1)),
        b.client.request('POST', '/blocks/send', blockToJson(s2)),
      ]);
      const lowest = [s1.hash!, s2.hash!].sort()[0]!;
      for (const t of [a, b]) {
        await waitFor(
          async () => (await t.client.chain(x.address, 1, 1))?.blocks[0]?.block.hash === lowest,
          9_000,
          'lowest hash on chain',
        );
        await waitFor(() => finalizedOn(t, lowest), 9_000, 'lowest hash final');
      }
      expect(Date.now() - started).toBeLessThan(10_000); // decided by the 67 % quorum, not the fallback
      for (const t of [a, b])
        expect((await t.client.get<{ conserved: boolean }>('/supply')).conserved).toBe(true);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 90_000);
});
