import { Worker } from 'node:worker_threads';
import { verifyBytesNode } from './ed25519.ts';

/**
 * Ed25519 verification off the main thread: requests made in one event-loop turn are packed into
 * batches and sent to worker threads (one message per batch, so the hand-off cost is shared), while
 * the main thread goes on parsing requests and writing blocks. With `threads: 0` it verifies inline.
 */
export interface VerifyPoolOptions {
  /** Worker threads; default: one per core less one for the main thread, at least one. */
  threads?: number;
  /** Items per message to a worker. */
  maxBatch?: number;
}

/** The worker beside this module: its .ts source in a checkout, the compiled .js in dist/. */
const WORKER_FILE = import.meta.url.endsWith('.ts') ? './verify-worker.ts' : './verify-worker.js';

interface Pending {
  resolve: (ok: boolean) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  outstanding: number;
}

export class VerifyPool {
  private readonly threads: number;
  private readonly maxBatch: number;
  private readonly slots: Slot[] = [];
  private readonly inflight = new Map<number, { slot: Slot; waiters: Pending[] }>();
  private queue: { sig: Uint8Array; msg: Uint8Array; pub: Uint8Array; p: Pending }[] = [];
  private scheduled = false;
  private nextId = 1;

  constructor(opts: VerifyPoolOptions = {}) {
    this.threads = opts.threads ?? 1;
    this.maxBatch = opts.maxBatch ?? 512;
  }

  start(): void {
    for (let i = 0; i < this.threads; i++) {
      const worker = new Worker(new URL(WORKER_FILE, import.meta.url));
      worker.unref();
      const slot: Slot = { worker, outstanding: 0 };
      worker.on('message', (m: { id: number; results: Uint8Array }) => this.onResult(m));
      worker.on('error', (err) => this.failSlot(slot, err));
      this.slots.push(slot);
    }
  }

  async stop(): Promise<void> {
    const slots = this.slots.splice(0);
    const stopped = new Error('verify pool stopped');
    for (const s of slots) this.failSlot(s, stopped);
    // Requests not yet handed to a worker fail too, rather than wait for ever.
    for (const q of this.queue.splice(0)) q.p.reject(stopped);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  /** Requests handed to each worker and not yet answered (diagnostics). */
  workload(): number[] {
    return this.slots.map((s) => s.outstanding);
  }

  verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): Promise<boolean> {
    if (this.slots.length === 0) return Promise.resolve(verifyBytesNode(signature, message, publicKey));
    if (signature.length !== 64 || publicKey.length !== 32 || message.length > 0xffff)
      return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      this.queue.push({ sig: signature, msg: message, pub: publicKey, p: { resolve, reject } });
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    if (this.slots.length === 0) return; // stopped meanwhile: stop() rejected what was queued
    // A burst is spread over every worker (not sent whole to one), so its last signature is
    // checked after 1/threads of the time: under load, requests arrive in waves (one per commit).
    const per = Math.min(this.maxBatch, Math.ceil(this.queue.length / this.slots.length));
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, per);
      let size = 0;
      for (const it of batch) size += 98 + it.msg.length;
      const data = new Uint8Array(size);
      let off = 0;
      for (const it of batch) {
        data[off] = it.msg.length >> 8;
        data[off + 1] = it.msg.length & 0xff;
        data.set(it.sig, off + 2);
        data.set(it.pub, off + 66);
        data.set(it.msg, off + 98);
        off += 98 + it.msg.length;
      }
      const slot = this.slots.reduce((a, b) => (b.outstanding < a.outstanding ? b : a));
      const id = this.nextId++;
      slot.outstanding += batch.length;
      this.inflight.set(id, { slot, waiters: batch.map((b) => b.p) });
      slot.worker.postMessage({ id, count: batch.length, data }, [data.buffer]);
    }
  }

  private onResult(m: { id: number; results: Uint8Array }): void {
    const entry = this.inflight.get(m.id);
    if (!entry) return;
    this.inflight.delete(m.id);
    entry.slot.outstanding -= entry.waiters.length;
    entry.waiters.forEach((w, i) => w.resolve(m.results[i] === 1));
  }

  private failSlot(slot: Slot, err: Error): void {
    for (const [id, entry] of this.inflight) {
      if (entry.slot !== slot) continue;
      this.inflight.delete(id);
      for (const w of entry.waiters) w.reject(err);
    }
  }
}
