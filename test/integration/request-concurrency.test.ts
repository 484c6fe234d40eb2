import { generateKeyPair } from '@libp2p/crypto/keys';
import { describe, expect, it } from 'vitest';
import { P2PHost, type P2PHandlers } from '../../node-core/net/host.ts';
import { MAX_INBOUND_REQUEST_STREAMS } from '../../node-core/net/requests.ts';
import { waitFor } from '../helpers/node.ts';

const HELLO = {
  network_id: 'test-concurrency',
  version: '1.0.0',
  features: [],
  genesis_hash: '00'.repeat(32),
};

/** A host on loopback whose requests take `answerMs` to answer; it counts how many it held at once. */
async function host(answerMs: number, dial: string[] = []) {
  const held = { now: 0, most: 0 };
  const handlers: P2PHandlers = {
    onBlock: async () => 'ignore',
    onVote: () => 'ignore',
    onStateBlock: async () => 'ignore',
    onRequest: async (type) => {
      held.most = Math.max(held.most, ++held.now);
      await new Promise((r) => setTimeout(r, answerMs));
      held.now -= 1;
      return { type };
    },
  };
  const h = new P2PHost(
    {
      privateKey: await generateKeyPair('Ed25519'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      dial,
      hello: HELLO,
      // Rates far above what the test asks: only the number of streams at once can refuse.
      messenger: {
        perPeer: { perSecond: 10_000, burst: 10_000 },
        outbound: { perSecond: 10_000, burst: 10_000 },
      },
    },
    handlers,
  );
  await h.start();
  return { h, held };
}

describe('requests to one peer at once (real libp2p hosts on loopback)', () => {
  it(`keeps to the ${MAX_INBOUND_REQUEST_STREAMS} streams a peer takes at once, queueing the rest instead of having them reset`, async () => {
    const a = await host(150);
    const b = await host(0, a.h.listenAddrs);
    try {
      await waitFor(() => b.h.isVerified(a.h.peerId), 10_000, 'B verified A');
      // Three times what A takes at once, asked together, as a sync round or a busy caller would.
      const n = MAX_INBOUND_REQUEST_STREAMS * 3;
      const started = Date.now();
      const results = await Promise.allSettled(
        Array.from({ length: n }, (_, i) => b.h.request<{ type: string }>(a.h.peerId, `r${i}`, {})),
      );
      const failed = results.filter((r) => r.status === 'rejected');
      expect(failed.map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      expect(a.held.most).toBeLessThanOrEqual(MAX_INBOUND_REQUEST_STREAMS);
      // Queued, not serialised: the requests went MAX_INBOUND_REQUEST_STREAMS at a time.
      expect(a.held.most).toBeGreaterThan(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 150);
    } finally {
      await Promise.all([a.h.stop(), b.h.stop()]);
    }
  }, 30_000);
});
