import type { Logger } from 'pino';
import { SubscriptionWait } from '../../net/subscription-wait.ts';
import { RecencyQueue } from '../../recency-queue.ts';
import type { PerformanceCertificate } from '../../protocol/certificate.ts';
import { bytesToHex } from '../../protocol/hex.ts';
import { signBytes, type Verifier, verifyBytes } from '../../protocol/keys.ts';
import {
  marketplaceDigest,
  MarketplaceError,
  type MarketplaceGossip,
  type MarketplaceKind,
  type MarketplaceMessages,
  type MarketplaceOffer,
  type MarketplaceRequest,
  marketplaceRequestId,
  type UnsignedMarketplace,
  verifyMarketplaceMessage,
} from '../../protocol/marketplace.ts';
import { checkLeaseBounds, type LeaseDimensions, leaseCost } from '../pricing.ts';
import type { LeaseRecord } from '../records.ts';
import { AD_INTERVAL_MS, AD_TTL_NS, AdBook } from './ad-book.ts';
import { type Availability, availability, fits, type ProviderCapacity } from './capacity.ts';

/**
 * The compute marketplace on gossip topic `xe/marketplace` (reference-behavior.md 4.9): a provider
 * advertises its capacity and answers requests it can serve with a signed offer; a consumer
 * publishes a request and takes the cheapest valid offer. Every message is signed by the account it
 * names; this component checks signatures and timestamps for the topic validator, keeps the
 * providers' ads (ad-book.ts) and computes their availability from lease records (capacity.ts).
 */

const SECOND_NS = 1_000_000_000n;
/** A message signed further in the future than this is refused: no honest clock is that far off. */
export const MAX_FUTURE_NS = 120n * SECOND_NS;
/**
 * A request or offer older than this is refused: both live for one negotiation (OFFER_DEADLINE_MS),
 * so an older one is a replay. Ads live for AD_TTL_NS.
 */
export const MESSAGE_MAX_AGE_NS = 120n * SECOND_NS;
/** How long a consumer waits for an offer (the reference's 30 s). */
export const OFFER_DEADLINE_MS = 30_000;
/**
 * How long a consumer keeps listening after the first acceptable offer, for a cheaper one, unless
 * every provider that could serve has answered before.
 */
export const OFFER_GATHER_MS = 3_000;
/** Held offers are looked at again this often: a certificate they name may arrive meanwhile. */
export const OFFER_POLL_MS = 500;
/** Requests and offers remembered to ignore replays, at most. */
const MAX_SEEN = 10_000;

export type Verdict = 'accept' | 'reject' | 'ignore';

export interface MarketplaceKey {
  seed: Uint8Array;
  pubKey: string;
  address: string;
}

/** A provider as `GET /providers` shows it (the contract's Provider resource). */
export interface ProviderView extends Availability {
  address: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
}

export interface MarketplaceDeps {
  /** The node's key: it signs ads and offers as a provider, requests as a consumer. */
  key: MarketplaceKey;
  networkId: () => string;
  now: () => bigint;
  /** Gossips a message on `xe/marketplace` (our own messages are not delivered back to us). */
  publish: (msg: MarketplaceGossip) => void;
  /** Whether `peer` subscribes to `xe/marketplace` now (default: yes): a new peer's ad waits for it. */
  subscribes?: (peer: string) => boolean;
  certificates: {
    get(hash: string): PerformanceCertificate | undefined;
    newestValid(provider: string, now: bigint): PerformanceCertificate | undefined;
  };
  /** The lease records naming `provider` that are still open (records.ts OPEN_STATES): capacity. */
  leasesOf: (provider: string) => Iterable<LeaseRecord>;
  /** This node's capacity as a provider; undefined: it provides nothing. */
  capacity?: ProviderCapacity;
  /**
   * Whether a published request reaches anyone: peer-to-peer networking with a connected peer
   * (default: yes). When it does not and this node cannot answer itself, nobody is asked.
   */
  reachable?: () => boolean;
  /** A provider's standing for breaking price ties (higher is better; default 0 for all). */
  reputation?: (provider: string) => bigint;
  /** Whether this node's account can stake for a lease of `cost` (default: yes). */
  canStake?: (cost: bigint) => boolean;
  /**
   * The network's shortest lease, seconds (its genesis may pin one below the default 60 s): offers
   * and requests follow the ledger's bound, not a fixed one.
   */
  minDurationSecs?: () => bigint;
  sign?: (message: Uint8Array, seed: Uint8Array) => Uint8Array;
  verify?: Verifier;
  log?: Logger;
}

