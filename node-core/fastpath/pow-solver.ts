/**
 * PowSolver: multi-threaded proof-of-work search for the node (Node only).
 *
 * One worker thread per core, each with its own WebAssembly kernel loaded once at start() and kept
 * alive between solves. A solve gives every worker a disjoint slice of the nonce space (start
 * points 2^64 / threads apart from a random origin); the first worker to find a solution claims it
 * through a shared stop flag, which also stops the others within one chunk (~2 ms). Solves run one at a time, in call order: all cores go to the current one.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ProtocolError } from '../protocol/errors.ts';
import { checkU64, PowAbortedError, POW_TARGET_BYTES, randomNonce } from '../protocol/pow.ts';
import { MAX_SEARCH_COUNT } from '../protocol/pow-wasm.ts';
import {
  CONTROL_COUNTERS_OFFSET,
  controlBytes,
  STOP_CANCELLED,
  type FromWorker,
  type PowJobMessage,
} from './pow-worker-protocol.ts';

export interface PowSolverOptions {
  /** Worker threads (default: os.availableParallelism()). */
  threads?: number;
  /** Nonces a worker searches between two looks at the stop flag (default DEFAULT_SOLVER_CHUNK). */
  chunk?: number;
  /** How often onProgress is called during a solve, in ms (default 100). */
  progressIntervalMs?: number;
}

export interface PowSolveOptions {
  /** Aborting rejects the solve with PowAbortedError (code 'ERR_POW_ABORTED'). */
  signal?: AbortSignal;
  /** Called periodically, and once at the end, with the total nonces tried by all workers. */
  onProgress?: (attempts: bigint) => void;
  /** Origin of the search (random by default). */
  startNonce?: bigint;
}

export interface PowSolveResult {
  nonce: bigint;
  /** Nonces tried by all workers until the solution was found (the others' last chunk may be partly uncounted). */
  attempts: bigint;
  /** Wall time of the search, from dispatch to the workers until the solution arrived. */
  ms: number;
}

export type PowSolverErrorCode = 'ERR_POW_NOT_STARTED' | 'ERR_POW_STOPPED' | 'ERR_POW_WORKER';

export class PowSolverError extends Error {
  readonly code: PowSolverErrorCode;
  constructor(code: PowSolverErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PowSolverError';
    this.code = code;
  }
}

/**
 * ~2 ms of work per worker. When one worker wins, the others finish their current chunk before
 * they can take the next solve, so this bounds the gap between back-to-back solves; the cost of a
 * kernel call (a 32-byte copy and the per-target setup) is negligible at this size.
 */
export const DEFAULT_SOLVER_CHUNK = 1 << 15;

/** The worker entry next to this module: .ts when run from source, .js when built. */
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './pow-worker.ts' : './pow-worker.js',
  import.meta.url,
);
const TWO_64 = 1n << 64n;

interface Job {
  readonly id: number;
  readonly target: Uint8Array;
  readonly difficulty: bigint;
  readonly opts: PowSolveOptions;
  readonly resolve: (r: PowSolveResult) => void;
  readonly reject: (e: Error) => void;
  settled: boolean;
  removeAbortListener: () => void;
}

/** The job the workers are on. It stays active after settling until every worker reported done. */
interface ActiveJob {
  readonly job: Job;
  readonly stop: Int32Array;
  readonly counters: BigUint64Array;
  readonly startedAt: number;
  readonly progressTimer: ReturnType<typeof setInterval> | undefined;
  pending: number;
}

export class PowSolver {
  readonly threads: number;
  readonly #chunk: number;
  readonly #progressIntervalMs: number;
  #workers: Worker[] = [];
  #state: 'stopped' | 'starting' | 'running' = 'stopped';
  #starting: Promise<void> | undefined;
  #simd = false;
  #queue: Job[] = [];
  #active: ActiveJob | undefined;
  #nextJobId = 1;

