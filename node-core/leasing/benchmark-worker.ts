/**
 * The benchmark worker thread: runs the work given in workerData once, posting progress, then the
 * result. Cancelling is terminating the thread (its loops never look at messages).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { benchmarkUnits, type BenchmarkWork, computeWorkProof } from './benchmark-work.ts';

export type BenchmarkWorkerMessage =
  | { readonly type: 'progress'; readonly fraction: number }
  | { readonly type: 'done'; readonly work_proof: string; readonly elapsed_seconds: number };

if (parentPort === null) throw new Error('benchmark-worker must run in a worker thread');
const port = parentPort;
const work = workerData as BenchmarkWork;
const total = benchmarkUnits(work);

const started = performance.now();
const workProof = computeWorkProof(work, (done) => {
  // The last step's progress is not sent: 'done' follows at once and reports 1.
  if (done < total)
    port.postMessage({ type: 'progress', fraction: done / total } satisfies BenchmarkWorkerMessage);
});
const elapsed = (performance.now() - started) / 1000;
port.postMessage({
  type: 'done',
  work_proof: workProof,
  elapsed_seconds: elapsed,
} satisfies BenchmarkWorkerMessage);
