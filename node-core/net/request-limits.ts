import { type Bucket, type BucketRate, dropFull, fullBucket, isValidRate, refill } from '../token-bucket.ts';
import { NetError } from './errors.ts';

/**
 * Rate limits on the messenger protocol `/xe/msg/1.0.0` (reference-behavior.md 5.7 and 9.4 N-09):
 * each peer has its own bucket (50/s, burst 200) and all peers share one (200/s, burst 400). The
 * per-peer bucket keeps one noisy peer from starving the others; the global one bounds the work all
 * peers together can ask of this node, however many identities an attacker brings. A request is
 * admitted only when both buckets hold a token, and a refused request spends neither: a peer over
 * its own limit cannot drain the shared bucket that honest peers depend on.
 */
export interface RequestLimitOptions {
  /** Each peer's bucket (default 50/s, burst 200). */
  perPeer?: BucketRate;
  /** The bucket all peers share (default 200/s, burst 400). */
  global?: BucketRate;
  /** Most peers tracked at once (default 10,000); a new peer beyond that is refused. */
  maxPeers?: number;
  /** How often full (idle) per-peer buckets are dropped, at most (default 1 minute). */
  sweepIntervalMs?: number;
  /** Clock in milliseconds (default Date.now); injectable for tests. */
  now?: () => number;
}

export const DEFAULT_PER_PEER_RATE: BucketRate = { perSecond: 50, burst: 200 };
export const DEFAULT_GLOBAL_RATE: BucketRate = { perSecond: 200, burst: 400 };
const DEFAULT_MAX_PEERS = 10_000;
export const DEFAULT_SWEEP_MS = 60_000;

/** Why a request was refused, or undefined when it was admitted. */
export type Refusal = 'peer' | 'global' | undefined;

export class RequestLimiter {
  readonly perPeer: BucketRate;
  readonly global: BucketRate;
  private readonly maxPeers: number;
  private readonly sweepIntervalMs: number;
  private readonly now: () => number;
  private readonly peers = new Map<string, Bucket>();
  private readonly shared: Bucket;
  private nextSweepAt: number;
  /** Requests refused because the peer's own bucket was empty. */
  refusedPeer = 0;
  /** Requests refused because the shared bucket was empty. */
  refusedGlobal = 0;

  constructor(opts: RequestLimitOptions = {}) {
    this.perPeer = opts.perPeer ?? DEFAULT_PER_PEER_RATE;
    this.global = opts.global ?? DEFAULT_GLOBAL_RATE;
    if (!isValidRate(this.perPeer) || !isValidRate(this.global))
      throw new NetError('ERR_BAD_OPTION', 'messenger rates need perSecond > 0 and burst >= 1');
    this.maxPeers = opts.maxPeers ?? DEFAULT_MAX_PEERS;
    this.sweepIntervalMs = opts.sweepIntervalMs ?? DEFAULT_SWEEP_MS;
    this.now = opts.now ?? Date.now;
    const now = this.now();
    this.shared = fullBucket(this.global, now);
    this.nextSweepAt = now + this.sweepIntervalMs;
  }

  /** Peers with a bucket now. */
  get size(): number {
    return this.peers.size;
  }

  /** Requests refused so far, for either reason. */
  get refused(): number {
    return this.refusedPeer + this.refusedGlobal;
  }

  /** Admits one request from `peer` (spending a token of each bucket), or says which limit refused it. */
  take(peer: string): Refusal {
    const now = this.now();
    // Swept lazily on the request path: no timer to own, and an idle node does no work at all.
    if (now >= this.nextSweepAt) this.sweep(now);
    let bucket = this.peers.get(peer);
    if (bucket === undefined) {
      if (this.peers.size >= this.maxPeers) {
        // Refusing the newcomer (rather than evicting someone) keeps existing peers' limits intact
        // when an attacker rotates identities.
        this.refusedPeer += 1;
        return 'peer';
      }
      bucket = fullBucket(this.perPeer, now);
      this.peers.set(peer, bucket);
    }
    refill(bucket, this.perPeer, now);
    refill(this.shared, this.global, now);
    if (bucket.tokens < 1) {
      this.refusedPeer += 1;
      return 'peer';
    }
    if (this.shared.tokens < 1) {
      this.refusedGlobal += 1;
      return 'global';
    }
    bucket.tokens -= 1;
    this.shared.tokens -= 1;
    return undefined;
  }

  /** Drops the buckets that have refilled: a full bucket is the same as none. Returns how many. */
  sweep(now: number = this.now()): number {
    this.nextSweepAt = now + this.sweepIntervalMs;
    return dropFull(this.peers, this.perPeer, now);
  }
}

/** The messenger's limits as a node configures them: the rates above and the exchange deadline. */
export interface MessengerLimitOptions extends RequestLimitOptions {
  /** How long one request/answer exchange may take, on either side (default 30 s). */
  deadlineMs?: number;
  /** The pace of this node's own requests to one peer (default 40/s, burst 160: under its limit). */
  outbound?: BucketRate;
}

export const DEFAULT_MESSENGER_DEADLINE_MS = 30_000;