  constructor(opts: PowSolverOptions = {}) {
    this.threads = opts.threads ?? availableParallelism();
    this.#chunk = opts.chunk ?? DEFAULT_SOLVER_CHUNK;
    this.#progressIntervalMs = opts.progressIntervalMs ?? 100;
    if (!Number.isInteger(this.threads) || this.threads < 1) {
      throw new RangeError('threads must be a positive integer');
    }
    if (!Number.isInteger(this.#chunk) || this.#chunk < 1 || this.#chunk > MAX_SEARCH_COUNT) {
      throw new RangeError(`chunk must be an integer in [1, ${MAX_SEARCH_COUNT}]`);
    }
  }

  /** True between a successful start() and stop(). */
  get running(): boolean {
    return this.#state === 'running';
  }

  /** Whether the workers use the SIMD kernel (known once started). */
  get simd(): boolean {
    return this.#simd;
  }

  /** Spawns the workers and waits until each has loaded its kernel. Idempotent. */
  start(): Promise<void> {
    if (this.#state === 'running') return Promise.resolve();
    if (this.#state === 'starting') return this.#starting!;
    this.#state = 'starting';
    const starting = this.#spawnAll().finally(() => {
      if (this.#starting === starting) this.#starting = undefined;
    });
    this.#starting = starting;
    return starting;
  }

  async #spawnAll(): Promise<void> {
    const workers = Array.from({ length: this.threads }, () => new Worker(WORKER_URL));
    this.#workers = workers;
    try {
      const ready = await Promise.all(workers.map((w) => firstMessage(w)));
      if (this.#workers !== workers) {
        throw new PowSolverError('ERR_POW_STOPPED', 'pow solver stopped while starting');
      }
      this.#simd = ready.every((m) => m.type === 'ready' && m.simd);
    } catch (e) {
      await Promise.all(workers.map((w) => quietTerminate(w)));
      if (this.#workers === workers) {
        this.#workers = [];
        this.#state = 'stopped';
      }
      throw e instanceof PowSolverError
        ? e
        : new PowSolverError('ERR_POW_WORKER', 'pow worker failed to start', { cause: e });
    }
    workers.forEach((w, i) => {
      w.on('message', (msg: FromWorker) => this.#onMessage(i, msg));
      w.on('error', (e) => this.#fail(e));
      w.on('exit', (code) => this.#fail(new Error(`pow worker exited with code ${code}`)));
      w.unref(); // idle workers must not keep the process alive
    });
    this.#state = 'running';
    this.#pump();
  }

  /** Terminates the workers. Pending and queued solves reject with ERR_POW_STOPPED. */
  async stop(): Promise<void> {
    const workers = this.#workers;
    this.#state = 'stopped';
    this.#workers = [];
    this.#shutdown(new PowSolverError('ERR_POW_STOPPED', 'pow solver stopped'));
    await Promise.all(workers.map((w) => quietTerminate(w)));
  }

  /**
   * Finds a nonce whose PoW value for `target` is >= `difficulty`. Solves are queued and run one
   * at a time on all workers.
   */
  solve(target: Uint8Array, difficulty: bigint, opts: PowSolveOptions = {}): Promise<PowSolveResult> {
    return new Promise<PowSolveResult>((resolve, reject) => {
      if (!(target instanceof Uint8Array) || target.length !== POW_TARGET_BYTES) {
        throw new ProtocolError('ERR_LENGTH', `pow target must be ${POW_TARGET_BYTES} bytes`, 'target');
      }
      checkU64(difficulty, 'difficulty');
      if (opts.startNonce !== undefined) checkU64(opts.startNonce, 'startNonce');
      if (this.#state === 'stopped') {
        throw new PowSolverError('ERR_POW_NOT_STARTED', 'pow solver is not started');
      }
      if (opts.signal?.aborted) throw new PowAbortedError(undefined, { cause: opts.signal.reason });
      const job: Job = {
        id: this.#nextJobId++,
        // A copy: the caller may reuse its buffer (and Buffer#slice would not copy).
        target: new Uint8Array(target),
        difficulty,
        opts,
        resolve,
        reject,
        settled: false,
        removeAbortListener: () => {},
      };
      const signal = opts.signal;
      if (signal !== undefined) {
        const onAbort = (): void =>
          this.#abort(job, new PowAbortedError(undefined, { cause: signal.reason }));
        signal.addEventListener('abort', onAbort, { once: true });
        job.removeAbortListener = () => signal.removeEventListener('abort', onAbort);
      }
      this.#queue.push(job);
      this.#pump();
    });
  }

  #settle(job: Job, outcome: { result: PowSolveResult } | { error: Error }): void {
    if (job.settled) return;
    job.settled = true;
    job.removeAbortListener();
    if ('result' in outcome) job.resolve(outcome.result);
    else job.reject(outcome.error);
  }

  #abort(job: Job, error: Error): void {
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) this.#queue.splice(queued, 1);
    const active = this.#active;
    if (active?.job === job) Atomics.store(active.stop, 0, STOP_CANCELLED);
    this.#settle(job, { error });
  }

  /** Starts the next queued job when the workers are free. */
  #pump(): void {
    if (this.#state !== 'running' || this.#active !== undefined) return;
    const job = this.#queue.shift();
    if (job === undefined) return;
    const workers = this.#workers;
    const control = new SharedArrayBuffer(controlBytes(workers.length));
    const origin = job.opts.startNonce ?? randomNonce();
    const spacing = TWO_64 / BigInt(workers.length);
    const counters = new BigUint64Array(control, CONTROL_COUNTERS_OFFSET, workers.length);
    const onProgress = job.opts.onProgress;
    this.#active = {
      job,
      stop: new Int32Array(control, 0, 1),
      counters,
      startedAt: performance.now(),
      progressTimer:
        onProgress === undefined
          ? undefined
          : setInterval(() => {
              if (!job.settled) onProgress(sumCounters(counters));
            }, this.#progressIntervalMs),
      pending: workers.length,
    };
    workers.forEach((w, i) => {
      w.ref();
      const msg: PowJobMessage = {
        type: 'solve',
        job: job.id,
        worker: i,
        workers: workers.length,
        control,
        target: job.target,
        startNonce: (origin + BigInt(i) * spacing) % TWO_64,
        difficulty: job.difficulty,
        chunk: this.#chunk,
      };
      w.postMessage(msg);
    });
  }

  #onMessage(worker: number, msg: FromWorker): void {
    const active = this.#active;
    if (msg.type !== 'done' || active === undefined || msg.job !== active.job.id) return;
    const { job } = active;
    if (msg.nonce !== null && !job.settled) {
      const attempts = sumCounters(active.counters);
      const ms = performance.now() - active.startedAt;
      job.opts.onProgress?.(attempts);
      this.#settle(job, { result: { nonce: msg.nonce, attempts, ms } });
    }
    this.#workers[worker]?.unref();
    if (--active.pending > 0) return;
    clearInterval(active.progressTimer);
    this.#active = undefined;
    // Every worker stopped without a win: only a cancelled job ends so, and it is already settled.
    this.#settle(job, { error: new PowAbortedError('pow search ended without a solution') });
    this.#pump();
  }

