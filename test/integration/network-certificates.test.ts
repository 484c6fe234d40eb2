import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCertificateMessage, TOPICS } from '../../node-core/net/gossip.ts';
import {
  EMPTY_ATTESTATION_ROOT,
  type PerformanceCertificate,
  REFERENCE_WORKLOAD,
  signCertificate,
} from '../../node-core/protocol/certificate.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { parseJson } from '../../node-core/protocol/json.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { gossipPeer } from '../helpers/gossip-peer.ts';
import { startTestNode, TEST_CERTIFICATE_WORKLOAD, type TestNode, waitFor } from '../helpers/node.ts';
import { listenAddr, P2P, peerCount } from '../helpers/p2p.ts';

/**
 * Certificates between real nodes (reference-behavior.md 4.7, 5.3, LS-15): a joining node pulls its
 * peer's certificate with `cert_request`, and again every pull period; gossiped certificates are
 * verified against the network's id and workload before they are kept and relayed.
 */
const HOUR_NS = 3_600_000_000_000n;

/** A certificate of a fresh provider, signed for `networkId` with the given workload. */
function certificateFor(
  networkId: string,
  workload: { workload_version: bigint; iterations: bigint },
  over: Partial<PerformanceCertificate> = {},
): PerformanceCertificate {
  const k = generateKeyPair();
  const issued = BigInt(Date.now()) * 1_000_000n - HOUR_NS;
  return signCertificate(
    {
      provider: k.address,
      provider_pub_key: k.pub_key,
      seed: 'ab'.repeat(32),
      workload_version: workload.workload_version,
      iterations: workload.iterations,
      work_proof: 'cd'.repeat(32),
      score: 0.75,
      start_attestation_root: EMPTY_ATTESTATION_ROOT,
      end_attestation_root: EMPTY_ATTESTATION_ROOT,
      start_median: issued,
      end_median: issued + 1_000_000_000n,
      issued_at: issued,
      expires_at: issued + 7n * 24n * HOUR_NS,
      price_multiplier_milli: 1200n,
      ...over,
    },
    networkId,
    hexToBytes(k.seed_hex),
  );
}

async function certificateOn(t: TestNode, provider: string): Promise<string | undefined> {
  const r = await fetch(`${t.node.url}/certificate/${provider}`);
  if (r.status !== 200) return undefined;
  return (parseJson(await r.text()) as { hash: string }).hash;
}

describe('certificates over the network', () => {
  let a: TestNode;
  let b: TestNode;
  const workload = {
    workload_version: 3n,
    iterations: TEST_CERTIFICATE_WORKLOAD.certificate_iterations,
  };

  beforeAll(async () => {
    a = await startTestNode({ ...P2P });
    // A makes its certificate before B exists: B can only learn it by pulling.
    await waitFor(() => a.node.certificates.newestValid(a.node.nodeKey.address, a.node.now()), 20_000, 'A');
    b = await startTestNode({
      ...P2P,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
      certificateExchange: { pullEveryMs: 500 },
    });
    await waitFor(async () => (await peerCount(a)) === 1, 10_000, 'peers');
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('a joining node pulls its peer’s certificate on connect and serves it', async () => {
    const own = await a.client.get<{ hash: string }>('/certificate');
    const address = a.node.nodeKey.address;
    expect(await waitFor(() => certificateOn(b, address), 10_000, 'B learns A’s certificate')).toBe(own.hash);
    // B is no timekeeper on this network: it cannot certify itself, and says why.
    const n = await b.client.get<{ benchmark: { state: string; error?: string } }>('/node');
    expect(n.benchmark.state).toBe('failed');
    expect(n.benchmark.error).toMatch(/no timekeeper attestation/);
  });

  it('and pulls again every period: a certificate A learned later reaches B without gossip', async () => {
    const cert = certificateFor(a.node.statechain.networkId, workload);
    await a.node.certificates.add(cert); // stored, never published
    expect(await waitFor(() => certificateOn(b, cert.provider), 10_000, 'the periodic pull')).toBe(cert.hash);
  });

  it('a gossiped certificate is verified, kept and relayed; forged ones are rejected and cost the sender', async () => {
    const peer = await gossipPeer(a, 2);
    try {
      const networkId = a.node.statechain.networkId;
      const good = certificateFor(networkId, workload);
      await peer.services.pubsub.publish(TOPICS.certificates, encodeCertificateMessage(good));
      expect(await waitFor(() => certificateOn(a, good.provider), 10_000, 'A keeps it')).toBe(good.hash);
      expect(await waitFor(() => certificateOn(b, good.provider), 10_000, 'B gets it relayed')).toBe(
        good.hash,
      );

      const real = certificateFor(networkId, workload);
      const forged = [
        // A changed multiplier no longer matches the hash.
        { ...real, price_multiplier_milli: 500n },
        // Re-hashed but signed by someone else.
        { ...certificateFor(networkId, workload), provider: real.provider },
        // Properly signed, for another network.
        certificateFor('devnet-other', workload),
        // Properly signed, for the reference workload this network does not pin.
        certificateFor(networkId, REFERENCE_WORKLOAD),
      ];
      for (const f of forged)
        await peer.services.pubsub.publish(TOPICS.certificates, encodeCertificateMessage(f));
      await peer.services.pubsub.publish(TOPICS.certificates, new TextEncoder().encode('{"provider":"x"}'));
      // A score outweighs a few invalid messages (time in the mesh counts): enough of them sink it.
      for (let m = 501n; m <= 520n; m++)
        await peer.services.pubsub.publish(
          TOPICS.certificates,
          encodeCertificateMessage({ ...real, price_multiplier_milli: m }),
        );
      await new Promise((r) => setTimeout(r, 2500)); // scores are cached for one heartbeat
      expect(a.node.p2p!.score(peer.peerId.toString())).toBeLessThan(0);
      for (const f of forged) {
        expect(a.node.certificates.get(f.hash)).toBeUndefined();
        expect(b.node.certificates.get(f.hash)).toBeUndefined();
      }
      expect(await certificateOn(a, real.provider)).toBeUndefined();
    } finally {
      await peer.stop();
    }
  });
});
