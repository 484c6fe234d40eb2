import { afterEach, describe, expect, it } from 'vitest';
import { DEV_CERTIFICATE_WORKLOAD } from '../../node-core/genesis/genesis.ts';
import { liveBenchmarkWorkers } from '../../node-core/leasing/benchmark.ts';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import {
  decodeCertificate,
  type PerformanceCertificate,
  verifyCertificateContent,
} from '../../node-core/protocol/certificate.ts';
import { type JsonValue, parseJson } from '../../node-core/protocol/json.ts';
import { parseCertificateWorkload } from '../../node-core/statechain/sys.ts';
import { startTestNode, type TestNode, tempDir, waitFor } from '../helpers/node.ts';

/**
 * A node makes its own performance certificate after start (reference-behavior.md 4.7, LS-14): the
 * development network's small workload, the node's own timekeeper attestations, stored and served.
 */
interface NodeInfo {
  network_id: string;
  address: string;
  certificate: { valid: boolean; hash?: string; expires_at?: bigint };
  benchmark: { state: string; progress: number; started_at?: number; elapsed_seconds?: number };
}

async function ownCertificate(t: TestNode): Promise<PerformanceCertificate | undefined> {
  const r = await fetch(`${t.node.url}/certificate`);
  if (r.status === 404) return undefined;
  expect(r.status).toBe(200);
  return decodeCertificate(parseJson(await r.text()));
}

const info = (t: TestNode) => t.client.get<NodeInfo>('/node');

describe('the own performance certificate', () => {
  let t: TestNode | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('is made after start with the development workload, verifies, and shows in GET /node', async () => {
    // The default development workload, not the tests' tiny one: this is the figure a user waits for.
    t = await startTestNode({
      genesisSet: {
        certificate_iterations: DEV_CERTIFICATE_WORKLOAD.iterations,
        certificate_table_entries: BigInt(DEV_CERTIFICATE_WORKLOAD.table_entries),
        certificate_reads: BigInt(DEV_CERTIFICATE_WORKLOAD.reads),
      },
    });
    const started = Date.now();
    // The start is not held up by the benchmark.
    expect((await info(t)).benchmark.state).toMatch(/^(idle|running)$/);
    const cert = (await waitFor(() => ownCertificate(t!), 30_000, 'the own certificate'))!;
    const seconds = (Date.now() - started) / 1000;
    const kv = await t.client.get<{ value: JsonValue }>('/statechain/kv/sys.certificate_workload');
    const workload = parseCertificateWorkload(kv.value);
    expect(workload).toEqual(DEV_CERTIFICATE_WORKLOAD);
    const n = await info(t);
    verifyCertificateContent(cert, n.network_id, { workload, verify: verifyBytesNode });
    expect(cert.provider).toBe(n.address);
    expect(cert.price_multiplier_milli).toBe(1000n);
    expect(n.certificate).toEqual({ valid: true, hash: cert.hash, expires_at: cert.expires_at });
    expect(n.benchmark.state).toBe('done');
    expect(n.benchmark.progress).toBe(1);
    expect(n.benchmark.elapsed_seconds).toBeCloseTo(1 / cert.score, 6);
    expect(BigInt(n.benchmark.started_at!)).toBe(cert.start_median);
    console.log(
      `development certificate: benchmark ${n.benchmark.elapsed_seconds!.toFixed(2)} s, ` +
        `certificate ${seconds.toFixed(2)} s after start`,
    );
  });

  it('survives a restart and is not made again while valid', async () => {
    const dataDir = tempDir();
    t = await startTestNode({ dataDir });
    const first = (await waitFor(() => ownCertificate(t!), 20_000, 'the own certificate'))!;
    await t.stop();
    t = await startTestNode({ dataDir });
    const n = (await waitFor(
      async () => ((await info(t!)).benchmark.state === 'done' ? info(t!) : undefined),
      10_000,
      'benchmark state',
    ))!;
    expect(n.certificate.hash).toBe(first.hash);
    expect(BigInt(n.benchmark.started_at!)).toBe(first.start_median);
    // Given time to make another, it makes none.
    await new Promise((r) => setTimeout(r, 500));
    expect(t.node.certificates.ofProvider(n.address).map((c) => c.hash)).toEqual([first.hash]);
    expect((await ownCertificate(t))!.hash).toBe(first.hash);
  });

  it('stopping the node during the benchmark leaves no worker behind', async () => {
    // A benchmark of minutes: the node is stopped long before it ends.
    t = await startTestNode({ genesisSet: { certificate_iterations: 200_000_000n } });
    await waitFor(async () => (await info(t!)).benchmark.state === 'running', 20_000, 'a running benchmark');
    await waitFor(() => liveBenchmarkWorkers() === 1, 5000, 'the benchmark worker');
    await t.stop();
    t = undefined;
    expect(liveBenchmarkWorkers()).toBe(0);
  });

  it('is made by no node told not to', async () => {
    t = await startTestNode({ ownCertificate: false });
    await new Promise((r) => setTimeout(r, 300));
    expect((await info(t)).benchmark).toEqual({ state: 'idle', progress: 0 });
    expect(await ownCertificate(t)).toBeUndefined();
  });
});
