import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { driveIngest } from './ingest-client.ts';
import { diskMeter } from './ingest-run.ts';
import { cpuSeconds, fmtRate, json, nowNs, ratio } from './measure.ts';
import { buildChain, fastKey } from './node.ts';
import { LOOPBACK_P2P_ARGS, QUIET_NODE_ARGS, spawnNode, type SpawnedNode } from './spawn-node.ts';

/**
 * Catch-up sync (issue #18, target 1): a new node joins a network whose ledger holds N blocks, on
 * loopback, with one peer and with three peers; time until it holds every block and every block is
 * final there, and its rate against the single-node HTTP ingest rate measured in the same run (the
 * ingest that builds the source ledger is that baseline: the same blocks, the same machine).
 *
 * BENCH_SYNC_BLOCKS sets N (default 100,000; 10,000 for a quick run). BENCH_SYNC_PROF=DIR writes a
 * V8 CPU profile of each joining node into DIR. BENCH_SYNC_PEERS=1 or 3 runs one case only.
 * BENCH_SYNC_NODE_OPTIONS adds Node options for the joining node only (a GC logger to preload, say).
 * BENCH_LAG_STALLS=FILE has the event-loop probe log each turn of 100 ms or more with its window in
 * the clock of the CPU profiles (loop-lag-probe.ts), to find in BENCH_SYNC_PROF's what held the thread.
 */
/** Proof of work checked on every block, but cheap to pre-solve for 100,000 blocks (2 tries each). */
const DIFFICULTY = 0x8000000000000000n;
const PER_ACCOUNT = 50;
const CLIENTS = 16;

/** Node options that preload the event-loop delay probe (loop-lag-probe.ts) writing to `file`. */
const PROBE = fileURLToPath(new URL('./loop-lag-probe.ts', import.meta.url));
function probeEnv(file: string, extra = ''): NodeJS.ProcessEnv {
  return { ...process.env, NODE_OPTIONS: `--import ${PROBE} ${extra}`.trim(), BENCH_LAG_FILE: file };
}