export interface MarketplaceOptions {
  /** How often a provider advertises (default AD_INTERVAL_MS, 5 min). */
  adIntervalMs?: number;
  /** How long an ad is listed after it was signed (default AD_TTL_NS, 15 min). */
  adTtlNs?: bigint;
  /** How long a consumer listens after the first acceptable offer (default OFFER_GATHER_MS). */
  gatherMs?: number;
}

export interface MarketplaceStats {
  ads_published: number;
  requests_published: number;
  offers_published: number;
  ads_received: number;
  requests_received: number;
  offers_received: number;
}

/** What a consumer wants: the dimensions and duration of the lease. */
export type LeaseWant = LeaseDimensions;

interface Negotiation {
  request: MarketplaceRequest;
  /** Offers heard and not judged yet (their certificate is not known yet). */
  offers: MarketplaceOffer[];
  /** Valid, acceptable offers. */
  taken: MarketplaceOffer[];
  /** Providers whose offer was judged. */
  answered: Set<string>;
  /** Providers whose live ad leaves room for the lease: once all answered, no need to wait. */
  expected: Set<string>;
  acceptable: (offer: MarketplaceOffer) => boolean;
  /** Starts the gather window (once). */
  firstTaken: () => void;
  done: () => void;
}

export interface NegotiationOptions {
  /** How long to listen at most (default OFFER_DEADLINE_MS, 30 s). */
  deadlineMs?: number;
  /** How long to keep listening after the first acceptable offer (default: the marketplace's). */
  gatherMs?: number;
  /** The consumer's own check of an offer (its balance); refused offers are not returned. */
  acceptable?: (offer: MarketplaceOffer) => boolean;
}

export type OfferRequestErrorCode =
  | 'request_signature' // the signature does not verify
  | 'request_key' // consumer_pub_key does not derive consumer
  | 'request_stale' // signed longer ago than MESSAGE_MAX_AGE_NS
  | 'request_future' // signed further ahead than MAX_FUTURE_NS
  | 'request_bounds' // dimensions or duration the ledger would refuse
  | 'request_replayed'; // this request id was submitted or heard already

/** A request submitted to `offersFor` that is refused before anything is published. */
export class OfferRequestError extends Error {
  readonly code: OfferRequestErrorCode;
  constructor(code: OfferRequestErrorCode, message: string) {
    super(message);
    this.name = 'OfferRequestError';
    this.code = code;
  }
}

export class Marketplace {
  private readonly deps: MarketplaceDeps;
  private readonly adIntervalMs: number;
  private readonly adTtlNs: bigint;
  private readonly gatherMs: number;
  readonly ads: AdBook;
  private readonly seen = new Map<string, bigint>();
  /** The keys of `seen` in the order first seen (stamped with when). */
  private readonly seenOrder = new RecencyQueue<string, bigint>(
    (key) => this.seen.get(key),
    () => this.seen.size,
  );
  private readonly negotiations = new Map<string, Negotiation>();
  private timer: NodeJS.Timeout | undefined;
  /** New peers whose marketplace subscription is awaited before advertising to them. */
  private readonly newPeers: SubscriptionWait;
  /** When this node last advertised (ms), or undefined: advertise as soon as it is a provider. */
  private lastAdMs: number | undefined;
  readonly stats: MarketplaceStats = {
    ads_published: 0,
    requests_published: 0,
    offers_published: 0,
    ads_received: 0,
    requests_received: 0,
    offers_received: 0,
  };

