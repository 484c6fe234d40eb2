import type { DesktopBridge } from '../../../node-core/client/bridge.ts';
import { bytesToHex } from '../../../node-core/protocol/hex.ts';
import {
  expectedAttempts,
  formatDifficulty,
  PowAbortedError,
  randomNonce,
  throwIfPowAborted,
} from '../../../node-core/protocol/pow.ts';
import { U64_MAX } from '../../../node-core/protocol/int.ts';
import type { PowWorkerRequest, PowWorkerResponse } from './protocol.ts';

/**
 * Proof of work for the renderer, behind one interface with two implementations chosen at start:
 * the Electron bridge (a utility process with native threads) when the page runs in the desktop app,
 * else Web Workers running the WebAssembly kernel of node-core/protocol/pow-wasm.ts.
 */
export interface PowProgressInfo {
  /** Nonces tried so far. */
  attempts: bigint;
  /** Expected attempts at this difficulty (the mean; a search may well take two or three times as long). */
  expected: number;
}

export interface PowSolveOptions {
  /** Aborting rejects with PowAbortedError. */
  signal?: AbortSignal;
  onProgress?: (p: PowProgressInfo) => void;
}

export interface PowEngine {
  readonly kind: 'electron' | 'web-worker';
  /** A short description for the status bar and settings ("2 Web Workers, WebAssembly SIMD"). */
  describe(): string;
  /** Finds a nonce whose PoW value for `target` (32 bytes) reaches `difficulty`. */
  solve(target: Uint8Array, difficulty: bigint, opts?: PowSolveOptions): Promise<bigint>;
}

let jobCounter = 0;

/** The desktop app's solver, through the preload bridge. */
export class BridgePowEngine implements PowEngine {
  readonly kind = 'electron' as const;
  private readonly bridge: DesktopBridge;

  constructor(bridge: DesktopBridge) {
    this.bridge = bridge;
  }

  describe(): string {
    return 'desktop proof-of-work process';
  }

  async solve(target: Uint8Array, difficulty: bigint, opts: PowSolveOptions = {}): Promise<bigint> {
    throwIfPowAborted(opts.signal);
    const jobId = `pow-${Date.now()}-${++jobCounter}`;
    const expected = expectedAttempts(difficulty);
    const unsubscribe = this.bridge.pow.onProgress(jobId, (p) =>
      opts.onProgress?.({ attempts: BigInt(p.attempts), expected: p.expected || expected }),
    );
    const onAbort = () => void this.bridge.pow.cancel(jobId);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const nonce = await this.bridge.pow.solve(bytesToHex(target), formatDifficulty(difficulty), jobId);
      return BigInt(nonce);
    } catch (e) {
      // contextBridge passes only an Error's message into the page: the preload prefixes it.
      const err = e as Error | undefined;
      if (err?.name === 'AbortError' || /^AbortError\b/.test(err?.message ?? '') || opts.signal?.aborted) {
        throw new PowAbortedError(undefined, { cause: e });
      }
      throw e;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      unsubscribe();
    }
  }
}

interface WorkerJob {
  resolve(nonce: bigint): void;
  reject(e: Error): void;
  attempts: bigint[];
  onProgress?: (attempts: bigint) => void;
  failures: number;
}

/**
 * Web Workers running the WebAssembly kernel. With several workers, each searches the same target
 * from its own random start nonce; the first solution wins and the others are cancelled.
 */
export class WorkerPowEngine implements PowEngine {
  readonly kind = 'web-worker' as const;
  private readonly workers: Worker[] = [];
  private readonly jobs = new Map<number, WorkerJob>();
  private simd: boolean | undefined;
  private nextId = 1;

  constructor(threads = defaultWorkerThreads()) {
    for (let i = 0; i < threads; i++) {
      const w = new Worker(new URL('./pow.worker.ts', import.meta.url), { type: 'module', name: 'pow' });
      const index = i;
      w.onmessage = (ev: MessageEvent<PowWorkerResponse>) => this.onMessage(index, ev.data);
      w.onerror = (ev) => this.onWorkerError(ev);
      this.workers.push(w);
    }
  }

  get threads(): number {
    return this.workers.length;
  }

  describe(): string {
    const kernel = this.simd === undefined ? 'WebAssembly' : this.simd ? 'WebAssembly SIMD' : 'WebAssembly';
    return `${this.workers.length} Web Worker${this.workers.length === 1 ? '' : 's'}, ${kernel}`;
  }

  solve(target: Uint8Array, difficulty: bigint, opts: PowSolveOptions = {}): Promise<bigint> {
    throwIfPowAborted(opts.signal);
    const id = this.nextId++;
    const expected = expectedAttempts(difficulty);
    const targetHex = bytesToHex(target);
    return new Promise<bigint>((resolve, reject) => {
      const cancel = () => this.post({ type: 'cancel', id });
      const onAbort = () => {
        cancel();
        finish();
        reject(new PowAbortedError(undefined, { cause: opts.signal?.reason }));
      };
      const finish = () => {
        this.jobs.delete(id);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      this.jobs.set(id, {
        attempts: this.workers.map(() => 0n),
        failures: 0,
        onProgress: (attempts) => opts.onProgress?.({ attempts, expected }),
        resolve: (nonce) => {
          cancel();
          finish();
          resolve(nonce);
        },
        reject: (e) => {
          cancel();
          finish();
          reject(e);
        },
      });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      // Independent random starting points: the workers' ranges practically never overlap.
      const start = randomNonce();
      const stride = (1n << 64n) / BigInt(this.workers.length);
      this.workers.forEach((w, i) =>
        w.postMessage({
          type: 'solve',
          id,
          target: targetHex,
          difficulty: difficulty.toString(),
          startNonce: ((start + stride * BigInt(i)) & U64_MAX).toString(),
        } satisfies PowWorkerRequest),
      );
    });
  }

  private post(msg: PowWorkerRequest): void {
    for (const w of this.workers) w.postMessage(msg);
  }

  private onMessage(worker: number, msg: PowWorkerResponse): void {
    if (msg.type === 'ready') {
      this.simd = msg.simd;
      return;
    }
    const job = this.jobs.get(msg.id);
    if (!job) return;
    if (msg.type === 'progress') {
      job.attempts[worker] = BigInt(msg.attempts);
      job.onProgress?.(job.attempts.reduce((a, b) => a + b, 0n));
    } else if (msg.type === 'done') {
      job.attempts[worker] = BigInt(msg.attempts);
      job.onProgress?.(job.attempts.reduce((a, b) => a + b, 0n));
      job.resolve(BigInt(msg.nonce));
    } else if (!msg.aborted) {
      job.failures += 1;
      if (job.failures === this.workers.length) job.reject(new Error(`proof of work failed: ${msg.message}`));
    }
  }

  private onWorkerError(ev: ErrorEvent): void {
    const err = new Error(`proof-of-work worker failed: ${ev.message || 'could not start'}`);
    for (const job of [...this.jobs.values()]) job.reject(err);
  }
}

/** Workers to use: one per core but one, for the page's own thread; at least 1, at most 4. */
export function defaultWorkerThreads(): number {
  const cores = typeof navigator !== 'undefined' ? navigator.hardwareConcurrency || 2 : 2;
  return Math.max(1, Math.min(4, cores - 1));
}

let engine: PowEngine | undefined;

/** The engine for this page: the bridge's in the desktop app, Web Workers elsewhere. Created once. */
export function powEngine(bridge: DesktopBridge | undefined): PowEngine {
  engine ??= bridge?.pow ? new BridgePowEngine(bridge) : new WorkerPowEngine();
  return engine;
}
