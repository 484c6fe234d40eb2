import { Worker } from 'node:worker_threads';
import type { Workload } from '../protocol/certificate.ts';
import { type BenchmarkWork, checkBenchmarkWork } from './benchmark-work.ts';
import type { BenchmarkWorkerMessage } from './benchmark-worker.ts';

/**
 * Runs the performance benchmark (reference-behavior.md 4.7) in a worker thread: minutes of CPU
 * for the reference workload, which must never block the event loop. One worker per run; stopping
 * a run terminates its worker.
 */
export type { BenchmarkWork } from './benchmark-work.ts';

export interface BenchmarkResult {
  /** 64 hex. */
  work_proof: string;
  /** Wall time of the work itself, measured in the worker (thread start-up excluded). */
  elapsed_seconds: number;
}

export interface BenchmarkOptions {
  /** Called with the fraction done, in [0, 1]; the last call is with 1, just before the result. */
  onProgress?: (fraction: number) => void;
  /** Aborting stops the run like stop(). */
  signal?: AbortSignal;
}

export interface BenchmarkRun {
  readonly result: Promise<BenchmarkResult>;
  /** Terminates the worker; `result` rejects with ERR_BENCHMARK_CANCELLED unless already settled. */
  stop(): Promise<void>;
}

export type BenchmarkErrorCode = 'ERR_BENCHMARK_CANCELLED' | 'ERR_BENCHMARK_WORKER';

export class BenchmarkError extends Error {
  readonly code: BenchmarkErrorCode;
  constructor(code: BenchmarkErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BenchmarkError';
    this.code = code;
  }
}

/** The worker entry next to this module: .ts when run from source, .js when built. */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './benchmark-worker.ts' : './benchmark-worker.js',
  import.meta.url,
);

/** The work of a workload for one seed. */
export function benchmarkWorkFor(workload: Workload, seed: Uint8Array): BenchmarkWork {
  return {
    seed,
    iterations: Number(workload.iterations),
    tableEntries: workload.table_entries,
    reads: workload.reads,
  };
}

let liveWorkers = 0;

/** Benchmark worker threads of this process that have not exited yet (a stopped node leaves none). */
export function liveBenchmarkWorkers(): number {
  return liveWorkers;
}

export function startBenchmark(work: BenchmarkWork, opts: BenchmarkOptions = {}): BenchmarkRun {
  checkBenchmarkWork(work);
  let settle: { resolve: (r: BenchmarkResult) => void; reject: (e: Error) => void } | undefined;
  const result = new Promise<BenchmarkResult>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Whoever stops a run may not wait for its result: a cancelled run is no unhandled rejection.
  result.catch(() => {});
  const finish = (outcome: BenchmarkResult | Error) => {
    const s = settle;
    if (s === undefined) return;
    settle = undefined;
    opts.signal?.removeEventListener('abort', onAbort);
    if (outcome instanceof Error) s.reject(outcome);
    else s.resolve(outcome);
  };
  const cancelled = () => new BenchmarkError('ERR_BENCHMARK_CANCELLED', 'benchmark cancelled');

  const worker = new Worker(WORKER_URL, { workerData: { ...work, seed: new Uint8Array(work.seed) } });
  liveWorkers += 1;
  worker.on('message', (msg: BenchmarkWorkerMessage) => {
    if (msg.type === 'progress') {
      if (settle !== undefined) opts.onProgress?.(msg.fraction);
      return;
    }
    if (settle === undefined) return;
    opts.onProgress?.(1);
    finish({ work_proof: msg.work_proof, elapsed_seconds: msg.elapsed_seconds });
  });
  worker.on('error', (e) =>
    finish(new BenchmarkError('ERR_BENCHMARK_WORKER', 'benchmark worker failed', { cause: e })),
  );
  worker.on('exit', (code) => {
    liveWorkers -= 1;
    finish(new BenchmarkError('ERR_BENCHMARK_WORKER', `benchmark worker exited with code ${code}`));
  });

  const stop = async () => {
    finish(cancelled());
    await worker.terminate();
  };
  const onAbort = () => void stop();
  if (opts.signal?.aborted) void stop();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  return { result, stop };
}
