import { join } from 'node:path';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import type { Stream } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { describe, expect, it } from 'vitest';
import { isNetError } from '../../node-core/net/errors.ts';
import { type MessengerStats, REQUEST_PROTOCOL } from '../../node-core/net/requests.ts';
import { encodeHello, NETCHECK_PROTOCOL } from '../../node-core/net/netcheck.ts';
import type { NodeOptions } from '../../node-core/node.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { finalizedOn, listenAddr, P2P, peerCount, twoNodes } from '../helpers/p2p.ts';

/**
 * The messenger `/xe/msg/1.0.0` under abuse (reference-behavior.md 5.7 and 9.4 N-09), on real nodes
 * over loopback: rate limits per peer and for all peers, the 64 KiB request cap and the deadline.
 * The limits are set tiny through the node options so that a test can reach them quickly.
 */
interface Trio {
  a: TestNode;
  /** The flooder. */
  b: TestNode;
  /** An honest peer. */
  c: TestNode;
  stop(): Promise<void>;
}

/** A, then B and C joining A's network and connected to it. */
async function trio(optsA: Partial<NodeOptions>): Promise<Trio> {
  const a = await startTestNode({ ...P2P, ...optsA });
  const joined: TestNode[] = [];
  try {
    const join_ = { ...P2P, genesisDir: join(a.dataDir, 'genesis'), dial: [await listenAddr(a)] };
    joined.push(await startTestNode(join_));
    joined.push(await startTestNode(join_));
    await waitFor(async () => (await peerCount(a)) === 2, 10_000, 'both peers on A');
    // A is verified on their side too (they may also find each other through peer exchange).
    for (const t of joined)
      await waitFor(() => t.node.p2p!.peers().some((p) => p.id === a.node.nodeId), 10_000, 'A');
  } catch (e) {
    await Promise.all([a, ...joined].map((t) => t.stop()));
    throw e;
  }
  const [b, c] = joined as [TestNode, TestNode];
  return { a, b, c, stop: async () => void (await Promise.all([a.stop(), b.stop(), c.stop()])) };
}

async function messengerStats(t: TestNode): Promise<MessengerStats> {
  return (await t.client.get<{ messenger: MessengerStats }>('/node')).messenger;
}

/** A messenger request `to` answers: its genesis block, by `block_request`. */
function ask(from: TestNode, to: TestNode): Promise<{ blocks: unknown[] }> {
  return from.node.p2p!.request(to.node.nodeId, 'block_request', { hashes: [to.node.genesisHash] });
}

/** Sends `n` requests one after another; returns the errors of those that were refused. */
async function flood(from: TestNode, to: TestNode, n: number): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (let i = 0; i < n; i++) {
    await ask(from, to).catch((e: unknown) => {
      errors.push(e);
    });
  }
  return errors;
}

const isRateLimited = (e: unknown, scope: RegExp) =>
  isNetError(e, 'ERR_PEER_ANSWER') && /rate limited/.test(e.message) && scope.test(e.message);

