import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { addressGroup } from '../address-group.ts';
import { RecencyQueue } from '../recency-queue.ts';
import {
  type Bucket,
  type BucketRate,
  dropFull,
  fullBucket,
  isFull,
  isValidRate,
  refill,
  secondsToToken,
} from '../token-bucket.ts';

export type { BucketRate } from '../token-bucket.ts';

/**
 * Per-client token buckets, one per request class. The API is open to local scripts and, when bound
 * beyond loopback, to the network: a cheap flood of reads must not starve block submission, and a
 * flood of writes must not keep the node busy validating, so each class has its own bucket.
 */
export type RateClass = 'read' | 'write' | 'probe';

export const DEFAULT_RATES: Readonly<Record<RateClass, BucketRate>> = {
  read: { perSecond: 200, burst: 1000 },
  write: { perSecond: 10, burst: 50 },
  probe: { perSecond: 20, burst: 100 },
};

export interface RateLimitOptions {
  /** Override some class rates (tests, or an operator's setting). */
  rates?: Partial<Record<RateClass, BucketRate>>;
  /**
   * Most clients tracked at once per class (default 100,000). Beyond that the least recently used
   * client makes room if it is idle; a newcomer is refused only while none is.
   */
  maxClients?: number;
  /** How often idle, full buckets are dropped (default 5 minutes). */
  sweepIntervalMs?: number;
  /** Clock in milliseconds (default Date.now); injectable for tests. */
  now?: () => number;
}

/**
 * The outcome of one take, with the client's quota at that instant: the `RateLimit*` headers are made
 * from it, so time passing before they are written (a busy event loop) cannot make them disagree
 * with the decision (a bucket that refills meanwhile would report one token too many).
 */
export type TakeResult =
  | { readonly ok: true; readonly quota: RateQuota }
  | { readonly ok: false; readonly retryAfterSeconds: number; readonly quota: RateQuota };

/**
 * A client's standing in one class, as the proxy form's `RateLimit*` headers report it. A bucket of
 * `limit` tokens refilling at `limit / windowSeconds` per second is the quota "`limit` requests per
 * `windowSeconds`" (the defaults: reads 1000 per 5 s, writes 50 per 5 s, probes 100 per 5 s).
 */
export interface RateQuota {
  /** Requests per window: the bucket size. */
  readonly limit: number;
  /** Seconds a drained bucket takes to refill (burst / rate), rounded up. */
  readonly windowSeconds: number;
  /** Whole requests the client may send right now. */
  readonly remaining: number;
  /** Seconds until the bucket is full again; 0 when it is full. */
  readonly resetSeconds: number;
}

/** The quota of a bucket of `rate` holding `tokens` (a full bucket when `tokens` is omitted). */
export function quotaOf(rate: BucketRate, tokens: number = rate.burst): RateQuota {
  const missing = rate.burst - tokens;
  return {
    limit: Math.floor(rate.burst),
    windowSeconds: Math.ceil(rate.burst / rate.perSecond),
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: missing <= 0 ? 0 : Math.ceil(missing / rate.perSecond),
  };
}

/**
 * The rate-limit fields of a proxy-form answer, after draft-ietf-httpapi-ratelimit-headers-11 (May
 * 2026): each class is a named quota policy, so a client can tell which quota a request spent.
 *
 * - `RateLimit-Policy: "read";q=1000;w=5`: a Structured Field List of one Item, the policy governing
 *   this request: its name (an sf-string), `q` the quota (requests, the draft's default unit) and `w`
 *   the window in seconds (the bucket's burst and the seconds an empty bucket takes to refill).
 * - `RateLimit: "read";r=997;t=1`: the same policy's service limit: `r` the requests left now, `t`
 *   the seconds until the bucket is full again. On a refusal `r` is 0 and `t` is the wait before the
 *   next request is allowed, which is also `Retry-After`: the draft asks that Retry-After never point
 *   before the end of the effective window `t`.
 * - The legacy `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (earlier drafts), kept
 *   for clients that read them: the quota, the requests left and the seconds until full.
 */