  /** Rejects the active and queued jobs and stops sending work. */
  #shutdown(error: PowSolverError): void {
    const active = this.#active;
    this.#active = undefined;
    if (active !== undefined) {
      Atomics.store(active.stop, 0, STOP_CANCELLED);
      clearInterval(active.progressTimer);
      this.#settle(active.job, { error });
    }
    for (const job of this.#queue.splice(0)) this.#settle(job, { error });
  }

  /** A worker died: the solver cannot keep its promises any more, so it stops. */
  #fail(cause: unknown): void {
    if (this.#state !== 'running') return;
    const workers = this.#workers;
    this.#state = 'stopped';
    this.#workers = [];
    this.#shutdown(
      new PowSolverError('ERR_POW_WORKER', 'a pow worker failed; the solver stopped', { cause }),
    );
    for (const w of workers) void quietTerminate(w);
  }
}

/** Terminates a worker whose end is expected: its exit is no failure and late errors are moot. */
function quietTerminate(worker: Worker): Promise<number> {
  worker.removeAllListeners('exit');
  worker.removeAllListeners('error');
  worker.on('error', () => {});
  return worker.terminate();
}

function sumCounters(counters: BigUint64Array): bigint {
  let total = 0n;
  for (let i = 0; i < counters.length; i++) total += Atomics.load(counters, i);
  return total;
}

/** The first message of a new worker, or its failure before sending one. */
function firstMessage(worker: Worker): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    const onMessage = (msg: FromWorker): void => {
      cleanup();
      resolve(msg);
    };
    const onError = (e: Error): void => {
      cleanup();
      reject(e);
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`pow worker exited with code ${code} before it was ready`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}
