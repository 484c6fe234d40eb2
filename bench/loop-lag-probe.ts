/**
 * Preloaded into a node the bench spawns (NODE_OPTIONS=--import), this measures the event-loop delay
 * of the node's main thread (issue #18 target 6: the node shares its thread with Electron's main
 * process, whose stalls freeze the window) without any change to the node. Every 500 ms it writes
 * the delay percentiles since the last reset to BENCH_LAG_FILE, without blocking (a synchronous
 * write every 200 ms showed up in the node's profile); SIGUSR2 resets them (the bench sends it when
 * the phase it measures starts).
 *
 * Main thread only: NODE_OPTIONS preloads run in every worker thread too (the verify workers), and
 * a worker's probe wrote the same file, so the figure read could be a verify worker's loop (blocked
 * by design while it checks a batch) rather than the node's. It was, in the catch-up runs: a worker
 * wrote last, and a p99 of 84 ms was reported while the main thread's own was 31 ms.
 *
 * The histogram holds the time between two firings of its timer, which includes the timer's own
 * interval (`resolution`): an idle loop records 10 ms, a loop held 5 ms records about 15. The
 * figures written are the delay past that interval, how late the timer fired. Until 2026-11-28 the
 * raw values were written, and every event-loop figure before then is 10 ms too high.
 *
 * BENCH_LAG_STALLS=FILE also appends a line for each time the timer fired STALL_MS or more late:
 * the gap's start and end in CLOCK_MONOTONIC µs, the clock of V8's CPU profiles, so a profile of the
 * same node shows what held the thread then (bench/sync.ts BENCH_SYNC_PROF).
 */
import { appendFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_LAG_FILE;
if (file && isMainThread) {
  const RESOLUTION_MS = 10;
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  const late = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  h.enable();
  process.on('SIGUSR2', () => h.reset());
  let writing = false;
  const write = () => {
    if (writing) return;
    writing = true;
    const body = JSON.stringify({
      p50_ms: late(h.percentile(50)),
      p99_ms: late(h.percentile(99)),
      max_ms: late(h.max),
      samples: h.count,
    });
    void writeFile(file, body)
      .catch(() => {})
      .finally(() => (writing = false));
  };
  setInterval(write, 500).unref();
  const stalls = process.env.BENCH_LAG_STALLS;
  if (stalls) {
    const STALL_MS = 100;
    let last = process.hrtime.bigint();
    setInterval(() => {
      const now = process.hrtime.bigint();
      if (now - last > BigInt((RESOLUTION_MS + STALL_MS) * 1e6))
        appendFileSync(stalls, `${last / 1000n} ${now / 1000n} ${Number(now - last) / 1e6}\n`);
      last = now;
    }, RESOLUTION_MS).unref();
  }
}