export function rateLimitFields(cls: RateClass, taken: TakeResult): Record<string, string> {
  const q = taken.quota;
  const t = taken.ok ? q.resetSeconds : taken.retryAfterSeconds;
  const name = `"${RATE_POLICY_NAMES[cls]}"`;
  return {
    'ratelimit-policy': `${name};q=${q.limit};w=${q.windowSeconds}`,
    ratelimit: `${name};r=${q.remaining};t=${t}`,
    'ratelimit-limit': String(q.limit),
    'ratelimit-remaining': String(q.remaining),
    'ratelimit-reset': String(q.resetSeconds),
  };
}

/**
 * The policy name of each class in the `RateLimit-Policy` and `RateLimit` fields. The draft's
 * identifiers are sf-strings: these stay within the characters that need no escaping.
 */
export const RATE_POLICY_NAMES: Readonly<Record<RateClass, string>> = {
  read: 'read',
  write: 'write',
  probe: 'probe',
};

/** A refusal: nothing left now, and the wait (whole seconds, at least 1) before trying again. */
function refused(rate: BucketRate, waitSeconds: number, tokens = 0): TakeResult {
  const retryAfterSeconds = Math.max(1, Math.ceil(waitSeconds));
  const q = quotaOf(rate, tokens);
  return {
    ok: false,
    retryAfterSeconds,
    quota: { ...q, remaining: 0, resetSeconds: Math.max(q.resetSeconds, retryAfterSeconds) },
  };
}

const DEFAULT_MAX_CLIENTS = 100_000;
const DEFAULT_SWEEP_MS = 5 * 60_000;
/** The API counts an IPv6 client by its /64 (rate limits, connection caps): a subscriber's usual share. */
export const CLIENT_IPV6_PREFIX_BITS = 64;

/** A client's bucket, with when it was last used (a count of takes: its place in the order of use). */
type Tracked = Bucket & { used: number };

