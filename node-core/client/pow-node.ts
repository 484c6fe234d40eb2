import { PowSolver } from '../fastpath/pow-solver.ts';
import { expectedAttempts } from '../protocol/pow.ts';
import type { PowEngine, PowEngineOptions } from './pow-types.ts';

export type { PowEngine, PowEngineOptions, PowProgressInfo } from './pow-types.ts';

/**
 * Proof of work on Node: the node's own multi-core solver (one worker thread per core, WebAssembly
 * kernel in each). Workers start on the first solve, so a script that never writes spawns none.
 */
export function createPowEngine(opts: PowEngineOptions = {}): PowEngine {
  const solver = new PowSolver(opts.threads === undefined ? {} : { threads: opts.threads });
  return {
    kind: 'node-workers',
    async solve(target, difficulty, signal) {
      await solver.start();
      const expected = expectedAttempts(difficulty);
      const onProgress = opts.onProgress;
      const r = await solver.solve(target, difficulty, {
        ...(signal ? { signal } : {}),
        ...(onProgress ? { onProgress: (attempts: bigint) => onProgress({ attempts, expected }) } : {}),
      });
      return r.nonce;
    },
    close: () => solver.stop(),
  };
}
