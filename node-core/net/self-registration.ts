import { type Registration, signRegistration } from '../protocol/registration.ts';
import type { Directory } from './directory.ts';

/**
 * The node's own directory registration (reference-behavior.md 7.2 "Self-registration"): its
 * `node.key` account is registered to its libp2p peer id at start, again shortly after a peer
 * connects (gossip has no pull, so a new peer would otherwise wait for the next refresh), and every
 * TTL/2 (15 minutes), each time with a fresh timestamp so the newest-wins rule keeps it current.
 *
 * After a new peer, the registrations of the other accounts this node serves (wallets, registered
 * over HTTP) are published again too, as signed by their owners: one registered before the peer
 * connected, or before gossip had formed its mesh, would otherwise stay unknown to that peer until
 * the owner's next refresh (up to 20 minutes), and chat to it would fail meanwhile.
 */
export interface SelfRegistrationDeps {
  directory: Directory;
  publish(r: Registration): void;
  seed: Uint8Array;
  pubKey: string;
  nodePeer: string;
  now: () => bigint;
  sign?: (message: Uint8Array, seed: Uint8Array) => Uint8Array;
}

export interface SelfRegistrationOptions {
  /** Re-registration interval (default 15 minutes). */
  refreshMs?: number;
  /** Delay after a new peer before registering again, for its subscriptions to arrive (default 1.5 s). */
  peerDelayMs?: number;
}

export class SelfRegistration {
  private readonly d: SelfRegistrationDeps;
  private readonly refreshMs: number;
  private readonly peerDelayMs: number;
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private last = 0n;
  /** Registrations published so far. */
  published = 0;

  constructor(deps: SelfRegistrationDeps, opts: SelfRegistrationOptions = {}) {
    this.d = deps;
    this.refreshMs = opts.refreshMs ?? 15 * 60_000;
    this.peerDelayMs = opts.peerDelayMs ?? 1_500;
  }

  start(): void {
    this.register();
    this.timer = setInterval(() => this.register(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.pending) clearTimeout(this.pending);
    this.timer = this.pending = undefined;
  }

  /** A peer connected: register again soon (one pending re-registration at a time). */
  peerConnected(): void {
    if (this.pending || !this.timer) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.register();
      this.republishServed();
    }, this.peerDelayMs);
    this.pending.unref();
  }

  private republishServed(): void {
    for (const r of this.d.directory.servedBy(this.d.nodePeer)) {
      if (r.account !== this.d.pubKey) this.d.publish(r);
    }
  }

  private register(): void {
    // Strictly increasing timestamps: a same-nanosecond refresh would be ignored as not newer.
    let ts = this.d.now();
    if (ts <= this.last) ts = this.last + 1n;
    this.last = ts;
    const r = signRegistration(
      { account: this.d.pubKey, node_peer: this.d.nodePeer, timestamp: ts },
      this.d.seed,
      this.d.sign,
    );
    this.d.directory.offer(r);
    this.d.publish(r);
    this.published += 1;
  }
}