export class RateLimiter {
  private readonly rates: Readonly<Record<RateClass, BucketRate>>;
  private readonly maxClients: number;
  private readonly sweepIntervalMs: number;
  private readonly now: () => number;
  /** One table per class, keyed by client (see clientKey), each with its clients' order of use. */
  private readonly tables: Record<RateClass, Map<string, Tracked>> = {
    read: new Map(),
    write: new Map(),
    probe: new Map(),
  };
  /** Each table's clients, least recently used first (stamped with `uses` at each take). */
  private readonly orders = {} as Record<RateClass, RecencyQueue<string, number>>;
  private uses = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: RateLimitOptions = {}) {
    const rates = { ...DEFAULT_RATES };
    for (const cls of Object.keys(rates) as RateClass[]) {
      const r = opts.rates?.[cls];
      if (r === undefined) continue;
      if (!isValidRate(r)) throw new RangeError(`bad rate for class ${cls}`);
      rates[cls] = r;
    }
    this.rates = rates;
    this.maxClients = opts.maxClients ?? DEFAULT_MAX_CLIENTS;
    if (!(this.maxClients >= 1)) throw new RangeError('maxClients must be at least 1');
    this.sweepIntervalMs = opts.sweepIntervalMs ?? DEFAULT_SWEEP_MS;
    this.now = opts.now ?? Date.now;
    for (const cls of Object.keys(this.tables) as RateClass[]) {
      const table = this.tables[cls];
      this.orders[cls] = new RecencyQueue(
        (key) => table.get(key)?.used,
        () => table.size,
      );
    }
    // unref: the sweep must never keep the process alive on its own.
    this.timer = setInterval(() => {
      this.sweep();
    }, this.sweepIntervalMs);
    this.timer.unref();
  }

  /** Buckets currently tracked, all classes together. */
  get size(): number {
    return this.tables.read.size + this.tables.write.size + this.tables.probe.size;
  }

  /** Spends one token of `cls` for `ip` (its client, see clientKey), or says how long until one is available. */
  take(ip: string, cls: RateClass): TakeResult {
    const now = this.now();
    const key = clientKey(ip);
    const table = this.tables[cls];
    const rate = this.rates[cls];
    let bucket = table.get(key);
    if (bucket === undefined) {
      const wait = this.makeRoom(cls, now);
      if (wait > 0) return refused(rate, wait);
      bucket = { ...fullBucket(rate, now), used: 0 };
      table.set(key, bucket);
    }
    // Now the most recently used.
    bucket.used = ++this.uses;
    this.orders[cls].touch(key, bucket.used);
    refill(bucket, rate, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true, quota: quotaOf(rate, bucket.tokens) };
    }
    return refused(rate, secondsToToken(bucket, rate), bucket.tokens);
  }

  /**
   * Frees a place in a full table by dropping its least recently used client if that one is idle
   * (its bucket has refilled: it is then indistinguishable from a newcomer, so nothing is lost).
   * Returns 0 when there is room, else the seconds until the oldest client is idle: every client is
   * then busy, and evicting one would hand it a fresh burst, so the newcomer waits instead. Only the
   * oldest is looked at, so a newcomer costs O(1) however large the table.
   */
  private makeRoom(cls: RateClass, now: number): number {
    const table = this.tables[cls];
    if (table.size < this.maxClients) return 0;
    const rate = this.rates[cls];
    const order = this.orders[cls];
    const oldestKey = order.oldest()!;
    const oldest = table.get(oldestKey)!;
    refill(oldest, rate, now);
    if (!isFull(oldest, rate)) return (rate.burst - oldest.tokens) / rate.perSecond;
    table.delete(oldestKey);
    order.shift();
    return 0;
  }

  /**
   * What `ip` has left in class `cls` now, without spending a token or tracking a new client (an
   * unknown client has a full bucket). Reading it right after `take` gives the `RateLimit*` headers.
   */
  quota(ip: string, cls: RateClass): RateQuota {
    const rate = this.rates[cls];
    const bucket = this.tables[cls].get(clientKey(ip));
    if (bucket === undefined) return quotaOf(rate);
    const elapsed = Math.max(0, this.now() - bucket.at);
    return quotaOf(rate, Math.min(rate.burst, bucket.tokens + (elapsed * rate.perSecond) / 1000));
  }

  /** Drops every idle bucket (refilled: indistinguishable from a new one); returns how many. */
  sweep(): number {
    const now = this.now();
    let dropped = 0;
    for (const cls of Object.keys(this.tables) as RateClass[])
      dropped += dropFull(this.tables[cls], this.rates[cls], now);
    return dropped;
  }

  /** Stops the sweep timer (the server calls this on close). */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * The key a client's buckets are kept under: its IPv4 address (IPv4-mapped IPv6 included), or its
 * IPv6 /64, so that one subscriber cannot multiply its allowance by rotating addresses.
 */
export function clientKey(ip: string): string {
  return addressGroup(ip, CLIENT_IPV6_PREFIX_BITS);
}

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopback(addr: string): boolean {
  const a = stripMapped(addr.toLowerCase());
  return a === '::1' || (isIP(a) === 4 && a.startsWith('127.'));
}

function stripMapped(addr: string): string {
  return addr.startsWith('::ffff:') && isIP(addr.slice(7)) === 4 ? addr.slice(7) : addr;
}

function normalizeIp(addr: string): string {
  return stripMapped(addr.trim().toLowerCase());
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(',') : v;
}

/**
 * The client address that rate limits apply to (the limiter keys it by clientKey). Forwarding headers are believed only from a loopback
 * peer (a local reverse proxy); from anywhere else they are attacker-chosen. The RIGHTMOST
 * X-Forwarded-For entry is the one our proxy appended; entries to its left come from the client.
 * A header value that is not an IP address is ignored rather than trusted as a bucket key.
 */
export function clientIp(peer: string | undefined, headers: IncomingHttpHeaders): string {
  const peerIp = normalizeIp(peer ?? '');
  if (peerIp !== '' && isLoopback(peerIp)) {
    const xff = firstHeader(headers['x-forwarded-for']);
    if (xff !== undefined) {
      const last = normalizeIp(xff.split(',').at(-1) ?? '');
      if (isIP(last) !== 0) return last;
    }
    const real = firstHeader(headers['x-real-ip']);
    if (real !== undefined) {
      const ip = normalizeIp(real);
      if (isIP(ip) !== 0) return ip;
    }
  }
  return peerIp === '' ? 'unknown' : peerIp;
}
