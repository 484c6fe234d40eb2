/**
 * Messages between PowSolver (main thread) and its pow-worker threads.
 *
 * A job's shared control buffer (SharedArrayBuffer) lets the main thread and the workers talk
 * without messages while a search runs: a worker's search loop is synchronous and never reads its
 * message port until the job ends.
 *   Int32   at 0:                  stop flag (STOP_RUNNING, STOP_FOUND or STOP_CANCELLED)
 *   BigUint64 at 8 + 8 * worker:   nonces tried so far by that worker (for progress)
 */

export const STOP_RUNNING = 0;
/** Set by the worker that found a solution (compare-exchange: exactly one winner). */
export const STOP_FOUND = 1;
/** Set by the main thread on abort or stop(). */
export const STOP_CANCELLED = 2;

export const CONTROL_COUNTERS_OFFSET = 8;
export const controlBytes = (workers: number): number => CONTROL_COUNTERS_OFFSET + 8 * workers;

export interface PowJobMessage {
  readonly type: 'solve';
  readonly job: number;
  /** Index of the receiving worker: its counter slot in `control`. */
  readonly worker: number;
  readonly workers: number;
  readonly control: SharedArrayBuffer;
  readonly target: Uint8Array;
  readonly startNonce: bigint;
  readonly difficulty: bigint;
  readonly chunk: number;
}

export type ToWorker = PowJobMessage;

export type FromWorker =
  | { readonly type: 'ready'; readonly simd: boolean }
  /** The job ended for this worker; `nonce` is set only for the one worker that won. */
  | { readonly type: 'done'; readonly job: number; readonly nonce: bigint | null; readonly attempts: bigint };
