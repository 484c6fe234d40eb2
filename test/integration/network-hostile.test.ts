import { join } from 'node:path';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBlockMessage, TOPICS } from '../../node-core/net/gossip.ts';
import { ZERO_HASH } from '../../node-core/protocol/block.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { Account, kitOf, nowNs, sealed } from '../helpers/ledger-kit.ts';
import { gossipPeer } from '../helpers/gossip-peer.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * A peer that passes the handshake and then sends garbage, invalid blocks and floods: the node keeps
 * serving, scores the peer down, and blocks from honest peers still go through.
 */
const P2P = { p2p: true, p2pPort: 0, p2pBind: '127.0.0.1' } as const;

describe('a hostile peer', () => {
  let a: TestNode;
  let b: TestNode;
  beforeAll(async () => {
    a = await startTestNode({ ...P2P });
    const addr = (await a.client.get<{ listen_addrs: string[] }>('/node')).listen_addrs[0]!;
    b = await startTestNode({ ...P2P, genesisDir: join(a.dataDir, 'genesis'), dial: [addr] });
    await waitFor(
      async () => (await a.client.get<{ peer_count: number }>('/node')).peer_count === 1,
      10_000,
      'peer',
    );
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('sends garbage after a valid handshake: the node stays up, scores it down, honest gossip continues', async () => {
    const evil = await gossipPeer(a, 2);
    try {
      const forged = encodeBlockMessage({
        type: 'send',
        account: 'ab'.repeat(32),
        previous: 'cd'.repeat(32),
        balance: 1n,
        timestamp: 1n,
        asset: 'XE',
        destination: 'ef'.repeat(32),
        amount: 1n,
        hash: '00'.repeat(32),
        signature: '11'.repeat(64),
      });
      const enc = new TextEncoder();
      for (let i = 0; i < 300; i++) {
        const junk =
          i % 3 === 0
            ? enc.encode(`{"block":${i}}`)
            : i % 3 === 1
              ? enc.encode(`not json ${i}`)
              : Uint8Array.from([...forged, i % 10 === 0 ? 32 : 10]);
        await evil.services.pubsub.publish(i % 2 === 0 ? TOPICS.blocks : TOPICS.votes, junk).catch(() => {});
      }
      await new Promise((r) => setTimeout(r, 2500)); // scores are cached for one heartbeat
      expect((await a.client.get<{ status: string }>('/health')).status).toBe('ok');
      expect(a.node.p2p!.score(evil.peerId.toString())).toBeLessThan(0);

      // Honest traffic still flows between the two real nodes.
      const w = await b.wallet();
      const claim = await w.claim(1_000n);
      await waitFor(
        async () => (await a.client.block(claim.hash!))?.finalized === true,
        10_000,
        'honest block finalized',
      );
    } finally {
      await evil.stop();
    }
  }, 60_000);

  it('L-19: a peer relaying blocks this node cannot judge yet (lease types, unknown types, missing dependencies) keeps its score', async () => {
    const peer = await gossipPeer(a, 2);
    try {
      const kit = await kitOf(a);
      const dropped = async () => (await a.client.get<{ dropped_blocks: number }>('/node')).dropped_blocks;
      const droppedBefore = await dropped();
      const signer = new Account(kit);
      await signer.claim(5_000_000n);
      const other = 'ab'.repeat(32);
      const enc = new TextEncoder();
      for (let i = 0; i < 40; i++) {
        // Valid signature, key and proof of work: a lease block a leasing node would judge.
        const lease = signer.build({
          type: 'lease',
          asset: 'XUSD',
          balance: 0n,
          destination: other,
          amount: BigInt(i + 1),
          vcpus: 1n,
          duration: 3600n,
        });
        await peer.services.pubsub.publish(TOPICS.blocks, encodeBlockMessage(lease));
        // A type of a newer network, well formed otherwise.
        const newer = { ...(blockToJson(lease, 'reference') as object), type: 'lease_v9' };
        await peer.services.pubsub.publish(TOPICS.blocks, enc.encode(stringifyJson({ block: newer })));
        // Its previous block has not arrived (a dependency missing). Each one differs: two alike
        // in the same millisecond would be one gossip message (gossipsub refuses a duplicate).
        const orphan = sealed(
          {
            ...signer.draft({ type: 'claim', asset: 'XE', amount: BigInt(i + 1), balance: BigInt(i + 1) }),
            previous: other,
          },
          signer.seed,
          kit,
        );
        await peer.services.pubsub.publish(TOPICS.blocks, encodeBlockMessage(orphan));
      }
      await new Promise((r) => setTimeout(r, 2500)); // scores are cached for one heartbeat
      expect(a.node.p2p!.score(peer.peerId.toString())).toBeGreaterThanOrEqual(0);
      expect((await a.client.get<{ status: string }>('/health')).status).toBe('ok');
      // The orphans waited for their previous block (parked, not refused), then were given up on.
      await waitFor(async () => (await dropped()) === droppedBefore + 40, 15_000, 'the orphans dropped');
    } finally {
      await peer.stop();
    }
  }, 60_000);

  it('counts a gossiped block whose dependency never comes as dropped (N-08), and keeps serving', async () => {
    const peer = await gossipPeer(a, 2);
    try {
      const kit = await kitOf(a);
      const counts = () => a.client.get<{ dropped_blocks: number; parked_blocks: number }>('/node');
      const { dropped_blocks: before, parked_blocks: parkedBefore } = await counts();
      // Valid on its own (signature, key, proof of work), but it receives a send nobody has.
      const signer = new Account(kit);
      const orphan = sealed(
        {
          type: 'receive',
          account: signer.address,
          previous: ZERO_HASH,
          timestamp: nowNs(),
          asset: 'XE',
          source: 'ab'.repeat(32),
          balance: 5n,
        },
        signer.seed,
        kit,
      );
      await peer.services.pubsub.publish(TOPICS.blocks, encodeBlockMessage(orphan));
      // It waits for its source (5 s, counted as parked), then is given up on and counted.
      await waitFor(
        async () => (await counts()).parked_blocks === parkedBefore + 1,
        10_000,
        'the orphan parked',
      );
      await waitFor(async () => (await counts()).dropped_blocks === before + 1, 15_000, 'the orphan dropped');
      expect(await a.client.block(orphan.hash!)).toBeUndefined();
      expect((await a.client.get<{ status: string }>('/health')).status).toBe('ok');
    } finally {
      await peer.stop();
    }
  }, 60_000);
});

/** A bare libp2p host on loopback (no netcheck, no gossip): just a socket that connects. */
async function barePeer() {
  return createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
  });
}

