import { type Registration, signRegistration } from '../protocol/registration.ts';
import type { Directory } from './directory.ts';
import { SubscriptionWait, type SubscriptionWaitOptions } from './subscription-wait.ts';

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

export interface SelfRegistrationOptions extends SubscriptionWaitOptions {
  /** Re-registration interval (default 15 minutes). */
  refreshMs?: number;
}

export class SelfRegistration {
  private readonly d: SelfRegistrationDeps;
  private readonly refreshMs: number;
  private timer: NodeJS.Timeout | undefined;
  /** New peers whose directory subscription is awaited. */
  private readonly newPeers: SubscriptionWait;
  private last = 0n;
  /** Registrations published so far. */
  published = 0;

  constructor(deps: SelfRegistrationDeps, opts: SelfRegistrationOptions = {}) {
    this.d = deps;
    this.refreshMs = opts.refreshMs ?? 15 * 60_000;
    this.newPeers = new SubscriptionWait(
      deps.subscribes,
      () => {
        this.register();
        this.republishServed();
      },
      opts,
    );
  }

  start(): void {
    this.register();
    this.timer = setInterval(() => this.register(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.newPeers.stop();
  }

  /** Peers whose directory subscription is awaited now. */
  get awaiting(): number {
    return this.newPeers.size;
  }

  /** A peer connected: register again once it subscribes to the directory topic. */
  peerConnected(peer: string): void {
    if (this.timer) this.newPeers.add(peer);
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
