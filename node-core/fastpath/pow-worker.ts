/**
 * A PowSolver worker thread: loads the kernel once, then runs search jobs from its own start
 * nonce upwards, chunk by chunk, until it finds a solution or the job's stop flag is set.
 */
import { parentPort } from 'node:worker_threads';
import { loadPowKernelSync } from '../protocol/pow-wasm.ts';
import { U64_MAX } from '../protocol/int.ts';
import {
  CONTROL_COUNTERS_OFFSET,
  STOP_FOUND,
  STOP_RUNNING,
  type FromWorker,
  type PowJobMessage,
  type ToWorker,
} from './pow-worker-protocol.ts';

if (parentPort === null) throw new Error('pow-worker must run in a worker thread');
const port = parentPort;
const kernel = loadPowKernelSync();

function post(msg: FromWorker): void {
  port.postMessage(msg);
}

function run(job: PowJobMessage): void {
  const stop = new Int32Array(job.control, 0, 1);
  const counters = new BigUint64Array(job.control, CONTROL_COUNTERS_OFFSET, job.workers);
  const step = BigInt(job.chunk);
  let nonce = job.startNonce;
  let attempts = 0n;
  while (Atomics.load(stop, 0) === STOP_RUNNING) {
    const found = kernel.search(job.target, nonce, job.chunk, job.difficulty);
    if (found !== null) {
      attempts += ((found - nonce) & U64_MAX) + 1n;
      Atomics.store(counters, job.worker, attempts);
      const won = Atomics.compareExchange(stop, 0, STOP_RUNNING, STOP_FOUND) === STOP_RUNNING;
      post({ type: 'done', job: job.job, nonce: won ? found : null, attempts });
      return;
    }
    attempts += step;
    nonce = (nonce + step) & U64_MAX;
    Atomics.store(counters, job.worker, attempts);
  }
  post({ type: 'done', job: job.job, nonce: null, attempts });
}

port.on('message', (msg: ToWorker) => {
  if (msg.type === 'solve') run(msg);
});
post({ type: 'ready', simd: kernel.simd });
