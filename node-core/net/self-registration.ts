import { type Registration, signRegistration } from '../protocol/registration.ts';
import type { Directory } from './directory.ts';

/**
 * The node's own directory registration (reference-behavior.md 7.2 "Self-registration"): its
 * `node.key` account is registered to its libp2p peer id at start, again once a new peer subscribes
 * to the directory topic (gossip has no pull, so a new peer would otherwise wait for the next
 * refresh), and every TTL/2 (15 minutes), each time with a fresh timestamp so the newest-wins rule
 * keeps it current.
 *
 * After a new peer, the registrations of the other accounts this node serves (wallets, registered
 * over HTTP) are published again too, as signed by their owners: one registered before the peer
 * connected, or before gossip had formed its mesh, would otherwise stay unknown to that peer until
 * the owner's next refresh (up to 20 minutes), and chat to it would fail meanwhile.
 *
 * The new peer's subscription is waited for, not a fixed delay: published before the peer
 * subscribes, a registration reaches no one, and on a loaded machine subscriptions can take seconds
 * to arrive after a connection.
 */
export interface SelfRegistrationDeps {
  directory: Directory;
  publish(r: Registration): void;
  seed: Uint8Array;
  pubKey: string;
  nodePeer: string;
  now: () => bigint;
  /** Whether `peer` subscribes to the directory topic now (a publish then reaches it). */
  subscribes(peer: string): boolean;
  sign?: (message: Uint8Array, seed: Uint8Array) => Uint8Array;
}

export interface SelfRegistrationOptions {
  /** Re-registration interval (default 15 minutes). */
  refreshMs?: number;
  /** How often new peers are checked for their directory subscription (default 100 ms). */
  peerPollMs?: number;
  /** How long a new peer's subscription is waited for (default 60 s); one without is left out. */
  peerWaitMs?: number;
}

export class SelfRegistration {
  private readonly d: SelfRegistrationDeps;
  private readonly refreshMs: number;
  private readonly peerPollMs: number;
  private readonly peerWaitMs: number;
  private timer: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  /** New peers whose directory subscription is awaited -> checks left before they are left out. */
  private readonly awaited = new Map<string, number>();
  private last = 0n;
  /** Registrations published so far. */
  published = 0;

  constructor(deps: SelfRegistrationDeps, opts: SelfRegistrationOptions = {}) {
    this.d = deps;
    this.refreshMs = opts.refreshMs ?? 15 * 60_000;
    this.peerPollMs = opts.peerPollMs ?? 100;
    this.peerWaitMs = opts.peerWaitMs ?? 60_000;
  }

  start(): void {
    this.register();
    this.timer = setInterval(() => this.register(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.poll) clearInterval(this.poll);
    this.timer = this.poll = undefined;
    this.awaited.clear();
  }

  /** Peers whose directory subscription is awaited now. */
  get awaiting(): number {
    return this.awaited.size;
  }

  /** A peer connected: register again once it subscribes to the directory topic. */
  peerConnected(peer: string): void {
    if (!this.timer) return;
    this.awaited.set(peer, Math.max(1, Math.ceil(this.peerWaitMs / this.peerPollMs)));
    if (this.poll) return;
    this.poll = setInterval(() => this.checkPeers(), this.peerPollMs);
    this.poll.unref();
  }

  /**
   * One publish for every awaited peer that subscribes by now: peers that connect together (at
   * start, say) subscribe within a check or two of each other and share it.
   */
  private checkPeers(): void {
    let ready = false;
    for (const [peer, left] of this.awaited) {
      if (this.d.subscribes(peer)) {
        ready = true;
        this.awaited.delete(peer);
      } else if (left <= 1) this.awaited.delete(peer);
      else this.awaited.set(peer, left - 1);
    }
    if (this.awaited.size === 0 && this.poll) {
      clearInterval(this.poll);
      this.poll = undefined;
    }
    if (!ready) return;
    this.register();
    this.republishServed();
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
