import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { verifyBytesNode } from './ed25519.ts';
import { packChecks, type VerifyItem } from './verify-packed.ts';

/**
 * Ed25519 verification off the main thread: requests made in one event-loop turn are packed into
 * batches and sent to worker threads (one message per batch, so the hand-off cost is shared), while
 * the main thread goes on parsing requests and writing blocks. With `threads: 0` it verifies on the
 * caller's thread, a turn's requests together in slices of at most INLINE_SLICE_MS.
 */
export interface VerifyPoolOptions {
  /**
   * Most worker threads (default DEFAULT_THREADS). One starts with the pool; the others only when
   * submissions come in bursts, so an idle or read-only node does not pay their memory.
   * `threads: 0` verifies inline.
   */
  threads?: number;
  /** Workers started with the pool (default 1, at most `threads`). */
  initialThreads?: number;
  /** Items per message to a worker. */
  maxBatch?: number;
  /** The worker module (default: verify-worker beside this file; tests pass others). */
  workerFile?: URL;
  /** Told when a worker dies (the node logs it): its checks are then done on the caller's thread. */
  onWorkerLost?: (loss: WorkerLoss) => void;
}

/** A worker that died, and why: its thread's uncaught error, or the exit code it ended with. */
export interface WorkerLoss {
  /** Its module had loaded: a crash while working, not a failure to start. */
  ran: boolean;
  error?: string;
  exitCode?: number;
  /** Checks it held unanswered, which were then done on the caller's thread. */
  unanswered: number;
}

/**
 * Workers where there are cores to spare: 2 on a machine of more than 2 cores, none on 2 cores or 1
 * (issue #18; the desktop app sets its own count, electron/node-host.ts). On 2 cores a worker's
 * hand-off (packing, messages, wake-ups, its own isolate's GC and compiler) costs CPU, and it pays
 * only while the node's thread is the limit and the other core has time to spare. Measured there,
 * runs alternating:
 * - 2026-11-28, LMDB committing each group: 16 clients' HTTP ingest 5.9 and 5.7 k/s with workers and
 *   without; three nodes' gossip 1.5 against 1.7-2.0 k/s final on all three. None was the default.
 * - 2026-11-29, with write batches (store/write-batch.ts), the node's thread ~97 % busy at ingest:
 *   one worker against none, ingest 7.7-8.3 against 6.0-6.9 k/s (main thread 96 against 136 µs a
 *   block); gossip 2.7-2.9 against 2.6-2.7 k/s final on all three (four pairs). One was the default.
 * - 2026-11-30, a slower machine (Intel, 10 % of its time stolen by its host under load): none
 *   against one, the node's CPU a block lower in 28 of 32 ingest rounds (`npm run bench -- ab`, three
 *   runs, medians −51, −45 and −60 µs: the worker's thread took 104-124 µs a block for checks that
 *   add 54-75 on the node's; a message's round trip costs 75-98 µs of CPU here, half of it in the
 *   kernel), the rate higher in the median round (+10 %); catch-up of 100,000 blocks 44 and 32 s
 *   against 57 and 55 s with one peer, 45 and 32 against 73 and 43 s with three (two pairs); gossip
 *   1.5-1.7 against 1.4-1.5 k/s final on all three. None is the default again.
 * - 2026-12-02, AMD EPYC, quiet (0.1 core taken by others): one worker against none, two ingest runs
 *   back to back: 454 against 266 µs a block (passes 454, 353, 367 against 272, 267, 266), the rate
 *   2.5 against 4.0 k/s (median pass). None stays the default.
 */
const DEFAULT_THREADS = availableParallelism() > 2 ? 2 : 0;

/** Longest run of signature checks on the caller's thread while no worker runs. */
const INLINE_SLICE_MS = 4;

/** The worker beside this module: its .ts source in a checkout, the compiled .js in dist/. */
const WORKER_FILE = import.meta.url.endsWith('.ts') ? './verify-worker.ts' : './verify-worker.js';

