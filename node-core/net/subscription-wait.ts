/**
 * Waits for new peers to subscribe to a gossip topic before something is published for them.
 * Gossip has no pull: a message published before a peer's subscription has arrived reaches no one,
 * and on a loaded machine a subscription can arrive seconds after the connection. A fixed delay
 * after the connection therefore loses the message now and then; checking for the subscription
 * does not.
 */
export interface SubscriptionWaitOptions {
  /** How often awaited peers are checked (default 100 ms). */
  pollMs?: number;
  /** How long a peer is waited for (default 60 s); one that never subscribes is left out. */
  waitMs?: number;
}

export class SubscriptionWait {
  private readonly subscribes: (peer: string) => boolean;
  private readonly onSubscribed: () => void;
  private readonly pollMs: number;
  private readonly checks: number;
  private timer: NodeJS.Timeout | undefined;
  /** Awaited peers -> checks left before they are left out. */
  private readonly awaited = new Map<string, number>();

  /**
   * `subscribes(peer)` tells whether a peer subscribes now; `onSubscribed` runs once per check in
   * which any awaited peer turned out to subscribe: peers that connect together (at start, say)
   * subscribe within a check or two of each other and share one publish.
   */
  constructor(
    subscribes: (peer: string) => boolean,
    onSubscribed: () => void,
    opts: SubscriptionWaitOptions = {},
  ) {
    this.subscribes = subscribes;
    this.onSubscribed = onSubscribed;
    this.pollMs = opts.pollMs ?? 100;
    this.checks = Math.max(1, Math.ceil((opts.waitMs ?? 60_000) / this.pollMs));
  }

  /** Peers awaited now. */
  get size(): number {
    return this.awaited.size;
  }

  /** Awaits `peer`'s subscription (afresh when it is awaited already). */
  add(peer: string): void {
    this.awaited.set(peer, this.checks);
    if (this.timer) return;
    this.timer = setInterval(() => this.check(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.awaited.clear();
  }

  private check(): void {
    let any = false;
    for (const [peer, left] of this.awaited) {
      if (this.subscribes(peer)) {
        any = true;
        this.awaited.delete(peer);
      } else if (left <= 1) this.awaited.delete(peer);
      else this.awaited.set(peer, left - 1);
    }
    if (this.awaited.size === 0) this.stop();
    if (any) this.onSubscribed();
  }
}
