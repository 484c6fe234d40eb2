import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signRegistration } from '../../node-core/protocol/registration.ts';
import { startTestNode, waitFor } from '../helpers/node.ts';
import { delegateTo, finalizedOn, listenAddr, P2P, twoNodes } from '../helpers/p2p.ts';
import { rawHttp } from '../helpers/raw-http.ts';

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
    const fast = { selfRegistration: { refreshMs: 500 } };
    const [a, b] = await twoNodes(fast, fast);
    const c = await startTestNode({
      ...P2P,
      ...fast,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
    });
    let bStopped = false;
    try {
      const bRep = await delegateTo(a, b, 20_000_000_000_000n);
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

interface ReadyBody {
  ready: boolean;
  checks: { name: string; ok: boolean; detail?: string }[];
  peer_count: number;
  active_representatives: number;
  active_representative_weight_micro_xe: string;
}

describe('GET /ready with peers', () => {
  it('counts peers, sync and the representatives actually voting; a node that loses its only peer is not ready', async () => {
    const [a, b] = await twoNodes();
    let bStopped = false;
    try {
      // Half the weight moves to B's representative: neither node finalizes alone, so each needs a peer.
      await delegateTo(a, b, 21_000_000_000_000n);
      const w = await a.wallet();
      const claim = await w.claim(1_000n);
      await waitFor(() => finalizedOn(b, claim.hash!), 15_000, 'the claim final on B');
      const ready = async (t: typeof a) => {
        const r = await rawHttp(Number(new URL(t.node.url).port), { path: '/ready' });
        return { status: r.status, body: r.json as ReadyBody };
      };
      const check = (body: ReadyBody, name: string) => body.checks.find((c) => c.name === name)!;
      await waitFor(async () => (await ready(a)).status === 200, 10_000, 'A ready');
      const onA = (await ready(a)).body;
      expect(check(onA, 'peers')).toMatchObject({ ok: true, detail: '1 peer, 1 required' });
      expect(check(onA, 'synced')).toMatchObject({
        ok: true,
        detail: expect.stringMatching(/^last successful sync round/),
      });
      expect(check(onA, 'quorum_reachable').ok).toBe(true);
      expect(onA).toMatchObject({ peer_count: 1, active_representatives: 2 });
      expect(onA.active_representative_weight_micro_xe).toBe('42000000000000');

      await b.stop();
      bStopped = true;
      await waitFor(async () => (await ready(a)).status === 503, 10_000, 'A not ready without its peer');
      const alone = (await ready(a)).body;
      expect(alone.ready).toBe(false);
      expect(check(alone, 'peers')).toMatchObject({ ok: false, detail: '0 peers, 1 required' });
      // Its last sync round is still recent (180 s count): only the missing peer makes it not ready.
      expect(alone.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['peers']);
    } finally {
      await Promise.all([a.stop(), bStopped ? undefined : b.stop()]);
    }
  }, 60_000);

  it('a node that finalizes alone needs no peer', async () => {
    const a = await startTestNode({ ...P2P });
    try {
      const r = await rawHttp(Number(new URL(a.node.url).port), { path: '/ready' });
      expect(r.status).toBe(200);
      const body = r.json as ReadyBody;
      expect(body.checks.find((c) => c.name === 'peers')).toMatchObject({
        ok: true,
        detail: '0 peers, 0 required',
      });
      expect(body.checks.find((c) => c.name === 'synced')).toMatchObject({ ok: true });
      expect(body).toMatchObject({ peer_count: 0, active_representatives: 1 });
    } finally {
      await a.stop();
    }
  });
});