interface Pending {
  resolve: (ok: boolean) => void;
  reject: (e: Error) => void;
}

/** What a worker sends: once `ready` when its module has loaded, then one answer per request. */
type WorkerMessage = { ready: true } | { id: number; results: Uint8Array };

interface Item extends VerifyItem {
  p: Pending;
}

interface Slot {
  worker: Worker;
  outstanding: number;
  /** False for a worker added under load until it is ready: work sent earlier would wait. */
  online: boolean;
  /** Its module has loaded (it said so): from then on a death is a crash, not a failure to start. */
  ran: boolean;
}

export class VerifyPool {
  private readonly threads: number;
  private readonly initialThreads: number;
  private readonly maxBatch: number;
  private readonly workerFile: URL;
  private readonly onWorkerLost: ((loss: WorkerLoss) => void) | undefined;
  /** A worker died before its thread ever ran: starting more would fail alike, so none are. */
  private cannotStart = false;
  private readonly slots: Slot[] = [];
  private readonly inflight = new Map<number, { slot: Slot; items: Item[] }>();
  private queue: Item[] = [];
  private scheduled = false;
  private running = false;
  private nextId = 1;

  constructor(opts: VerifyPoolOptions = {}) {
    this.threads = opts.threads ?? DEFAULT_THREADS;
    this.initialThreads = Math.min(this.threads, opts.initialThreads ?? 1);
    this.maxBatch = opts.maxBatch ?? 512;
    this.workerFile = opts.workerFile ?? new URL(WORKER_FILE, import.meta.url);
    this.onWorkerLost = opts.onWorkerLost;
  }

  start(): void {
    this.running = true;
    for (let i = 0; i < this.initialThreads; i++) this.addWorker(true);
  }

  private addWorker(online: boolean): void {
    const worker = new Worker(this.workerFile);
    worker.unref();
    const slot: Slot = { worker, outstanding: 0, online, ran: false };
    worker.on('message', (m: WorkerMessage) => {
      if ('ready' in m) {
        slot.ran = true;
        slot.online = true;
        // Requests may be waiting for a busy worker: this one takes them.
        this.dispatch();
      } else this.onResult(m);
    });
    // A worker that dies (an error, or its thread exiting before stop) takes no request with it.
    worker.on('error', (e: unknown) =>
      this.workerLost(slot, { error: e instanceof Error ? e.message : String(e) }),
    );
    worker.on('exit', (exitCode: number) => this.workerLost(slot, { exitCode }));
    this.slots.push(slot);
  }