interface Lag {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** The probe's last figures; read again if caught mid-write. Waits one probe interval for fresh ones. */
async function readLag(file: string): Promise<Lag> {
  await new Promise((r) => setTimeout(r, 600));
  for (let i = 0; i < 5; i++) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Lag;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { p50_ms: NaN, p99_ms: NaN, max_ms: NaN };
}

/** Builds the source ledger over HTTP (the baseline figure) into `data`; returns the rate. */
async function ingestSource(
  log: (l: string) => void,
  data: string,
  n: number,
): Promise<{ rate: number; blocks: number; cpuUs: number; lag: Lag }> {
  const lagFile = `${data}-lag.json`;
  const node = await spawnNode(
    ['--data-dir', data, '--pow-difficulty', DIFFICULTY.toString(16), '--no-p2p', ...QUIET_NODE_ARGS],
    { env: probeEnv(lagFile) },
  );
  try {
    const { network_id } = await json<{ network_id: string }>(`${node.url}/node`);
    const accounts = Math.max(CLIENTS, Math.round(n / PER_ACCOUNT));
    const t0 = nowNs();
    const t = performance.now();
    const streams: string[][] = Array.from({ length: CLIENTS }, () => []);
    for (let a = 0; a < accounts; a++)
      streams[a % CLIENTS]!.push(...buildChain(fastKey(), PER_ACCOUNT, network_id, t0, DIFFICULTY));
    const total = accounts * PER_ACCOUNT;
    log(
      `source: pre-built ${total} signed, solved blocks on ${accounts} accounts in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const cpu0 = cpuSeconds(node.proc.pid!);
    node.proc.kill('SIGUSR2'); // the probe's delay figures start here
    const r = await driveIngest(node.url, streams);
    const cpuUs = ((cpuSeconds(node.proc.pid!) - cpu0) / total) * 1e6;
    const lag = await readLag(lagFile);
    if (r.failed) throw new Error(`source ingest: ${r.failed} failed, first: ${r.firstError}`);
    // Every block final at the source, so joiners are asked for nothing the source cannot vote for.
    for (;;) {
      const ready = await json<{ unfinalized_positions: number }>(`${node.url}/ready`);
      if (ready.unfinalized_positions === 0) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    const { block_count } = await json<{ block_count: number }>(`${node.url}/node`);
    log(
      `baseline: single-node HTTP ingest, ${CLIENTS} clients: ${fmtRate(r.rate)} blocks (node CPU ${cpuUs.toFixed(0)} µs per block)`,
    );
    log(
      `event-loop delay of the node's thread under full ingest: p50 ${lag.p50_ms.toFixed(1)} ms, p99 ${lag.p99_ms.toFixed(1)} ms, max ${lag.max_ms.toFixed(0)} ms (target p99 < 20 ms)`,
    );
    return { rate: r.rate, blocks: block_count, cpuUs, lag };
  } finally {
    await node.stop();
  }
}

interface JoinResult {
  seconds: number;
  appliedSeconds: number;
  rate: number;
  cpuUs: number;
  lag: Lag;
  /** KB written to the data directory's disk per block while it caught up (undefined: not known). */
  diskKb: number | undefined;
}

/** A fresh node joins `peers`; time from its start until it holds all `blocks` and all are final. */
async function joinNetwork(
  log: (l: string) => void,
  dir: string,
  genesisDir: string,
  peers: string[],
  blocks: number,
  label: string,
): Promise<JoinResult> {
  const prof = process.env.BENCH_SYNC_PROF;
  const lagFile = `${dir}-lag.json`;
  const env = probeEnv(
    lagFile,
    [
      prof ? `--cpu-prof --cpu-prof-dir=${prof} --cpu-prof-name=${label}.cpuprofile` : '',
      // More options for the joiner only (e.g. a preload that logs its GC pauses).
      process.env.BENCH_SYNC_NODE_OPTIONS ?? '',
    ].join(' '),
  );
  const disk = diskMeter(dirname(dir));
  const started = performance.now();
  const node = await spawnNode(
    [
      '--data-dir',
      dir,
      '--genesis-dir',
      genesisDir,
      '--dial',
      peers.join(','),
      ...LOOPBACK_P2P_ARGS,
      ...QUIET_NODE_ARGS,
    ],
    { env },
  );
  node.proc.kill('SIGUSR2');
  let applied = 0;
  let lastLog = performance.now();
  try {
    for (;;) {
      const [info, ready] = await Promise.all([
        json<{ block_count: number; sync: { blocks_left: number; estimate_seconds: number | null } }>(
          `${node.url}/node`,
        ),
        json<{ unfinalized_positions: number }>(`${node.url}/ready`),
      ]);
      if (!applied && info.block_count >= blocks) applied = performance.now() - started;
      if (applied && ready.unfinalized_positions === 0) break;
      if (performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        log(
          `  ${label}: ${info.block_count}/${blocks} blocks, ${ready.unfinalized_positions} accounts not final, left ${info.sync.blocks_left}, estimate ${info.sync.estimate_seconds ?? '?'} s`,
        );
      }
      // Every 200 ms, not 50: the two requests are the joiner's own work, whose thread is measured
      // (at 50 ms they took ~1.7 s of it in a 100,000-block catch-up, 3 %, and their garbage).
      await new Promise((res) => setTimeout(res, 200));
    }
    const ms = performance.now() - started;
    const cpuUs = (cpuSeconds(node.proc.pid!) / blocks) * 1e6;
    const lag = await readLag(lagFile);
    return {
      diskKb: disk(blocks),
      seconds: ms / 1000,
      appliedSeconds: applied / 1000,
      rate: blocks / (ms / 1000),
      cpuUs,
      lag,
    };
  } finally {
    await node.stop();
  }
}

export default async function benchSync(log: (line: string) => void): Promise<Record<string, number>> {
  const n = Number(process.env.BENCH_SYNC_BLOCKS ?? 100_000);
  const cases = process.env.BENCH_SYNC_PEERS ? [Number(process.env.BENCH_SYNC_PEERS)] : [1, 3];
  const dir = mkdtempSync(join(tmpdir(), 'ledger-sync-bench-'));
  const peers: SpawnedNode[] = [];
  try {
    const source = join(dir, 'a');
    const base = await ingestSource(log, source, n);
    // The other peers hold copies of the same ledger (each makes its own peer id at first start).
    const t = performance.now();
    for (const name of ['b', 'c']) cpSync(source, join(dir, name), { recursive: true });
    for (const name of ['a', 'b', 'c'])
      peers.push(await spawnNode(['--data-dir', join(dir, name), ...LOOPBACK_P2P_ARGS, ...QUIET_NODE_ARGS]));
    const addrs = await Promise.all(
      peers.map(async (p) => (await json<{ listen_addrs: string[] }>(`${p.url}/node`)).listen_addrs[0]!),
    );
    log(
      `peers: 3 nodes holding ${base.blocks} blocks up in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );

    const figures: Record<string, number> = {
      ingest_baseline_blocks_per_s: base.rate,
      ingest_baseline_node_cpu_us_per_block: base.cpuUs,
      ingest_loop_delay_p99_ms: base.lag.p99_ms,
      ingest_loop_delay_max_ms: base.lag.max_ms,
    };
    for (const k of cases) {
      const r = await joinNetwork(
        log,
        join(dir, `join${k}`),
        join(source, 'genesis'),
        addrs.slice(0, k),
        base.blocks,
        `join-${k}-peer`,
      );
      log(
        `catch-up, ${k} peer${k > 1 ? 's' : ''}: ${base.blocks} blocks held in ${r.appliedSeconds.toFixed(1)} s, all final in ${r.seconds.toFixed(1)} s` +
          ` (process start included): ${fmtRate(r.rate)} blocks, ${ratio(r.rate, base.rate)} of HTTP ingest (target 0.50);` +
          ` joiner CPU ${r.cpuUs.toFixed(0)} µs per block (all threads, start-up included);` +
          ` its event-loop delay p99 ${r.lag.p99_ms.toFixed(1)} ms, max ${r.lag.max_ms.toFixed(0)} ms` +
          // The whole device's writes meanwhile (the peers write little while they serve).
          (r.diskKb === undefined ? '' : `; disk written ${r.diskKb.toFixed(1)} KB per block`),
      );
      if (r.diskKb !== undefined) figures[`sync_${k}peer_disk_kb_per_block`] = r.diskKb;
      figures[`sync_${k}peer_loop_p99_ms`] = r.lag.p99_ms;
      figures[`sync_${k}peer_seconds`] = r.seconds;
      figures[`sync_${k}peer_blocks_per_s`] = r.rate;
      figures[`sync_${k}peer_ratio`] = r.rate / base.rate;
      figures[`sync_${k}peer_cpu_us_per_block`] = r.cpuUs;
    }
    return figures;
  } finally {
    await Promise.all(peers.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
