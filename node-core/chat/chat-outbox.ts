import type { Logger } from 'pino';
import type { ChatStore, Delivery, StoredMessage } from './chat-store.ts';
import { DueQueue } from './due-queue.ts';

/**
 * Delivery of chat messages to the recipient's node (issue #13; reference-behavior.md 7.1). The
 * reference tries once and fails the send when the recipient's node is offline; here a message
 * stays in a persistent outbox (its delivery record in the store, written in the transaction that
 * stores the sender's copy) and is retried with exponential backoff, and at once when the
 * recipient's node connects, until that node acknowledges it, refuses it for good, or the outbox's
 * time for it runs out. The node is looked up in the directory at every attempt: a recipient who
 * moved to another node is followed there.
 */

export interface ChatOutboxOptions {
  /** The first retry's delay, ms (default 1 s); each next one doubles. */
  backoffMs: number;
  /** The longest delay between two attempts, ms (default 5 min). */
  maxBackoffMs: number;
  /** A message not delivered within this time of being sent fails, ns (default 7 days). */
  maxAgeNs: bigint;
  /** Attempts running at once (default 8). */
  concurrency: number;
}

export const DEFAULT_CHAT_OUTBOX_OPTIONS: Readonly<ChatOutboxOptions> = Object.freeze({
  backoffMs: 1_000,
  maxBackoffMs: 300_000,
  maxAgeNs: 7n * 24n * 3_600_000_000_000n,
  concurrency: 8,
});

/** Why one attempt did not deliver: `permanent` when the recipient's node refused the message itself. */
export class ChatDeliveryError extends Error {
  readonly code: 'not_registered' | 'unreachable' | 'refused';
  constructor(code: ChatDeliveryError['code'], message: string) {
    super(message);
    this.name = 'ChatDeliveryError';
    this.code = code;
  }
  get permanent(): boolean {
    return this.code === 'refused';
  }
}

export interface ChatOutboxDeps {
  store: ChatStore;
  now: () => bigint;
  /**
   * The node a recipient (a public key) is registered on: a peer id, `self` for this node, or
   * undefined when the directory has no live entry.
   */
  resolve: (key: string) => string | 'self' | undefined;
  /**
   * Hands a message to that node and resolves once it acknowledged it (stored, or had it already).
   * Rejects with ChatDeliveryError, `refused` when the node answered that it will not take it.
   */
  send: (peer: string, m: StoredMessage) => Promise<void>;
  /** Each change of a message's delivery, once recorded (the event streams). */
  onChange?: (m: StoredMessage, d: Delivery) => void;
  log?: Logger;
}

export class ChatOutbox {
  readonly options: ChatOutboxOptions;
  private readonly d: ChatOutboxDeps;
  /** Pending message ids -> when the next attempt is due, ms (Date.now clock). */
  private readonly due = new DueQueue();
  /** Pending message ids -> their recipient (a public key): a node connecting asks whose it is. */
  private readonly recipients = new Map<string, string>();
  /**
   * Messages whose node connected while an attempt at them was under way (a dial to it still
   * failing): if that attempt fails, the next goes at once instead of after the backoff.
   */
  private readonly reconnected = new Set<string>();
  private readonly running = new Map<string, Promise<Delivery | undefined>>();
  private timer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(deps: ChatOutboxDeps, options: Partial<ChatOutboxOptions> = {}) {
    this.d = deps;
    this.options = { ...DEFAULT_CHAT_OUTBOX_OPTIONS, ...options };
  }

  /** Loads what the outbox held when the node stopped (or crashed), and starts retrying it. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const nowNs = this.d.now();
    for (const { id, delivery } of this.d.store.pendingDeliveries()) {
      const to = this.d.store.get(id)?.to;
      if (to === undefined) continue;
      const waitMs = delivery.next_at === undefined ? 0 : Number((delivery.next_at - nowNs) / 1_000_000n);
      this.due.set(id, Date.now() + Math.max(0, waitMs));
      this.recipients.set(id, to);
    }
    if (this.due.size > 0) this.d.log?.info({ pending: this.due.size }, 'chat outbox: resuming delivery');
    this.schedule();
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // An attempt under way finishes (its outcome is recorded); nothing new starts.
    await Promise.allSettled([...this.running.values()]);
  }

  /** Messages waiting for delivery. */
  get pending(): number {
    return this.due.size;
  }

  /**
   * Makes a first attempt at a message just stored as pending, and resolves with its delivery after
   * that attempt (or `pending` when it takes longer than `waitMs`: it goes on in the background).
   */
  async deliverNow(m: StoredMessage, waitMs: number): Promise<Delivery> {
    this.due.set(m.id, Date.now());
    this.recipients.set(m.id, m.to);
    const attempt = this.attempt(m.id);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((r) => {
      timer = setTimeout(() => r(undefined), waitMs);
    });
    try {
      const d = await Promise.race([attempt, late]);
      return d ?? this.d.store.delivery(m.id) ?? { state: 'pending', attempts: 0, updated_at: this.d.now() };
    } finally {
      clearTimeout(timer);
    }
  }