  async stop(): Promise<void> {
    this.running = false;
    const slots = this.slots.splice(0);
    const stopped = new Error('verify pool stopped');
    for (const [id, entry] of this.inflight) {
      this.inflight.delete(id);
      for (const it of entry.items) it.p.reject(stopped);
    }
    // Requests not yet handed to a worker fail too, rather than wait for ever.
    for (const q of this.queue.splice(0)) q.p.reject(stopped);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  /** Requests handed to each started worker and not yet answered (diagnostics). */
  workload(): number[] {
    return this.slots.map((s) => s.outstanding);
  }

  /** Workers that are ready (their module has loaded). */
  onlineWorkers(): number {
    return this.slots.filter((s) => s.ran).length;
  }

  verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): Promise<boolean> {
    if (!this.running) return Promise.resolve(verifyBytesNode(signature, message, publicKey));
    if (signature.length !== 64 || publicKey.length !== 32 || message.length > 0xffff)
      return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      this.queue.push({ sig: signature, msg: message, pub: publicKey, p: { resolve, reject } });
      // A full batch goes to a running worker at once; with none running (yet, or at all: no
      // threads), the queue waits for the turn's flush, which checks it here in slices: a sync
      // page's 500 signatures in one go would hold the node's thread 30 ms.
      if (this.queue.length >= this.maxBatch && this.slots.some((s) => s.online)) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    if (!this.running) return; // stopped meanwhile: stop() rejected what was queued
    // A burst (under load, requests arrive in waves, one per commit) is what another worker is
    // for: it starts now and takes its share of later bursts once its thread runs. So does any
    // request once every worker has died.
    const wanted = this.queue.length > 1 || this.slots.length === 0;
    // One worker starts at a time: the slices below flush again and again while it starts.
    const starting = this.slots.some((s) => !s.online);
    if (wanted && !starting && this.slots.length < this.threads && !this.cannotStart) this.addWorker(false);
    if (this.slots.some((s) => s.online)) {
      this.dispatch();
      return;
    }
    // No worker runs (none yet: the first starts with the first burst, or one replaces dead ones;
    // or none at all, with no threads): the burst is checked here a slice at a time, the rest
    // handed to a worker once one runs. In one go, a catch-up's first page and its votes held the node's
    // thread 60-235 ms (catch-up profile).
    const until = performance.now() + INLINE_SLICE_MS;
    let done = 0;
    while (done < this.queue.length && (done === 0 || performance.now() < until)) {
      const q = this.queue[done++]!;
      q.p.resolve(verifyBytesNode(q.sig, q.msg, q.pub));
    }
    this.queue.splice(0, done);
    if (this.queue.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * Hands the queue to `ready` workers. A burst is spread over them (not sent whole to one), so its
   * last signature is checked after 1/workers of the time.
   */
  private send(ready: Slot[]): void {
    const per = Math.min(this.maxBatch, Math.ceil(this.queue.length / ready.length));
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, per);
      const data = packChecks(batch);
      const slot = ready.reduce((a, b) => (b.outstanding < a.outstanding ? b : a));
      const id = this.nextId++;
      slot.outstanding += batch.length;
      this.inflight.set(id, { slot, items: batch });
      slot.worker.postMessage({ id, count: batch.length, data }, [data.buffer]);
    }
  }

  /**
   * Hands the queue to the idle workers, if any. Only idle workers take work: requests made while
   * every worker checks a batch wait for an answer and go out together, so a message carries more
   * checks under load. Sent as they came, 16,000 ingested blocks took 3,350-3,550 messages (13 µs a
   * block in postMessage alone on the node's thread); this way 2,880-2,960.
   */
  private dispatch(): void {
    if (this.queue.length === 0 || !this.running) return;
    const idle = this.slots.filter((s) => s.online && s.outstanding === 0);
    if (idle.length > 0) this.send(idle);
  }

  private onResult(m: { id: number; results: Uint8Array }): void {
    const entry = this.inflight.get(m.id);
    if (!entry) return;
    this.inflight.delete(m.id);
    entry.slot.outstanding -= entry.items.length;
    entry.items.forEach((it, i) => it.p.resolve(m.results[i] === 1));
    // What queued while the workers were busy goes now, to every idle one (a worker with more
    // messages of a large burst still to answer is not idle yet).
    this.dispatch();
  }

  /** Drops a dead worker; what it was given is verified here instead (the next flush adds one). */
  private workerLost(slot: Slot, why: { error?: string; exitCode?: number }): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return; // stopped, or already handled (an error is followed by an exit)
    this.slots.splice(i, 1);
    if (!slot.ran) this.cannotStart = true;
    this.onWorkerLost?.({ ran: slot.ran, ...why, unanswered: slot.outstanding });
    void slot.worker.terminate();
    for (const [id, entry] of this.inflight) {
      if (entry.slot !== slot) continue;
      this.inflight.delete(id);
      for (const it of entry.items) it.p.resolve(verifyBytesNode(it.sig, it.msg, it.pub));
    }
    // Requests held for this worker's answer would wait for ever: a flush gives them to an idle
    // worker, or checks them here while a new one starts.
    if (this.queue.length > 0 && this.running && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }
}
