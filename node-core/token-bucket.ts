/**
 * The token bucket shared by the HTTP rate limits (api/rate-limit.ts) and the messenger's
 * (net/request-limits.ts): `burst` tokens at most, refilled continuously at `perSecond`; a request
 * spends one. Plain data and functions, so each limiter keeps its buckets however suits it.
 */
export interface BucketRate {
  /** Tokens added per second. */
  readonly perSecond: number;
  /** Bucket size: how many requests may arrive at once after a quiet spell. */
  readonly burst: number;
}

export interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
}

/** A full bucket, as a client nobody has heard from yet gets. */
export function fullBucket(rate: BucketRate, now: number): Bucket {
  return { tokens: rate.burst, at: now };
}

/** True when `rate` can admit anything: a positive refill and room for at least one token. */
export function isValidRate(rate: BucketRate): boolean {
  return rate.perSecond > 0 && rate.burst >= 1;
}

/** Brings `bucket` up to `now`: tokens earned since it was last updated, never beyond the burst. */
export function refill(bucket: Bucket, rate: BucketRate, now: number): void {
  // A clock that steps backwards adds nothing (and does not remove tokens).
  const elapsed = Math.max(0, now - bucket.at);
  bucket.tokens = Math.min(rate.burst, bucket.tokens + (elapsed * rate.perSecond) / 1000);
  bucket.at = Math.max(bucket.at, now);
}

/** Seconds until a refilled bucket holds one whole token again (0 when it already does). */
export function secondsToToken(bucket: Bucket, rate: BucketRate): number {
  return bucket.tokens >= 1 ? 0 : (1 - bucket.tokens) / rate.perSecond;
}

/** True when the bucket is full: it is then indistinguishable from a new one and may be dropped. */
export function isFull(bucket: Bucket, rate: BucketRate): boolean {
  return bucket.tokens >= rate.burst;
}

/** Refills every bucket of `buckets` to `now` and drops the full ones; returns how many it dropped. */
export function dropFull<K>(buckets: Map<K, Bucket>, rate: BucketRate, now: number): number {
  let dropped = 0;
  for (const [key, bucket] of buckets) {
    refill(bucket, rate, now);
    if (isFull(bucket, rate)) {
      buckets.delete(key);
      dropped += 1;
    }
  }
  return dropped;
}
