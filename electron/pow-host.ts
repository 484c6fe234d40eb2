import type { PowProgress } from '../node-core/client/bridge.ts';
import type { WireError } from './channels.ts';
import { isFromPowProcess, type ToPowProcess } from './pow-protocol.ts';

/**
 * The main process's side of proof of work: the bridge's pow.solve / cancel / onProgress, carried
 * out by the utility process (pow-utility.ts), which it starts on the first solve and restarts
 * after a crash. No electron import: main.ts passes a `spawn` that forks the utility process.
 *
 * A cancel settles the solve at once (rejecting with AbortError) and tells the utility process to
 * stop; whatever it still reports for that job is ignored.
 */
export interface PowProcess {
  post(message: ToPowProcess): void;
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (code: number) => void): void;
  kill(): void;
}

export class PowAbortError extends Error {
  constructor(message = 'proof of work cancelled') {
    super(message);
    this.name = 'AbortError';
  }
}

const TARGET_RE = /^[0-9a-fA-F]{64}$/;
const DIFFICULTY_RE = /^[0-9a-fA-F]{16}$/;
const JOB_ID_RE = /^[\x21-\x7e]{1,128}$/;

interface Job {
  readonly wireId: number;
  readonly owner: number | undefined;
  readonly resolve: (nonce: string) => void;
  readonly reject: (e: Error) => void;
  readonly onProgress: ((p: PowProgress) => void) | undefined;
}

function errorFromWire(e: WireError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

export class PowHost {
  readonly #spawn: () => PowProcess;
  #process: PowProcess | undefined;
  /** By the renderer's job id. */
  readonly #jobs = new Map<string, Job>();
  readonly #byWireId = new Map<number, string>();
  #nextWireId = 1;
  #stopped = false;

  constructor(spawn: () => PowProcess) {
    this.#spawn = spawn;
  }

  /** Jobs in flight. */
  get active(): number {
    return this.#jobs.size;
  }

  /**
   * Solves for a 32-byte target (64 hex digits) at a difficulty (16 hex digits); resolves with the
   * nonce in decimal. `owner` tags the job (a webContents id) for cancelOwnedBy.
   */
  async solve(
    targetHex: unknown,
    difficultyHex: unknown,
    jobId: unknown,
    onProgress?: (p: PowProgress) => void,
    owner?: number,
  ): Promise<string> {
    if (typeof targetHex !== 'string' || !TARGET_RE.test(targetHex)) {
      throw new TypeError('target must be 64 hex digits (32 bytes)');
    }
    if (typeof difficultyHex !== 'string' || !DIFFICULTY_RE.test(difficultyHex)) {
      throw new TypeError('difficulty must be 16 hex digits');
    }
    if (typeof jobId !== 'string' || !JOB_ID_RE.test(jobId)) {
      throw new TypeError('job id must be 1-128 printable ASCII characters without spaces');
    }
    if (this.#stopped) throw new PowAbortError('the app is quitting');
    if (this.#jobs.has(jobId)) throw new TypeError(`proof-of-work job ${jobId} is already running`);
    const process = this.#ensureProcess();
    const wireId = this.#nextWireId++;
    return new Promise<string>((resolve, reject) => {
      this.#jobs.set(jobId, { wireId, owner, resolve, reject, onProgress });
      this.#byWireId.set(wireId, jobId);
      process.post({ type: 'solve', id: wireId, target: targetHex.toLowerCase(), difficulty: difficultyHex });
    });
  }

  /** Cancels a job: its solve rejects with AbortError. Unknown or finished jobs are a no-op. */
  async cancel(jobId: unknown): Promise<void> {
    if (typeof jobId !== 'string') return;
    const job = this.#take(jobId);
    if (job === undefined) return;
    this.#process?.post({ type: 'cancel', id: job.wireId });
    job.reject(new PowAbortError());
  }

  /** Cancels every job of one owner (a window that closed or reloaded). */
  cancelOwnedBy(owner: number): void {
    for (const [jobId, job] of [...this.#jobs]) if (job.owner === owner) void this.cancel(jobId);
  }

  /** Rejects every job and ends the utility process; later solves are refused. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const jobId of [...this.#jobs.keys()])
      this.#take(jobId)?.reject(new PowAbortError('the app is quitting'));
    const p = this.#process;
    this.#process = undefined;
    p?.kill();
  }

  #take(jobId: string): Job | undefined {
    const job = this.#jobs.get(jobId);
    if (job === undefined) return undefined;
    this.#jobs.delete(jobId);
    this.#byWireId.delete(job.wireId);
    return job;
  }

  #ensureProcess(): PowProcess {
    if (this.#process !== undefined) return this.#process;
    const p = this.#spawn();
    this.#process = p;
    p.onMessage((m) => {
      if (this.#process === p) this.#onMessage(m);
    });
    p.onExit((code) => {
      if (this.#process !== p) return;
      this.#process = undefined;
      for (const jobId of [...this.#jobs.keys()]) {
        this.#take(jobId)?.reject(new Error(`the proof-of-work process exited unexpectedly (code ${code})`));
      }
    });
    return p;
  }

  #onMessage(m: unknown): void {
    if (!isFromPowProcess(m)) return;
    const jobId = this.#byWireId.get(m.id);
    if (jobId === undefined) return;
    const job = this.#jobs.get(jobId)!;
    switch (m.type) {
      case 'progress':
        try {
          job.onProgress?.({ attempts: m.attempts, expected: m.expected });
        } catch {
          // a listener's failure is not the solve's
        }
        break;
      case 'solved':
        this.#take(jobId);
        job.resolve(m.nonce);
        break;
      case 'failed':
        this.#take(jobId);
        job.reject(errorFromWire(m.error));
        break;
    }
  }
}
