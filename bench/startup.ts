import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type Block, ZERO_HASH } from '../node-core/protocol/block.ts';
import { LedgerNode } from '../node-core/node.ts';
import { fastKey, seal } from './node.ts';
import { spawnNode } from './spawn-node.ts';

/**
 * Start-up and memory benchmarks: time from spawning `ledger-node` to the first 200 from /health on a
 * store of 100,000 blocks (one claim on each of 100,000 accounts), and the resident set of that node
 * after it served some reads. `npm run bench -- startup` runs these alone; the `node` suite runs them
 * after ingest. BENCH_STARTUP_STORE=DIR keeps the filled store in DIR and reuses it on later runs
 * (filling takes a minute); BENCH_STARTUP_PROF=DIR writes a CPU profile of each start there;
 * BENCH_STARTUP_BEFORE=DIR (another checkout, e.g. a `git worktree` of an older commit with
 * node_modules linked) measures that version's command on the same store, its runs alternating
 * with this version's.
 */

/** Fills a data directory with `n` accounts, one claim each, through the ledger itself (in-process). */
export async function fillStore(dir: string, n: number, log: (l: string) => void): Promise<void> {
  const node = new LedgerNode({
    dataDir: dir,
    apiPort: 0,
    powDifficulty: 0n,
    rateLimit: false,
    verifyThreads: 1,
    p2p: false,
  });
  await node.start();
  try {
    const networkId = node.statechain.networkId;
    const t0 = node.now();
    const start = performance.now();
    const BATCH = 2000;
    for (let done = 0; done < n; done += BATCH) {
      const blocks: Block[] = [];
      for (let i = 0; i < Math.min(BATCH, n - done); i++) {
        const key = fastKey();
        blocks.push(
          seal(
            {
              type: 'claim',
              account: key.address,
              previous: ZERO_HASH,
              balance: 1_000_000n,
              timestamp: t0,
              asset: 'XE',
              amount: 1_000_000n,
              pub_key: key.pub,
            },
            key,
            networkId,
            0n,
          ),
        );
      }
      await Promise.all(blocks.map((b) => node.ledger.submit(b, { live: false })));
    }
    await node.consensus.idle();
    log(
      `startup: filled the store with ${n} accounts and blocks in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
  } finally {
    await node.stop();
  }
  // The node's stop rewrites a store this size compacted (Store.compactOnClose), as a user's node
  // does when stopped: the figures below are of a node started again after that.
  const c = node.store.compaction;
  log(
    c?.compacted
      ? `startup: the fill's stop compacted the store: ${(c.bytesBefore / 1048576).toFixed(1)} -> ${(c.bytesAfter / 1048576).toFixed(1)} MB in ${c.ms.toFixed(0)} ms`
      : `startup: the fill's stop left the store as it was (${c?.reason ?? 'no store'})`,
  );
}

export interface Memory {
  rss: number;
  anon: number;
  file: number;
}

/** Where a process's resident set lies, in MB, from its per-mapping /proc/<pid>/smaps. */
export interface MemorySplit {
  /** Pages of the LMDB data file (`*.lmdb`, `data.mdb`) mapped in. */
  store: number;
  /** Pages of the node executable mapped in (its code, read-only data, symbol tables). */
  binary: number;
  /** Other files: shared libraries, native addons. */
  otherFiles: number;
  /** glibc malloc's main heap ([heap]; with MALLOC_ARENA_MAX=1 every thread's allocations). */
  malloc: number;
  /** Other anonymous memory: V8's heap pages (256 KB mappings), malloc's mmap'd chunks, stacks. */
  otherAnon: number;
}

/** The resident set of `pid` split by mapping (see MemorySplit). */
export function memorySplitOf(pid: number): MemorySplit {
  const split: MemorySplit = { store: 0, binary: 0, otherFiles: 0, malloc: 0, otherAnon: 0 };
  const exe = realpathSync(`/proc/${pid}/exe`);
  let part: keyof MemorySplit = 'otherAnon';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[1]!;
      part =
        name === '[heap]'
          ? 'malloc'
          : name === '' || name.startsWith('[')
            ? 'otherAnon'
            : name === exe
              ? 'binary'
              : /\.lmdb$|data\.mdb$/.test(name)
                ? 'store'
                : 'otherFiles';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) split[part] += Number(rss[1]) / 1024;
  }
  return split;
}