  constructor(deps: MarketplaceDeps, opts: MarketplaceOptions = {}) {
    this.deps = deps;
    this.adIntervalMs = opts.adIntervalMs ?? AD_INTERVAL_MS;
    this.adTtlNs = opts.adTtlNs ?? AD_TTL_NS;
    this.gatherMs = opts.gatherMs ?? OFFER_GATHER_MS;
    this.ads = new AdBook({ ttlNs: this.adTtlNs });
    this.newPeers = new SubscriptionWait(deps.subscribes ?? (() => true), () => {
      this.lastAdMs = undefined;
      this.tick();
    });
  }

  /**
   * Advertises on a timer. It ticks more often than it advertises (at most every 10 s), so a node
   * that becomes a provider (its certificate arrives) or meets a new peer advertises soon.
   */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), Math.min(this.adIntervalMs, 10_000));
    this.timer.unref();
    this.tick();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.newPeers.stop();
    for (const n of [...this.negotiations.values()]) n.done();
  }

  /**
   * A new peer hears nothing of this provider until the next ad: it advertises once the peer
   * subscribes to the marketplace (published before that, an ad reaches no one).
   */
  peerConnected(peer: string): void {
    if (this.timer) this.newPeers.add(peer);
  }

  get address(): string {
    return this.deps.key.address;
  }

  /** This node's certificate when it provides: capacity configured and a valid own certificate. */
  ownCertificate(now = this.deps.now()): PerformanceCertificate | undefined {
    return this.deps.capacity && this.deps.certificates.newestValid(this.address, now);
  }

  private tick(): void {
    if (!this.ownCertificate()) return;
    if (this.lastAdMs !== undefined && Date.now() - this.lastAdMs < this.adIntervalMs) return;
    this.advertise();
  }

  /** Publishes this provider's signed ad (its whole capacity: receivers count the leases). */
  advertise(): void {
    const cap = this.deps.capacity;
    if (!cap) return;
    this.lastAdMs = Date.now();
    const ad = this.signed('advertisement', {
      provider: this.address,
      provider_pub_key: this.deps.key.pubKey,
      vcpus: cap.vcpus,
      memory_mb: cap.memory_mb,
      disk_gb: cap.disk_gb,
      max_concurrent_leases: cap.max_concurrent_leases,
      timestamp: this.deps.now(),
    });
    this.stats.ads_published += 1;
    this.deps.publish({ type: 'ad', ad });
  }

  // ---- providers ---------------------------------------------------------------------------------

  /** Providers with an unexpired ad, and this node when it provides, by address. */
  providers(): ProviderView[] {
    return this.providerPage(0, Number.MAX_SAFE_INTEGER).providers;
  }

  /**
   * `limit` providers by address from the `offset`th, and how many there are. Sorted and paged
   * before each one's free capacity is worked out (its open leases read): with 10,000 providers
   * advertising, every page read the leases of all of them (issue #18).
   */
  providerPage(offset: number, limit: number): { total: number; providers: ProviderView[] } {
    const now = this.deps.now();
    const all: { address: string; cap: ProviderCapacity }[] = this.ads
      .live(now)
      .filter((ad) => ad.provider !== this.address)
      .map((ad) => ({ address: ad.provider, cap: ad }));
    const own = this.deps.capacity;
    if (own && this.ownCertificate(now)) all.push({ address: this.address, cap: own });
    all.sort((a, b) => (a.address < b.address ? -1 : 1));
    const providers = all.slice(offset, offset + limit).map((p) => this.view(p.address, p.cap));
    return { total: all.length, providers };
  }

  private view(address: string, cap: ProviderCapacity): ProviderView {
    return {
      address,
      vcpus: cap.vcpus,
      memory_mb: cap.memory_mb,
      disk_gb: cap.disk_gb,
      ...availability(cap, this.deps.leasesOf(address)),
    };
  }

  // ---- gossip ------------------------------------------------------------------------------------

  /**
   * The topic validator's judgement of a decoded message: a bad signature, a key that does not
   * derive the account, or a timestamp outside the window is 'reject' (the peer relayed garbage);
   * a replay or an ad older than the one held is 'ignore'.
   */
  receive(msg: MarketplaceGossip): Verdict {
    const now = this.deps.now();
    if (msg.type === 'ad') {
      if (!this.valid('advertisement', msg.ad, now, this.adTtlNs)) return 'reject';
      if (msg.ad.provider === this.address) return 'ignore';
      if (this.ads.offer(msg.ad, now) !== 'stored') return 'ignore';
      this.stats.ads_received += 1;
      return 'accept';
    }
    if (msg.type === 'request') {
      const r = msg.request;
      if (!this.valid('request', r, now, MESSAGE_MAX_AGE_NS)) return 'reject';
      if (r.consumer === this.address || !this.firstSight(`r/${r.request_id}`, now)) return 'ignore';
      this.stats.requests_received += 1;
      // Answered after the verdict: the validator must not wait for signing and publishing.
      queueMicrotask(() => this.answer(r));
      return 'accept';
    }
    const o = msg.offer;
    if (!this.valid('offer', o, now, MESSAGE_MAX_AGE_NS)) return 'reject';
    if (o.provider === this.address || !this.firstSight(`o/${o.request_id}/${o.provider}`, now))
      return 'ignore';
    this.stats.offers_received += 1;
    const n = this.negotiations.get(o.request_id);
    if (n) {
      n.offers.push(o);
      this.judge(n);
    }
    return 'accept';
  }

  private valid<K extends MarketplaceKind>(
    kind: K,
    msg: MarketplaceMessages[K],
    now: bigint,
    maxAgeNs: bigint,
  ): boolean {
    const ts = msg.timestamp;
    if (ts > now + MAX_FUTURE_NS || ts < now - maxAgeNs) return false;
    try {
      verifyMarketplaceMessage(kind, msg, this.deps.networkId(), this.deps.verify ?? verifyBytes);
      return true;
    } catch (e) {
      if (e instanceof MarketplaceError) return false;
      throw e;
    }
  }

  /**
   * Remembers a request or offer key; false when it was seen already (a replay). When full, the
   * keys seen first go: those past the message age, then (a flood of fresh ones) the oldest. Taken
   * from the front of their order (recency-queue.ts): walking every key for the expired ones cost each
   * message of a flood a pass over all 10,000 (issue #18).
   */
  private firstSight(key: string, now: bigint): boolean {
    if (this.seen.has(key)) return false;
    const cutoff = now - MESSAGE_MAX_AGE_NS;
    for (
      let k = this.seenOrder.oldest();
      k !== undefined && (this.seen.size >= MAX_SEEN || this.seen.get(k)! < cutoff);
      k = this.seenOrder.oldest()
    ) {
      this.seen.delete(k);
      this.seenOrder.shift();
    }
    this.seen.set(key, now);
    this.seenOrder.touch(key, now);
    return true;
  }

  /**
   * A provider's answer to a request it can serve: capacity left for it (leases not yet terminal
   * count), a valid certificate, stake; the cost at that certificate's multiplier.
   */
  private answer(r: MarketplaceRequest): void {
    const now = this.deps.now();
    const cap = this.deps.capacity;
    const cert = this.ownCertificate(now);
    if (!cap || !cert) return;
    const want = { vcpus: r.vcpus, memory_mb: r.memory_mb, disk_gb: r.disk_gb, duration: r.duration };
    let cost: bigint;
    try {
      checkLeaseBounds(want, this.deps.minDurationSecs?.());
      cost = leaseCost(want, cert.price_multiplier_milli);
    } catch {
      return; // a lease the ledger would refuse: no offer
    }
    if (!fits(cap, availability(cap, this.deps.leasesOf(this.address)), want)) return;
    if (this.deps.canStake && !this.deps.canStake(cost)) return;
    const offer = this.signed('offer', {
      provider: this.address,
      provider_pub_key: this.deps.key.pubKey,
      request_id: r.request_id,
      ...want,
      total_cost: cost,
      certificate_hash: cert.hash,
      timestamp: now,
    });
    this.stats.offers_published += 1;
    this.deps.publish({ type: 'offer', offer });
    // A request submitted here (offersFor) hears this node's offer directly.
    const n = this.negotiations.get(r.request_id);
    if (n) {
      n.offers.push(offer);
      this.judge(n);
    }
  }

  // ---- consumer ----------------------------------------------------------------------------------

  /**
   * Whether a request from `consumer` reaches anyone who could offer: a connected peer, or this
   * node's own provider (never for its own account: the ledger refuses a lease to oneself).
   */
  canAsk(consumer: string): boolean {
    if (this.deps.reachable?.() ?? true) return true;
    return consumer !== this.address && this.ownCertificate() !== undefined;
  }

  /**
   * Publishes a request for `want` signed by this node's key and resolves with the cheapest valid
   * offer that `acceptable` takes (the consumer's balance check), or undefined when none came within
   * the deadline. See negotiate() for how long it listens and how offers are ranked.
   */
  async findOffer(want: LeaseWant, opts: NegotiationOptions = {}): Promise<MarketplaceOffer | undefined> {
    const now = this.deps.now();
    const request = this.signed('request', {
      consumer: this.address,
      consumer_pub_key: this.deps.key.pubKey,
      request_id: marketplaceRequestId(this.address, now),
      ...want,
      timestamp: now,
    });
    return (await this.negotiate(request, opts))[0];
  }

  /**
   * A request signed by another account (the GUI's user), submitted to this node: checked like a
   * gossiped one (key derives the consumer, signature, timestamp fresh, not seen before, a lease the
   * ledger would take), then negotiated like the node's own: published, answered by this node's own
   * provider too, and the valid offers returned cheapest first. Throws OfferRequestError.
   */
  async offersFor(request: MarketplaceRequest, opts: NegotiationOptions = {}): Promise<MarketplaceOffer[]> {
    const now = this.deps.now();
    const ts = request.timestamp;
    if (ts > now + MAX_FUTURE_NS)
      throw new OfferRequestError('request_future', 'request timestamp is in the future');
    if (ts < now - MESSAGE_MAX_AGE_NS)
      throw new OfferRequestError(
        'request_stale',
        `request timestamp is stale: older than ${MESSAGE_MAX_AGE_NS / SECOND_NS} s`,
      );
    try {
      verifyMarketplaceMessage('request', request, this.deps.networkId(), this.deps.verify ?? verifyBytes);
    } catch (e) {
      if (!(e instanceof MarketplaceError)) throw e;
      throw new OfferRequestError(
        e.code === 'ERR_MARKET_KEY' ? 'request_key' : 'request_signature',
        e.code === 'ERR_MARKET_KEY'
          ? 'consumer_pub_key does not derive consumer'
          : 'invalid request signature',
      );
    }
    try {
      checkLeaseBounds(request, this.deps.minDurationSecs?.());
    } catch (e) {
      throw new OfferRequestError('request_bounds', (e as Error).message);
    }
    if (this.negotiations.has(request.request_id) || this.seen.has(`r/${request.request_id}`))
      throw new OfferRequestError('request_replayed', 'request already submitted');
    return this.negotiate(request, opts);
  }

  /**
   * Publishes `request` and listens for offers. Each offer is checked (negotiate's terms, a
   * certificate of that provider this node knows and that has not expired, the exact cost at its
   * multiplier); one naming a certificate not known yet is held and looked at again every
   * OFFER_POLL_MS. The listening ends at the deadline, or as soon as every provider whose live ad
   * leaves room for the lease has answered, or `gatherMs` after the first acceptable offer, whichever
   * comes first. Resolves with the acceptable offers, cheapest first; ties go to the provider with
   * the better reputation, then the lower address. Nobody to ask (canAsk): [] at once, nothing sent.
   */
  negotiate(request: MarketplaceRequest, opts: NegotiationOptions = {}): Promise<MarketplaceOffer[]> {
    if (!this.canAsk(request.consumer)) return Promise.resolve([]);
    const now = this.deps.now();
    const own = request.consumer !== this.address;
    const expected = this.couldServe(request, own, now);
    const gatherMs = opts.gatherMs ?? this.gatherMs;
    return new Promise((resolve) => {
      const poll = setInterval(() => this.judge(n), OFFER_POLL_MS);
      const deadline = setTimeout(() => n.done(), opts.deadlineMs ?? OFFER_DEADLINE_MS);
      let gather: NodeJS.Timeout | undefined;
      const n: Negotiation = {
        request,
        offers: [],
        taken: [],
        answered: new Set(),
        expected,
        acceptable: opts.acceptable ?? (() => true),
        firstTaken: () => {
          gather ??= setTimeout(() => n.done(), gatherMs);
        },
        done: () => {
          clearInterval(poll);
          clearTimeout(deadline);
          clearTimeout(gather);
          if (this.negotiations.get(request.request_id) !== n) return;
          this.negotiations.delete(request.request_id);
          resolve(this.ranked(n.taken));
        },
      };
      this.negotiations.set(request.request_id, n);
      this.firstSight(`r/${request.request_id}`, now);
      this.stats.requests_published += 1;
      this.deps.publish({ type: 'request', request });
      // Our own gossip is not delivered back to us: this node's provider answers here.
      if (own) this.answer(request);
    });
  }

  /** Providers whose live ad (or own capacity) leaves room for `want`, by what this node knows. */
  private couldServe(want: LeaseWant, includeSelf: boolean, now: bigint): Set<string> {
    const out = new Set<string>();
    const room = (address: string, cap: ProviderCapacity) =>
      fits(cap, availability(cap, this.deps.leasesOf(address)), want);
    for (const ad of this.ads.live(now))
      if (ad.provider !== this.address && room(ad.provider, ad)) out.add(ad.provider);
    const own = this.deps.capacity;
    if (includeSelf && own && this.ownCertificate(now) && room(this.address, own)) out.add(this.address);
    return out;
  }

  /** Cheapest first; then the better provider reputation; then the lower address. */
  private ranked(offers: MarketplaceOffer[]): MarketplaceOffer[] {
    const rep = new Map<string, bigint>();
    const score = (a: string) => {
      let s = rep.get(a);
      if (s === undefined) rep.set(a, (s = this.deps.reputation?.(a) ?? 0n));
      return s;
    };
    return [...offers].sort((a, b) => {
      if (a.total_cost !== b.total_cost) return a.total_cost < b.total_cost ? -1 : 1;
      const ra = score(a.provider);
      const rb = score(b.provider);
      if (ra !== rb) return ra > rb ? -1 : 1;
      return a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0;
    });
  }

  /**
   * Sorts held offers: valid and acceptable ones are taken, invalid ones dropped, those naming an
   * unknown certificate kept for later. Ends the negotiation once every expected provider answered.
   */
  private judge(n: Negotiation): void {
    const now = this.deps.now();
    for (const offer of [...n.offers]) {
      const verdict = this.offerValidity(n.request, offer, now);
      if (verdict === 'wait') continue;
      n.offers.splice(n.offers.indexOf(offer), 1);
      n.answered.add(offer.provider);
      if (verdict === 'valid' && n.acceptable(offer)) n.taken.push(offer);
    }
    if (n.taken.length === 0) return;
    if (n.expected.size > 0 && [...n.expected].every((p) => n.answered.has(p))) n.done();
    else n.firstTaken();
  }

  private offerValidity(
    r: MarketplaceRequest,
    o: MarketplaceOffer,
    now: bigint,
  ): 'valid' | 'invalid' | 'wait' {
    if (o.vcpus !== r.vcpus || o.memory_mb !== r.memory_mb || o.disk_gb !== r.disk_gb) return 'invalid';
    if (o.duration !== r.duration) return 'invalid';
    const cert = this.deps.certificates.get(o.certificate_hash);
    if (!cert) return 'wait';
    if (cert.provider !== o.provider || cert.expires_at < now) return 'invalid';
    try {
      return leaseCost(o, cert.price_multiplier_milli) === o.total_cost ? 'valid' : 'invalid';
    } catch {
      return 'invalid';
    }
  }

  private signed<K extends MarketplaceKind>(kind: K, msg: UnsignedMarketplace<K>): MarketplaceMessages[K] {
    const digest = marketplaceDigest(kind, msg, this.deps.networkId());
    const signature = bytesToHex((this.deps.sign ?? signBytes)(digest, this.deps.key.seed));
    return { ...msg, signature } as MarketplaceMessages[K];
  }
}
