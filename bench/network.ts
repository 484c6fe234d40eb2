import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildChain, fastKey } from './node.ts';
import { httpGet, httpPost } from './load.ts';
import { fmtRate } from './measure.ts';
import { spawnNode, type SpawnedNode } from './spawn-node.ts';

/**
 * Network benchmarks (issue "The network"): three nodes as separate processes on loopback sharing
 * one genesis. Finality latency: from a block's submission at one node until it is final on all
 * three (p50, p99). Gossip throughput: blocks per second finalized on all three nodes.
 */
const DIFFICULTY = 0xf000000000000000n;

async function json<T>(url: string): Promise<T> {
  return (await (await fetch(url)).json()) as T;
}

async function startThree(dir: string): Promise<SpawnedNode[]> {
  const common = [
    '--api-port',
    '0',
    '--p2p-port',
    '0',
    '--p2p-bind',
    '127.0.0.1',
    '--rate-limit',
    'off',
    '--log-level',
    'warn',
  ];
  const a = await spawnNode([
    '--data-dir',
    join(dir, 'a'),
    '--pow-difficulty',
    DIFFICULTY.toString(16),
    ...common,
  ]);
  const addr = (await json<{ listen_addrs: string[] }>(`${a.url}/node`)).listen_addrs[0]!;
  const rest = await Promise.all(
    ['b', 'c'].map((n) =>
      spawnNode([
        '--data-dir',
        join(dir, n),
        '--genesis-dir',
        join(dir, 'a', 'genesis'),
        '--dial',
        addr,
        ...common,
      ]),
    ),
  );
  const nodes = [a, ...rest];
  for (;;) {
    const counts = await Promise.all(
      nodes.map((n) => json<{ peer_count: number }>(`${n.url}/node`).then((i) => i.peer_count)),
    );
    if (counts[0] === 2 && counts.every((c) => c >= 1)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return nodes;
}

function finalOn(agent: Agent, node: SpawnedNode, hash: string): Promise<boolean> {
  return httpGet(`${node.url}/blocks/${hash}`, agent).then(
    (r) => r.status === 200 && r.body.includes('"finalized":true'),
  );
}

export default async function benchNetwork(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-net-bench-'));
  const nodes = await startThree(dir);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  try {
    const { network_id } = await json<{ network_id: string }>(`${nodes[0]!.url}/node`);
    const t0 = BigInt(Date.now()) * 1_000_000n;

    // Latency: one block at a time, submitted at the first node, polled on all three.
    const N = 100;
    const latencies: number[] = [];
    for (let i = 0; i < N; i++) {
      const body = buildChain(fastKey(), 1, network_id, t0 + BigInt(i), DIFFICULTY)[0]!;
      const hash = /"hash":"([0-9a-f]{64})"/.exec(body)![1]!;
      const start = performance.now();
      const r = await httpPost(`${nodes[0]!.url}/blocks/claim`, body, agent);
      if (r.status !== 201) throw new Error(`submission failed: ${r.status} ${r.body}`);
      const pending = new Set(nodes);
      while (pending.size > 0) {
        for (const n of [...pending]) if (await finalOn(agent, n, hash)) pending.delete(n);
        if (pending.size > 0) await new Promise((res) => setTimeout(res, 2));
      }
      latencies.push(performance.now() - start);
    }
    latencies.sort((a, b) => a - b);
    const p50 = latencies[Math.floor(N * 0.5)]!;
    const p99 = latencies[Math.floor(N * 0.99)]!;
    log(
      `finality latency, 3 nodes, submission to final on all: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target p50 < 250 ms)`,
    );

    // Throughput: 16 clients submit pre-built chains at the first node; time until all final on all.
    const streams = Array.from({ length: 16 }, (_, c) =>
      Array.from({ length: 5 }, () =>
        buildChain(fastKey(), 20, network_id, t0 + 1_000_000n + BigInt(c), DIFFICULTY),
      ).flat(),
    );
    const total = streams.reduce((s, x) => s + x.length, 0);
    const hashes = streams.flat().map((b) => /"hash":"([0-9a-f]{64})"/.exec(b)![1]!);
    const start = performance.now();
    await Promise.all(
      streams.map(async (bodies) => {
        for (const body of bodies) {
          const type = body.slice(9, body.indexOf('"', 9));
          const r = await httpPost(`${nodes[0]!.url}/blocks/${type}`, body, agent);
          if (r.status !== 201) throw new Error(`submission failed: ${r.status} ${r.body}`);
        }
      }),
    );
    const submitted = (performance.now() - start) / 1000;
    // The last block of every chain final on every node means its whole chain is final there.
    const lasts = streams.map((_, i) => hashes[(i + 1) * (total / streams.length) - 1]!);
    for (const n of nodes) {
      for (const h of lasts)
        while (!(await finalOn(agent, n, h))) await new Promise((r) => setTimeout(r, 10));
    }
    const secs = (performance.now() - start) / 1000;
    if (process.env.BENCH_DEBUG) {
      for (const n of nodes)
        log(
          `debug ${n.url}: ${JSON.stringify((await json<{ sync: unknown }>(`${n.url}/node`)).sync, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`,
        );
    }
    log(
      `gossip throughput: ${total} blocks submitted at one node in ${submitted.toFixed(2)} s, final on all 3 in ${secs.toFixed(2)} s: ${fmtRate(total / secs)} blocks`,
    );
    return { finality_p50_ms: p50, finality_p99_ms: p99, gossip_final_blocks_per_s: total / secs };
  } finally {
    agent.destroy();
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
