import { expectedAttempts } from '../protocol/pow.ts';
import { loadPowKernel, solvePow } from '../protocol/pow-wasm.ts';
import type { PowEngine, PowEngineOptions } from './pow-types.ts';

export type { PowEngine, PowEngineOptions, PowProgressInfo } from './pow-types.ts';

/**
 * Proof of work in a browser (and any engine without worker threads): the WebAssembly kernel (SIMD
 * where supported) on the calling thread, yielding to the event loop between chunks so the page
 * stays responsive. Run it in a Web Worker to keep the main thread free during long searches.
 */
export function createPowEngine(opts: PowEngineOptions = {}): PowEngine {
  return {
    kind: 'wasm',
    async solve(target, difficulty, signal) {
      const kernel = await loadPowKernel();
      const expected = expectedAttempts(difficulty);
      const onProgress = opts.onProgress;
      const r = await solvePow(kernel, target, difficulty, {
        ...(signal ? { signal } : {}),
        ...(onProgress ? { onProgress: (attempts: bigint) => onProgress({ attempts, expected }) } : {}),
      });
      return r.nonce;
    },
    close: async () => {},
  };
}