  /** A failed message back in the outbox, tried at once; undefined when it is not a failed one. */
  async retry(id: string): Promise<Delivery | undefined> {
    const d = this.d.store.delivery(id);
    const m = this.d.store.get(id);
    if (!d || !m || d.state !== 'failed') return undefined;
    const next: Delivery = { state: 'pending', attempts: d.attempts, updated_at: this.d.now() };
    if (!(await this.d.store.setDelivery(id, next))) return undefined;
    this.d.onChange?.(m, next);
    this.due.set(id, Date.now());
    this.recipients.set(id, m.to);
    return (await this.attempt(id)) ?? next;
  }

  /** A node connected: what waits for it is tried now rather than at the end of its backoff. */
  peerConnected(peer: string): void {
    // Each recipient looked up once, and no message read: nodes connect and reconnect all day.
    const theirs = new Map<string, boolean>();
    const now = Date.now();
    let any = false;
    for (const [id, to] of this.recipients) {
      let match = theirs.get(to);
      if (match === undefined) theirs.set(to, (match = this.d.resolve(to) === peer));
      if (!match) continue;
      if (this.running.has(id)) this.reconnected.add(id);
      this.due.set(id, now);
      any = true;
    }
    if (any) this.schedule();
  }

  /** Runs what is due, within the concurrency, and sets the timer for the next one. */
  private schedule(): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const now = Date.now();
    for (;;) {
      const top = this.due.peek();
      if (top === undefined || top.at > now || this.running.size >= this.options.concurrency) break;
      this.due.take();
      // One under way records its outcome, and with it its next time, when it ends.
      if (!this.running.has(top.id)) void this.attempt(top.id);
    }
    const top = this.due.peek();
    const next = top === undefined ? Infinity : top.at <= now ? now + 50 : top.at;
    if (next !== Infinity) {
      this.timer = setTimeout(() => this.schedule(), Math.max(0, next - now));
      this.timer.unref();
    }
  }

  /** One attempt; resolves with the recorded delivery (undefined: the message is gone). */
  private attempt(id: string): Promise<Delivery | undefined> {
    const under = this.running.get(id);
    if (under) return under;
    const p = this.tryOnce(id).finally(() => {
      this.running.delete(id);
      // Its time in the queue anew: the schedule takes an id's entry off the queue when it comes
      // due while an attempt at it is still recording its outcome, and this one must not be lost.
      const at = this.due.get(id);
      if (at !== undefined) this.due.set(id, at);
      this.schedule();
    });
    this.running.set(id, p);
    return p;
  }

  private async tryOnce(id: string): Promise<Delivery | undefined> {
    const m = this.d.store.get(id);
    const before = this.d.store.delivery(id);
    if (!m || !before || before.state !== 'pending') {
      this.forget(id);
      return before;
    }
    const attempts = before.attempts + 1;
    let error: ChatDeliveryError | undefined;
    const peer = this.d.resolve(m.to);
    try {
      if (peer === undefined)
        throw new ChatDeliveryError('not_registered', 'recipient not found in directory');
      // The recipient moved to this node: the sender's copy is theirs too (indexed under both).
      if (peer !== 'self') await this.d.send(peer, m);
    } catch (e) {
      error = e instanceof ChatDeliveryError ? e : new ChatDeliveryError('unreachable', (e as Error).message);
    }
    const now = this.d.now();
    let next: Delivery;
    if (!error) {
      next = { state: 'delivered', attempts, updated_at: now };
    } else if (error.permanent || now - m.received_at >= this.options.maxAgeNs) {
      next = { state: 'failed', attempts, updated_at: now, error: error.message };
    } else {
      const delayMs = this.reconnected.delete(id)
        ? 0
        : Math.min(this.options.backoffMs * 2 ** (attempts - 1), this.options.maxBackoffMs);
      next = {
        state: 'pending',
        attempts,
        updated_at: now,
        next_at: now + BigInt(delayMs) * 1_000_000n,
        error: error.message,
      };
      this.due.set(id, Date.now() + delayMs);
    }
    if (next.state !== 'pending') this.forget(id);
    if (!(await this.d.store.setDelivery(id, next))) {
      this.forget(id);
      return undefined;
    }
    if (error) this.d.log?.debug({ id, peer, attempts, err: error.message }, 'chat delivery attempt failed');
    // A pending message whose retry changed nothing visible still reports its attempt count.
    this.d.onChange?.(m, next);
    return next;
  }

  /** A message out of the outbox: delivered, failed, or gone. */
  private forget(id: string): void {
    this.due.delete(id);
    this.recipients.delete(id);
    this.reconnected.delete(id);
  }
}
