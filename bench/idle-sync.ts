import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, json, ratio } from './measure.ts';
import { spawnNode, type SpawnedNode } from './spawn-node.ts';
import { fillStore } from './startup.ts';

/**
 * What two idle nodes in step cost (issue #18, a node that sits in the tray all day): two peers on
 * copies of one ledger of BENCH_IDLE_ACCOUNTS accounts (default 100,000), connected, nothing
 * submitted. Each runs a sync round with the other every 30 s; the CPU both spend over
 * BENCH_IDLE_SECONDS (default 60) after their first rounds, with frontier digests
 * (ledger/frontier-digests.ts) against the same pair as older versions, which exchange every
 * frontier each round (LEDGER_NODE_SYNC_DIGESTS=0), measured one after the other in this run.
 */
const ACCOUNTS = Number(process.env.BENCH_IDLE_ACCOUNTS ?? 100_000);
const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const COMMON = [
  '--api-port',
  '0',
  '--rate-limit',
  'off',
  '--log-level',
  'warn',
  '--p2p-port',
  '0',
  '--p2p-bind',
  '127.0.0.1',
];

interface Pair {
  /** CPU seconds a minute of each node, and the rounds each ran meanwhile. */
  cpuPerMin: [number, number];
  rounds: [number, number];
  entries: [number, number];
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
    const cpu0 = nodes.map((n) => cpuSeconds(n.proc.pid!));
    const i0 = await info();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
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
    const base = await pair(dir, source, false);
    log(
      `baseline: two idle nodes of ${ACCOUNTS} accounts exchanging every frontier each round: ${fmt(base)}`,
    );
    const now = await pair(dir, source, true);
    log(`frontier digests: the same pair: ${fmt(now)}`);
    const b = base.cpuPerMin[0] + base.cpuPerMin[1];
    const n = now.cpuPerMin[0] + now.cpuPerMin[1];
    log(
      `idle CPU of the pair: ${n.toFixed(2)} against ${b.toFixed(2)} s a minute: ${ratio(n, b)} of the baseline`,
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