const fmtSplit = (s: MemorySplit) =>
  `store file ${s.store.toFixed(0)} + node binary ${s.binary.toFixed(0)} + other files ${s.otherFiles.toFixed(0)}; ` +
  `malloc heap ${s.malloc.toFixed(0)} + other anonymous (V8 heap, stacks) ${s.otherAnon.toFixed(0)}`;

/** Resident set of a process in MB, with its anonymous and file-backed parts. */
export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') };
}

/** A port free on loopback now (the node is told it, so /health can be polled before the ready line). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A data directory holding `n` one-claim accounts: BENCH_STARTUP_STORE's if filled already. */
async function filledStore(dir: string, n: number, log: (l: string) => void): Promise<string> {
  const kept = process.env.BENCH_STARTUP_STORE;
  const data = kept ?? join(dir, 'big');
  if (kept && existsSync(join(kept, 'filled'))) {
    log(`startup: reusing the store in ${kept}`);
    return data;
  }
  await fillStore(data, n, log);
  if (kept) writeFileSync(join(kept, 'filled'), `${n}\n`);
  return data;
}

/** Starts measured per version (BENCH_STARTUP_RUNS, default 5): A/B comparisons want more. */
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);

/** CPU milliseconds (user + system, all threads) used so far by the process listening on `port`. */
function cpuMsOfPort(port: number): number {
  // The node is the child whose command line names the port; found through /proc, as its pid is
  // known only once its ready line is read.
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes('ledger-node.js') || !cmd.includes(`--api-port\0${port}\0`)) continue;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on Linux
  }
  return Number.NaN;
}

/** Spawn to first answer of a bare node:http server in the same Node: the floor of any start-up here. */
async function bareServerStart(): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const port = await freePort();
    const started = performance.now();
    const child = spawn(
      process.execPath,
      ['-e', `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`],
      { stdio: 'ignore' },
    );
    for (;;) {
      const r = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      if (r?.status === 200) break;
      await new Promise((res) => setTimeout(res, 5));
    }
    times.push(performance.now() - started);
    child.kill();
    await new Promise((res) => child.once('exit', res));
  }
  return [...times].sort((a, b) => a - b)[times.length >> 1]!;
}

