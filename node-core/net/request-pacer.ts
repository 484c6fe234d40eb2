import { type Bucket, type BucketRate, dropFull, fullBucket, isValidRate, refill } from '../token-bucket.ts';
import { NetError } from './errors.ts';
import { DEFAULT_SWEEP_MS } from './request-limits.ts';

/**
 * The sending side of the per-peer limit: requests to one peer are spaced so that they stay within
 * the rate a peer accepts by default, rather than sent at once and refused. A sync round asks for
 * one `chain` page per account, one after another, far faster than 50/s over a fast link; without
 * pacing, every round against a ledger of more than a few hundred accounts would fail.
 *
 * The pace is 80 % of what the peer allows (DEFAULT_PER_PEER_RATE): the peer's bucket sees each
 * request one network delay later than ours does, and that delay varies, so a pacer at the exact
 * rate would now and then be a fraction of a token ahead of the peer and be refused.
 */
export const DEFAULT_OUTBOUND_RATE: BucketRate = { perSecond: 40, burst: 160 };

export interface RequestPacerOptions {
  /** The rate requests to one peer are kept to (default DEFAULT_OUTBOUND_RATE, 40/s burst 160). */
  rate?: BucketRate;
  /** How often full (idle) buckets are dropped, at most (default 1 minute). */
  sweepIntervalMs?: number;
  /** Clock in milliseconds (default Date.now); injectable for tests. */
  now?: () => number;
}

export class RequestPacer {
  readonly rate: BucketRate;
  private readonly sweepIntervalMs: number;
  private readonly now: () => number;
  private readonly peers = new Map<string, Bucket>();
  private nextSweepAt: number;

  constructor(opts: RequestPacerOptions = {}) {
    this.rate = opts.rate ?? DEFAULT_OUTBOUND_RATE;
    if (!isValidRate(this.rate))
      throw new NetError('ERR_BAD_OPTION', 'the outbound messenger rate needs perSecond > 0 and burst >= 1');
    this.sweepIntervalMs = opts.sweepIntervalMs ?? DEFAULT_SWEEP_MS;
    this.now = opts.now ?? Date.now;
    this.nextSweepAt = this.now() + this.sweepIntervalMs;
  }

  /** Peers with a bucket now. */
  get size(): number {
    return this.peers.size;
  }

  /**
   * Reserves the next request to `peer`: how many ms to wait before sending it (0 when a token is
   * there). Reservations go into debt, so requests made at once are spaced one after the other.
   */
  reserve(peer: string): number {
    const now = this.now();
    if (now >= this.nextSweepAt) this.sweep(now);
    let bucket = this.peers.get(peer);
    if (bucket === undefined) {
      bucket = fullBucket(this.rate, now);
      this.peers.set(peer, bucket);
    }
    refill(bucket, this.rate, now);
    bucket.tokens -= 1;
    return bucket.tokens >= 0 ? 0 : Math.ceil((-bucket.tokens * 1000) / this.rate.perSecond);
  }

  private sweep(now: number): void {
    this.nextSweepAt = now + this.sweepIntervalMs;
    dropFull(this.peers, this.rate, now);
  }
}
