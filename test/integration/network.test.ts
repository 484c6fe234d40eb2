import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * Several real nodes on loopback, each with its own LMDB and libp2p host, sharing one genesis:
 * blocks gossip to every node, the representative's votes travel with them, and every node
 * finalizes; a node on another network is refused.
 */
const P2P = { p2p: true, p2pPort: 0, p2pBind: '127.0.0.1' } as const;

async function listenAddr(t: TestNode): Promise<string> {
  const info = await t.client.get<{ listen_addrs: string[] }>('/node');
  return info.listen_addrs.find((a) => a.includes('/ip4/127.0.0.1/'))!;
}

async function peerCount(t: TestNode): Promise<number> {
  return (await t.client.get<{ peer_count: number }>('/node')).peer_count;
}

async function finalizedOn(t: TestNode, hash: string): Promise<boolean> {
  return (await t.client.block(hash))?.finalized === true;
}

describe('three nodes on loopback', () => {
  let a: TestNode;
  let b: TestNode;
  let c: TestNode;

  beforeAll(async () => {
    a = await startTestNode({ ...P2P });
    const genesisDir = join(a.dataDir, 'genesis');
    const dial = [await listenAddr(a)];
    b = await startTestNode({ ...P2P, genesisDir, dial });
    c = await startTestNode({ ...P2P, genesisDir, dial });
    await waitFor(
      async () => (await peerCount(a)) === 2 && (await peerCount(b)) >= 1 && (await peerCount(c)) >= 1,
      15_000,
      'peers',
    );
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
    const a = await startTestNode({ ...P2P });
    const b = await startTestNode({
      ...P2P,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
    });
    try {
      await waitFor(async () => (await peerCount(a)) === 1, 10_000, 'peers');
      const bRep = (await b.client.node()).address;
      // 20M of the 42M XE move to an account that delegates to B's representative: A keeps 52%.
      const treasury = await a.wallet(seedOf(a.keys.treasury.seed_hex));
      const holder = await a.wallet();
      const big = await treasury.send(holder.address, 20_000_000_000_000n);
      holder.delegateTo(bRep);
      await holder.receive({
        hash: big.hash!,
        from: treasury.address,
        amount: big.amount!,
        asset: 'XE',
        timestamp: big.timestamp,
      });
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