describe('connection flooding (N-09)', () => {
  it('refuses inbound connections from one IP beyond the cap, while existing peers keep working', async () => {
    // All loopback connections come from 127.0.0.1: B's is one, so a cap of 2 leaves room for one more.
    const a = await startTestNode({ ...P2P, p2pMaxInboundPerIp: 2 });
    const addr = (await a.client.get<{ listen_addrs: string[] }>('/node')).listen_addrs[0]!;
    const b = await startTestNode({ ...P2P, genesisDir: join(a.dataDir, 'genesis'), dial: [addr] });
    const floods = await Promise.all([barePeer(), barePeer(), barePeer()]);
    try {
      await waitFor(
        async () => (await a.client.get<{ peer_count: number }>('/node')).peer_count === 1,
        10_000,
        'peer',
      );
      await floods[0]!.dial(multiaddr(addr));
      await expect(floods[1]!.dial(multiaddr(addr))).rejects.toThrow();
      await expect(floods[2]!.dial(multiaddr(addr))).rejects.toThrow();
      const stats = (
        await a.client.get<{ inbound_connections: { open: number; refused: number; max_per_ip: number } }>(
          '/node',
        )
      ).inbound_connections;
      expect(stats).toMatchObject({ open: 2, max_per_ip: 2 });
      expect(stats.refused).toBeGreaterThanOrEqual(2);

      // The peer connected before the flood still works both ways.
      const w = await b.wallet();
      const claim = await w.claim(1_000n);
      for (const t of [a, b]) {
        await waitFor(
          async () => (await t.client.block(claim.hash!))?.finalized === true,
          10_000,
          'block finalized on both nodes',
        );
      }
      expect((await a.client.get<{ peer_count: number }>('/node')).peer_count).toBe(1);

      // A connection that closes frees its place.
      await floods[0]!.stop();
      await waitFor(() => a.node.p2p!.inboundStats.open === 1, 5_000, 'closed connection released');
      await floods[1]!.dial(multiaddr(addr));
      expect(a.node.p2p!.inboundStats.open).toBe(2);
    } finally {
      await Promise.all(floods.map((f) => f.stop()));
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it('refuses inbound connections beyond the overall cap', async () => {
    const a = await startTestNode({ ...P2P, p2pMaxInbound: 1 });
    const addr = (await a.client.get<{ listen_addrs: string[] }>('/node')).listen_addrs[0]!;
    const peers = await Promise.all([barePeer(), barePeer()]);
    try {
      await peers[0]!.dial(multiaddr(addr));
      await expect(peers[1]!.dial(multiaddr(addr))).rejects.toThrow();
      expect(a.node.p2p!.inboundStats).toMatchObject({ open: 1, max_total: 1 });
    } finally {
      await Promise.all(peers.map((p) => p.stop()));
      await a.stop();
    }
  }, 30_000);
});
