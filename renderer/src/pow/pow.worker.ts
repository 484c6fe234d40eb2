import { hexToBytes } from '../../../node-core/protocol/hex.ts';
import { isPowAbortedError } from '../../../node-core/protocol/pow.ts';
import { loadPowKernel, solvePow } from '../../../node-core/protocol/pow-wasm.ts';
import type { PowWorkerRequest, PowWorkerResponse } from './protocol.ts';

/**
 * The browser's proof-of-work thread: the WebAssembly kernel (SIMD where the engine has it), searched
 * in chunks so a cancel message is seen within milliseconds. Progress is posted at most every 100 ms.
 */
interface WorkerScope {
  onmessage: ((ev: MessageEvent<PowWorkerRequest>) => void) | null;
  postMessage(msg: PowWorkerResponse): void;
}
const scope = globalThis as unknown as WorkerScope;

const kernel = loadPowKernel();
kernel.then(
  (k) => scope.postMessage({ type: 'ready', simd: k.simd }),
  () => {},
);
const jobs = new Map<number, AbortController>();
const PROGRESS_MS = 100;

async function solve(req: Extract<PowWorkerRequest, { type: 'solve' }>): Promise<void> {
  const ctl = new AbortController();
  jobs.set(req.id, ctl);
  let last = 0;
  try {
    const k = await kernel;
    const found = await solvePow(k, hexToBytes(req.target, 32, 'target'), BigInt(req.difficulty), {
      startNonce: BigInt(req.startNonce),
      signal: ctl.signal,
      onProgress: (attempts) => {
        const now = performance.now();
        if (now - last < PROGRESS_MS) return;
        last = now;
        scope.postMessage({ type: 'progress', id: req.id, attempts: attempts.toString() });
      },
    });
    scope.postMessage({
      type: 'done',
      id: req.id,
      nonce: found.nonce.toString(),
      attempts: found.attempts.toString(),
    });
  } catch (e) {
    scope.postMessage({
      type: 'failed',
      id: req.id,
      aborted: isPowAbortedError(e),
      message: e instanceof Error ? e.message : String(e),
    });
  } finally {
    jobs.delete(req.id);
  }
}

scope.onmessage = (ev) => {
  const req = ev.data;
  if (req.type === 'solve') void solve(req);
  else jobs.get(req.id)?.abort();
};