describe('messenger rate limits (N-09)', () => {
  it('answers a flooding peer "rate limited", while another peer is served and the node keeps working', async () => {
    const t = await trio({
      messengerLimits: { perPeer: { perSecond: 2, burst: 15 }, global: { perSecond: 1000, burst: 1000 } },
    });
    try {
      const { a, b, c } = t;
      const errors = await flood(b, a, 60);
      // At most the burst and a token or two of refill get through; everything else is refused.
      expect(errors.length).toBeGreaterThanOrEqual(40);
      expect(errors.every((e) => isRateLimited(e, /per peer/))).toBe(true);
      const stats = await messengerStats(a);
      expect(stats.rate_limited).toBeGreaterThanOrEqual(errors.length);
      expect(stats.rate_limited_global).toBe(0);
      expect(stats.per_peer).toEqual({ per_second: 2, burst: 15 });

      // The honest peer has its own bucket: its requests are answered right after the flood.
      for (let i = 0; i < 5; i++) expect((await ask(c, a)).blocks).toHaveLength(1);
      // Sync travels on its own protocol: the flooder's catch-up is not throttled by the messenger.
      const page = await b.node.p2p!.request<{ entries: unknown[] }>(
        a.node.nodeId,
        'frontiers',
        { limit: 1 },
        { channel: 'sync' },
      );
      expect(page.entries).toHaveLength(1);
      // The node keeps working: a block from C is finalized on A and on C.
      const w = await c.wallet();
      const claim = await w.claim(1_000n);
      for (const n of [a, c]) await waitFor(() => finalizedOn(n, claim.hash!), 10_000, 'claim finalized');
      // The limit is a rate, not a ban: once its bucket refills, the flooder is served again.
      await new Promise((r) => setTimeout(r, 1_100));
      await expect(ask(b, a)).resolves.toBeDefined();
    } finally {
      await t.stop();
    }
  }, 60_000);

  it('bounds all peers together: once the shared bucket is empty, every peer is refused', async () => {
    const t = await trio({
      messengerLimits: { perPeer: { perSecond: 1000, burst: 1000 }, global: { perSecond: 1, burst: 20 } },
    });
    try {
      const { a, b, c } = t;
      const errors = await flood(b, a, 40);
      expect(errors.length).toBeGreaterThanOrEqual(15);
      expect(errors.every((e) => isRateLimited(e, /for all peers/))).toBe(true);
      const refused = await ask(c, a).catch((e: unknown) => e);
      expect(isRateLimited(refused, /for all peers/)).toBe(true);
      const stats = await messengerStats(a);
      expect(stats.rate_limited_global).toBeGreaterThanOrEqual(errors.length + 1);
      expect(stats.rate_limited).toBe(stats.rate_limited_global);
    } finally {
      await t.stop();
    }
  }, 60_000);

  it('a node asking faster than its peer accepts paces itself instead of being refused', async () => {
    // B keeps to 80 % of what A accepts, as by default (network delays vary; see request-pacer.ts).
    const [a, b] = await twoNodes(
      { messengerLimits: { perPeer: { perSecond: 20, burst: 10 } } },
      { messengerLimits: { outbound: { perSecond: 16, burst: 8 } } },
    );
    try {
      const started = Date.now();
      // Made all at once, as a busy caller would: the pacer spaces them.
      const answers = await Promise.all(Array.from({ length: 40 }, () => ask(b, a)));
      expect(answers).toHaveLength(40);
      expect((await messengerStats(a)).rate_limited).toBe(0);
      // 40 requests at 16/s after a burst of 8 take about 2 s.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_800);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);
});

/** Reads a stream to its end; undefined when it was cut off instead. */
async function readToEnd(stream: Stream): Promise<string | undefined> {
  let text = '';
  try {
    for await (const chunk of stream) text += new TextDecoder().decode(chunk.subarray(), { stream: true });
  } catch {
    return undefined;
  }
  return text;
}

describe('messenger size cap and deadline (spec 5.7)', () => {
  it('refuses a request over 64 KiB, cuts off one that never ends, and gives up on a peer that never answers', async () => {
    const a = await startTestNode({ ...P2P, messengerLimits: { deadlineMs: 500 } });
    const info = await a.client.node();
    const hello = encodeHello({
      network_id: info.network_id,
      version: '1.0.0',
      features: [],
      genesis_hash: info.genesis_hash,
    });
    // A bare libp2p peer that passes netcheck, then speaks the messenger by hand.
    const peer = await createLibp2p({
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
    });
    // It reads requests and never answers them.
    let heard = 0;
    await peer.handle(REQUEST_PROTOCOL, async (stream) => {
      for await (const _ of stream) heard += 1;
    });
    try {
      const conn = await peer.dial(multiaddr(await listenAddr(a)));
      const hs = await conn.newStream(NETCHECK_PROTOCOL);
      hs.send(hello);
      await hs.close();
      await readToEnd(hs);
      await waitFor(async () => (await peerCount(a)) === 1, 10_000, 'peer verified');
      const ask = async (body: Uint8Array, end = true): Promise<string | undefined> => {
        const s = await conn.newStream(REQUEST_PROTOCOL);
        s.send(body);
        if (end) await s.close();
        return readToEnd(s);
      };

      // Over 64 KiB: refused unread, with the protocol's error form.
      const big = new TextEncoder().encode(JSON.stringify({ type: 'peers', payload: 'x'.repeat(70_000) }));
      expect(JSON.parse((await ask(big))!)).toEqual({
        type: 'error',
        error: expect.stringMatching(/too large/),
      });
      expect((await messengerStats(a)).too_large).toBe(1);

      // A request that never ends holds its stream until the deadline, then the stream is cut off.
      const started = Date.now();
      expect(await ask(new TextEncoder().encode('{"type":"peers"'), false)).toBeUndefined();
      const held = Date.now() - started;
      expect(held).toBeGreaterThanOrEqual(400);
      expect(held).toBeLessThan(5_000);
      expect((await messengerStats(a)).timed_out).toBe(1);

      // A well-formed request is still answered.
      const wanted = JSON.stringify({ type: 'block_request', payload: { hashes: [a.node.genesisHash] } });
      const ok = JSON.parse((await ask(new TextEncoder().encode(wanted)))!);
      expect(ok).toMatchObject({ type: 'block_request', payload: { blocks: [expect.any(Object)] } });

      // The other way round: A asks the peer, which never answers; A gives up at the deadline.
      const asked = Date.now();
      const err = await a.node.p2p!.request(peer.peerId.toString(), 'peers', {}).catch((e: unknown) => e);
      expect(isNetError(err, 'ERR_DEADLINE')).toBe(true);
      expect(Date.now() - asked).toBeLessThan(5_000);
      expect(heard).toBeGreaterThan(0);

      // And a request too big to be accepted is refused before it is sent.
      const tooBig = await a.node
        .p2p!.request(peer.peerId.toString(), 'peers', { pad: 'x'.repeat(70_000) })
        .catch((e: unknown) => e);
      expect(isNetError(tooBig, 'ERR_TOO_LARGE')).toBe(true);
    } finally {
      await peer.stop();
      await a.stop();
    }
  }, 60_000);
});
