import { readdirSync, readFileSync, statSync } from 'node:fs';

/**
 * Helpers of the ingest benchmark that look at the node process: its start-up work, and where its
 * CPU goes, thread by thread (from /proc, so no profiler slows the run).
 */

/** The node's `GET /node` answer, as far as the benches read it. */
export async function nodeInfo(url: string): Promise<{ network_id: string; representatives: number }> {
  return (await (await fetch(`${url}/node`)).json()) as { network_id: string; representatives: number };
}

/**
 * Waits until the node's own performance certificate is made (its benchmark ran: `GET /node`
 * `benchmark.state` done or failed). A fresh node starts it just after start; it costs about 3.5 s
 * of CPU in a worker thread, which fell inside the ingest run and was counted as ~220 µs per block
 * of a 16,000-block run. It is start-up work, not ingest. Returns the seconds waited.
 */
export async function waitForStartupWork(url: string, timeoutMs = 120_000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    const info = (await (await fetch(`${url}/node`)).json()) as { benchmark?: { state?: string } };
    const state = info.benchmark?.state;
    if (state === undefined || state === 'done' || state === 'failed') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return (performance.now() - started) / 1000;
}

/** A thread's CPU so far and when it started (clock ticks since boot). */
export interface ThreadCpu {
  name: string;
  seconds: number;
  startTicks: number;
}

/** CPU seconds (user + system) of each thread of a process: thread id -> {name, seconds, start}. */
export function threadCpu(pid: number): Map<string, ThreadCpu> {
  const out = new Map<string, ThreadCpu>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // Fields after the command name (which may contain spaces): utime and stime are fields 14 and
    // 15, starttime field 22.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(tid, {
      name,
      seconds: (Number(f[11]) + Number(f[12])) / 100, // USER_HZ is 100 on Linux
      startTicks: Number(f[19]),
    });
  }
  return out;
}

/**
 * Bytes written to the disk that holds `path` so far (/sys/dev/block/M:m/stat, sectors written), the
 * whole device's: on a quiet machine, what the node under test wrote. A process's own count
 * (/proc/PID/io `write_bytes`) is no measure here: the kernel counts a whole page-cache folio (up to
 * 2 MB with ext4's large folios) when a 4 KB write turns it dirty. Undefined where there is no such file.
 */
function diskWrittenBytes(path: string): number | undefined {
  try {
    const dev = statSync(path).dev;
    const major = Math.floor(dev / 256) & 0xfff;
    const minor = (dev & 0xff) | (Math.floor(dev / 4096) & ~0xff);
    const f = readFileSync(`/sys/dev/block/${major}:${minor}/stat`, 'utf8').trim().split(/\s+/);
    return Number(f[6]) * 512;
  } catch {
    return undefined;
  }
}

/**
 * Starts counting the writes to the disk that holds `path`; the function returned gives the KB
 * written since, per block of `blocks` (undefined where the device's counter cannot be read).
 */
export function diskMeter(path: string): (blocks: number) => number | undefined {
  const before = diskWrittenBytes(path);
  return (blocks) => {
    const now = diskWrittenBytes(path);
    return before === undefined || now === undefined ? undefined : (now - before) / blocks / 1024;
  };
}

export interface CpuSplit {
  /** The node's JavaScript thread: HTTP, JSON, hashing, proof of work, ledger rules, LMDB calls. */
  main: number;
  /** libuv's pool: LMDB's commits and syncs (and file I/O). */
  pool: number;
  /** Threads started with the process: V8's platform (GC and compiler helpers). */
  v8: number;
  /** Threads started later: the worker threads (signature verification). */
  workers: number;
  total: number;
}

/**
 * A thread started this many ticks (10 ms each) after the main one or later is a worker thread.
 * V8's platform threads start with the process; the node's first worker starts after its modules
 * have loaded, 0.2 s or more later. Every thread but main, the pool and the workers is named "node"
 * alike, so the start time is what tells them apart.
 */
const WORKER_START_TICKS = 5;

/** CPU µs per block by kind of thread between two `threadCpu` readings. */
export function cpuSplit(
  pid: number,
  before: Map<string, ThreadCpu>,
  after: Map<string, ThreadCpu>,
  blocks: number,
): CpuSplit {
  const s = { main: 0, pool: 0, v8: 0, workers: 0, total: 0 };
  const mainStart = after.get(String(pid))?.startTicks ?? 0;
  for (const [tid, t] of after) {
    const us = ((t.seconds - (before.get(tid)?.seconds ?? 0)) / blocks) * 1e6;
    if (tid === String(pid)) s.main += us;
    else if (t.name.startsWith('libuv-worker')) s.pool += us;
    else if (t.startTicks - mainStart >= WORKER_START_TICKS) s.workers += us;
    else s.v8 += us;
    s.total += us;
  }
  return s;
}
