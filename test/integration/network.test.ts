import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

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
