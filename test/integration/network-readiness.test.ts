import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signRegistration } from '../../node-core/protocol/registration.ts';
import { startTestNode, waitFor } from '../helpers/node.ts';
import { delegate, listenAddr, P2P, twoNodes } from '../helpers/p2p.ts';

/**
 * /network/readiness on three real nodes: representatives register themselves in the directory
 * over `xe/directory` gossip, and each node attributes a representative's weight by following
 * rep address -> registration -> peer id -> what that peer announced in netcheck.
 */
interface ReadinessBody {
  total_weight: string;
  feature_weight: Record<string, string>;
  version_weight: { version: string; weight: string }[];
  unknown_weight: string;
  resolved_reps: number;
  total_reps: number;
}

describe('network readiness', () => {
  it('resolves every representative through the directory, and stops counting one whose node is gone', async () => {
    const fast = { selfRegistration: { refreshMs: 500, peerDelayMs: 200 } };
    const [a, b] = await twoNodes(fast, fast);
    const c = await startTestNode({
      ...P2P,
      ...fast,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
    });
    let bStopped = false;
    try {
      const bRep = (await b.client.node()).address;
      await delegate(a, bRep, 20_000_000_000_000n);
      const total = '42000000000000';
      for (const t of [a, b, c]) {
        // C represents nothing: it must resolve both A's and B's representatives from gossip alone.
        await waitFor(
          async () => {
            const r = await t.client.get<ReadinessBody>('/network/readiness');
            return r.total_reps === 2 && r.resolved_reps === 2;
          },
          15_000,
          'both representatives resolved',
        );
        expect(await t.client.get<ReadinessBody>('/network/readiness')).toEqual({
          total_weight: total,
          feature_weight: { noop: total },
          feature_ready_milli: { noop: 1000 },
          version_weight: [{ version: '1.0.0', weight: total }],
          unknown_weight: '0',
          resolved_reps: 2,
          total_reps: 2,
        });
      }
      expect(c.node.directory!.lookup(bRep)?.node_peer).toBe(b.node.nodeId);

      // A registration with a forged signature is refused by the gossip validator's check.
      const forged = signRegistration(
        { account: b.node.nodeKey.pub_key, node_peer: c.node.nodeId, timestamp: c.node.now() },
        new Uint8Array(32).fill(1),
      );
      expect(c.node.directory!.offer(forged)).toBe('reject');
      expect(c.node.directory!.lookup(bRep)?.node_peer).toBe(b.node.nodeId);

      // B's node leaves: its representative's weight is unknown again on A.
      await b.stop();
      bStopped = true;
      await waitFor(
        async () => (await a.client.get<ReadinessBody>('/network/readiness')).resolved_reps === 1,
        10_000,
        'B unresolved',
      );
      const r = await a.client.get<ReadinessBody>('/network/readiness');
      expect(r.unknown_weight).toBe('20000000000000');
      expect(r.version_weight).toEqual([{ version: '1.0.0', weight: '22000000000000' }]);
    } finally {
      await Promise.all([a.stop(), bStopped ? undefined : b.stop(), c.stop()]);
    }
  }, 60_000);
});
