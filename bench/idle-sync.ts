import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanHttpConnection } from './lean-http.ts';
import { cpuSeconds, json, nowNs, ratio } from './measure.ts';
import { buildChain, fastKey } from './node.ts';
import { LOOPBACK_P2P_ARGS, QUIET_NODE_ARGS, spawnNode, type SpawnedNode } from './spawn-node.ts';
import { fillStore } from './startup.ts';

/**
 * What two idle nodes in step cost (issue #18, a node that sits in the tray all day): two peers on
 * copies of one ledger of BENCH_IDLE_ACCOUNTS accounts (default 100,000), connected, nothing
 * submitted. Each runs a sync round with the other every 30 s; the CPU both spend over
 * BENCH_IDLE_SECONDS (default 60) after their first rounds, with frontier digests
 * (ledger/frontier-digests.ts) against the same pair as older versions, which exchange every
 * frontier each round (LEDGER_NODE_SYNC_DIGESTS=0), measured one after the other in this run.
 * BENCH_IDLE_RATE submits a trickle of blocks meanwhile (trickleBlocks).
 */
const ACCOUNTS = Number(process.env.BENCH_IDLE_ACCOUNTS ?? 100_000);
const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const RATE = Number(process.env.BENCH_IDLE_RATE ?? 0);
const COMMON = [...QUIET_NODE_ARGS, ...LOOPBACK_P2P_ARGS];

interface Pair {
  /** CPU seconds a minute of each node, and the rounds each ran meanwhile. */
  cpuPerMin: [number, number];
  rounds: [number, number];
  entries: [number, number];
}

/**
 * With BENCH_IDLE_RATE=N, N opening blocks of new accounts a second are submitted to the first node
 * over the window (a quiet network, not an idle one; the blocks are built first). Returns the
 * function that runs the window, submitting or sleeping.
 */
async function trickleBlocks(node: SpawnedNode): Promise<() => Promise<void>> {
  const sleep = () => new Promise<void>((r) => setTimeout(r, SECONDS * 1000));
  if (RATE <= 0) return sleep;
  const { network_id, pow_difficulty } = await json<{ network_id: string; pow_difficulty: string }>(
    `${node.url}/node`,
  );
  const t0 = nowNs();
  const blocks = Array.from(
    { length: Math.round(RATE * SECONDS) },
    (_, i) => buildChain(fastKey(), 1, network_id, t0 + BigInt(i), BigInt(`0x${pow_difficulty}`))[0]!,
  );
  return async () => {
    const conn = LeanHttpConnection.forUrl(node.url);
    const start = performance.now();
    try {
      for (let i = 0; i < blocks.length; i++) {
        const due = start + (i * 1000) / RATE - performance.now();
        if (due > 0) await new Promise((r) => setTimeout(r, due));
        const r = await conn.post('/blocks/claim', blocks[i]!);
        if (r.status !== 201) throw new Error(`trickle: ${r.status} ${r.body}`);
      }
      const left = start + SECONDS * 1000 - performance.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    } finally {
      conn.close();
    }
  };
}

async function pair(dir: string, source: string, digests: boolean): Promise<Pair> {
  const dirs = ['a', 'b'].map((n) => join(dir, `${digests ? 'new' : 'old'}-${n}`));
  // Copies of one ledger without the filling node's keys: each makes its own at first start.
  for (const d of dirs) {
    cpSync(source, d, { recursive: true });
    for (const key of ['p2p.key', 'node.key']) rmSync(join(d, key), { force: true });
  }
  const env = { ...process.env, LEDGER_NODE_SYNC_DIGESTS: digests ? '1' : '0' };
  const nodes: SpawnedNode[] = [];
  try {
    nodes.push(await spawnNode(['--data-dir', dirs[0]!, ...COMMON], { env }));
    const addr = (await json<{ listen_addrs: string[] }>(`${nodes[0]!.url}/node`)).listen_addrs[0]!;
    nodes.push(await spawnNode(['--data-dir', dirs[1]!, '--dial', addr, ...COMMON], { env }));
    type Info = { peer_count: number; sync: { rounds: number; frontier_entries: number } };
    const info = () => Promise.all(nodes.map((n) => json<Info>(`${n.url}/node`)));
    // Both connected and past their first rounds (start-up's work is not the idle cost).
    const deadline = performance.now() + 60_000;
    for (;;) {
      const i = await info();
      if (i.every((x) => x.peer_count === 1 && x.sync.rounds >= 1)) break;
      if (performance.now() > deadline) throw new Error(`the pair did not connect: ${JSON.stringify(i)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 2000));
    const trickle = await trickleBlocks(nodes[0]!);
    const cpu0 = nodes.map((n) => cpuSeconds(n.proc.pid!));
    const i0 = await info();
    await trickle();
    const cpu1 = nodes.map((n) => cpuSeconds(n.proc.pid!));
    const i1 = await info();
    const per = (k: 0 | 1) => ((cpu1[k]! - cpu0[k]!) / SECONDS) * 60;
    return {
      cpuPerMin: [per(0), per(1)],
      rounds: [i1[0]!.sync.rounds - i0[0]!.sync.rounds, i1[1]!.sync.rounds - i0[1]!.sync.rounds],
      entries: [
        i1[0]!.sync.frontier_entries - i0[0]!.sync.frontier_entries,
        i1[1]!.sync.frontier_entries - i0[1]!.sync.frontier_entries,
      ],
    };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
  }
}

export default async function benchIdle(log: (line: string) => void): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-idle-bench-'));
  try {
    const source = join(dir, 'source');
    await fillStore(source, ACCOUNTS, log);
    const fmt = (p: Pair) =>
      `${p.cpuPerMin[0].toFixed(2)} and ${p.cpuPerMin[1].toFixed(2)} s of CPU a minute` +
      ` (${p.rounds[0]} and ${p.rounds[1]} rounds, ${p.entries[0]} and ${p.entries[1]} frontier entries received)`;
    const what = RATE > 0 ? `quiet (${RATE} blocks/s)` : 'idle';
    const base = await pair(dir, source, false);
    log(
      `baseline: two ${what} nodes of ${ACCOUNTS} accounts exchanging every frontier each round: ${fmt(base)}`,
    );
    const now = await pair(dir, source, true);
    log(`frontier digests: the same pair: ${fmt(now)}`);
    const b = base.cpuPerMin[0] + base.cpuPerMin[1];
    const n = now.cpuPerMin[0] + now.cpuPerMin[1];
    log(
      `${what} CPU of the pair: ${n.toFixed(2)} against ${b.toFixed(2)} s a minute: ${ratio(n, b)} of the baseline`,
    );
    return {
      accounts: ACCOUNTS,
      baseline_cpu_s_per_min: b,
      digests_cpu_s_per_min: n,
      ratio: n / b,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
