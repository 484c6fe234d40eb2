import type { PowSolveOptions, PowSolveResult } from '../node-core/fastpath/pow-solver.ts';
import { hexToBytes } from '../node-core/protocol/hex.ts';
import { expectedAttempts, parseDifficulty, POW_TARGET_BYTES } from '../node-core/protocol/pow.ts';
import { toWireError } from './channels.ts';
import { type FromPowProcess, isToPowProcess } from './pow-protocol.ts';

/** What PowService needs of node-core's PowSolver. */
export interface PowSolverLike {
  start(): Promise<void>;
  solve(target: Uint8Array, difficulty: bigint, opts?: PowSolveOptions): Promise<PowSolveResult>;
  stop(): Promise<void>;
}

/**
 * The proof-of-work utility process's logic, apart from its Electron wiring (pow-utility.ts): takes
 * solve and cancel messages, runs them on the multi-threaded PowSolver (started on first use and
 * kept warm), and reports progress, the nonce or the failure. A cancel aborts the solve's signal;
 * the solver then rejects with its AbortError, reported as a failure named 'AbortError'.
 */
export class PowService {
  readonly #solver: PowSolverLike;
  readonly #post: (m: FromPowProcess) => void;
  readonly #jobs = new Map<number, AbortController>();

  constructor(solver: PowSolverLike, post: (m: FromPowProcess) => void) {
    this.#solver = solver;
    this.#post = post;
  }

  /** Number of jobs being solved or waiting. */
  get active(): number {
    return this.#jobs.size;
  }

  /** Handles one message from the host; anything malformed is ignored. */
  handle(message: unknown): void {
    if (!isToPowProcess(message)) return;
    if (message.type === 'cancel') {
      this.#jobs.get(message.id)?.abort();
      return;
    }
    void this.#solve(message.id, message.target, message.difficulty);
  }

  async #solve(id: number, targetHex: string, difficultyHex: string): Promise<void> {
    if (this.#jobs.has(id)) return; // a duplicate delivery; the first one answers
    const controller = new AbortController();
    this.#jobs.set(id, controller);
    try {
      const target = hexToBytes(targetHex, POW_TARGET_BYTES, 'target');
      const difficulty = parseDifficulty(difficultyHex);
      const expected = expectedAttempts(difficulty);
      await this.#solver.start();
      const { nonce } = await this.#solver.solve(target, difficulty, {
        signal: controller.signal,
        onProgress: (attempts) =>
          this.#post({ type: 'progress', id, attempts: attempts.toString(), expected }),
      });
      this.#post({ type: 'solved', id, nonce: nonce.toString() });
    } catch (e) {
      this.#post({ type: 'failed', id, error: toWireError(e) });
    } finally {
      this.#jobs.delete(id);
    }
  }

  /** Cancels everything and stops the solver's workers. */
  async stop(): Promise<void> {
    for (const c of this.#jobs.values()) c.abort();
    await this.#solver.stop();
  }
}