export async function benchStartup(log: (l: string) => void, dir: string): Promise<Record<string, number>> {
  const N = 100_000;
  const data = await filledStore(dir, N, log);
  const prof = process.env.BENCH_STARTUP_PROF;
  const bare = await bareServerStart();
  const before = process.env.BENCH_STARTUP_BEFORE;
  const runs = (bin: string | undefined) => ({
    bin,
    times: [] as number[],
    mems: [] as (Memory & { beforeSupply: Memory; split: MemorySplit })[],
    readies: [] as number[],
    cpus: [] as number[],
  });
  const now = runs(undefined);
  const old = before ? runs(join(before, 'bin', 'ledger-node.js')) : undefined;
  for (let run = 0; run < RUNS; run++) {
    // Runs of this version and of BENCH_STARTUP_BEFORE's alternate, so both see the same load.
    for (const r of old ? [now, old] : [now]) {
      const port = await freePort();
      const started = performance.now();
      // The default configuration (peer-to-peer networking on, no peers), as users run it. /health
      // answers once the API listens, before networking has started and the ready line is printed.
      const spawned = spawnNode(
        ['--data-dir', data, '--api-port', String(port), '--p2p-port', '0', '--log-level', 'warn'],
        {
          ...(prof ? { env: { ...process.env, NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${prof}` } } : {}),
          ...(r.bin ? { bin: r.bin } : {}),
        },
      );
      // Awaited below; a start that fails also ends the polling.
      let failed = false;
      spawned.catch(() => (failed = true));
      let cpuAtHealth = 0;
      for (;;) {
        const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
        if (res?.status === 200) {
          cpuAtHealth = cpuMsOfPort(port);
          break;
        }
        if (failed) break;
        await new Promise((res) => setTimeout(res, 5));
      }
      r.times.push(performance.now() - started);
      const node = await spawned;
      r.cpus.push(cpuAtHealth);
      r.readies.push(node.readyMs);
      // Touch the data a little, as a running node would, then read the resident set.
      for (let i = 0; i < 20; i++)
        await fetch(`${node.url}/accounts?offset=${i * 1000}&limit=1000`).then((x) => x.arrayBuffer());
      const beforeSupply = memoryOf(node.proc.pid!);
      await fetch(`${node.url}/supply`).then((x) => x.arrayBuffer());
      r.mems.push({ ...memoryOf(node.proc.pid!), beforeSupply, split: memorySplitOf(node.proc.pid!) });
      await node.stop();
    }
  }
  const { times, mems, readies, cpus } = now;
  const mid = <T>(xs: T[], by: (x: T) => number): T => [...xs].sort((a, b) => by(a) - by(b))[xs.length >> 1]!;
  const best = Math.min(...times);
  const median = mid(times, (x) => x);
  const readyMedian = mid(readies, (x) => x);
  const cpuMedian = mid(cpus, (x) => x);
  const mem = mid(mems, (m) => m.rss);
  log(
    `baseline: a bare Node HTTP server, spawn to first answer: median ${(bare / 1000).toFixed(2)} s of ${RUNS} runs`,
  );
  log(
    `startup to /health with ${N} blocks: median ${(median / 1000).toFixed(2)} s of ${RUNS} runs, best ${(best / 1000).toFixed(2)} s ` +
      `(${(median / bare).toFixed(1)}x the bare server) ` +
      `(process spawn included; target < 0.6 s), the node's CPU by then ${cpuMedian.toFixed(0)} ms (all threads; machine load ${loadavg()[0]!.toFixed(1)}); ` +
      `networking up and the ready line printed: median ${(readyMedian / 1000).toFixed(2)} s`,
  );
  log(
    `resident memory with ${N} accounts: median ${mem.rss.toFixed(0)} MB of ${RUNS} runs (${mems.map((m) => m.rss.toFixed(0)).join(', ')}); ` +
      `${mem.anon.toFixed(0)} MB anonymous + ${mem.file.toFixed(0)} MB file pages (the node binary's and the store's mapped pages) ` +
      `after reading 20,000 accounts and /supply (which reads every account); before /supply ${mem.beforeSupply.rss.toFixed(0)} MB ` +
      `(${mem.beforeSupply.anon.toFixed(0)} + ${mem.beforeSupply.file.toFixed(0)}) (target < 200 MB)`,
  );
  log(`resident memory with ${N} accounts, by mapping (same run): ${fmtSplit(mem.split)} MB`);
  if (old) {
    const oldMedian = mid(old.times, (x) => x);
    const oldMem = mid(old.mems, (m) => m.rss);
    log(
      `before (${before}, alternating with this version's runs): /health median ${(oldMedian / 1000).toFixed(2)} s ` +
        `(this version ${(median / oldMedian).toFixed(2)}x of it), its CPU by then ${mid(old.cpus, (x) => x).toFixed(0)} ms, ` +
        `ready line ${(mid(old.readies, (x) => x) / 1000).toFixed(2)} s; resident ${oldMem.rss.toFixed(0)} MB ` +
        `(${oldMem.anon.toFixed(0)} anonymous + ${oldMem.file.toFixed(0)} file; before /supply ${oldMem.beforeSupply.rss.toFixed(0)})`,
    );
  }
  return {
    startup_bare_server_s: bare / 1000,
    startup_100k_median_s: median / 1000,
    startup_ready_line_100k_median_s: readyMedian / 1000,
    startup_cpu_to_health_ms: cpuMedian,
    rss_100k_accounts_mb: mem.rss,
    rss_anon_100k_accounts_mb: mem.anon,
    rss_file_100k_accounts_mb: mem.file,
    rss_store_file_100k_accounts_mb: mem.split.store,
    rss_node_binary_100k_accounts_mb: mem.split.binary,
    rss_malloc_heap_100k_accounts_mb: mem.split.malloc,
    rss_other_anon_100k_accounts_mb: mem.split.otherAnon,
  };
}

/** `npm run bench -- startup`: the start-up and memory figures alone. */
export default async function benchStartupSuite(
  log: (line: string) => void,
): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
  try {
    return await benchStartup(log, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
