import { afterEach, describe, expect, it, vi } from 'vitest';
import { AD_TTL_NS, AdBook } from '../../node-core/leasing/marketplace/ad-book.ts';
import { availability, fits, type ProviderCapacity } from '../../node-core/leasing/marketplace/capacity.ts';
import { LeaseRequestError, LeaseRequests } from '../../node-core/leasing/marketplace/lease-requests.ts';
import {
  Marketplace,
  type MarketplaceDeps,
  MAX_FUTURE_NS,
} from '../../node-core/leasing/marketplace/marketplace.ts';
import { leaseCost } from '../../node-core/leasing/pricing.ts';
import type { LeaseRecord, LeaseState } from '../../node-core/leasing/records.ts';
import { decodeMarketplaceMessage, encodeMarketplaceMessage } from '../../node-core/net/gossip.ts';
import type { PerformanceCertificate } from '../../node-core/protocol/certificate.ts';
import { verifyBytesNode, signBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { type KeyPair, keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import {
  type MarketplaceAdvertisement,
  type MarketplaceGossip,
  type MarketplaceOffer,
  marketplaceDigest,
  marketplaceRequestId,
  signMarketplaceMessage,
} from '../../node-core/protocol/marketplace.ts';
import { testCertificate } from '../helpers/certificates.ts';

/**
 * The marketplace (reference-behavior.md 4.9) without a network: the ad book (latest ad per
 * provider, expiry), availability from lease records, the component's gossip verdicts, a provider's
 * offers and a consumer's choice of offer, on a fake clock with real signatures.
 */

const NET = 'devnet-test';
const MIN_NS = 60_000_000_000n;
const T0 = 1_800_000_000_000_000_000n;
const keyOf = (n: number) => keyPairFromSeed(new Uint8Array(32).fill(n));
const P1 = keyOf(1);
const P2 = keyOf(2);
const ME = keyOf(3);
const CONSUMER = keyOf(4);
const seed = (k: KeyPair) => hexToBytes(k.seed_hex);

function ad(k: KeyPair, timestamp: bigint, vcpus = 4n): MarketplaceAdvertisement {
  return signMarketplaceMessage(
    'advertisement',
    {
      provider: k.address,
      provider_pub_key: k.pub_key,
      vcpus,
      memory_mb: 8192n,
      disk_gb: 100n,
      max_concurrent_leases: 0n,
      timestamp,
    },
    NET,
    seed(k),
  );
}

function lease(provider: string, state: LeaseState, vcpus = 1n, memory_mb = 1024n): LeaseRecord {
  return {
    lease_hash: `${state}${vcpus}`.padEnd(64, '0'),
    state,
    consumer: CONSUMER.address,
    provider,
    vcpus,
    memory_mb,
    disk_gb: 10n,
    duration: 60n,
    cost: 1n,
    stake: 0n,
    start_time: 0n,
    settled: state === 'settled',
    renewal_count: 0,
    renewed_cost: 0n,
    renewal_emission: 0n,
    created_at: T0,
  };
}

function certificate(k: KeyPair, multiplier = 1500n): PerformanceCertificate {
  return testCertificate(k, seed(k), NET, {
    issuedAt: T0 - MIN_NS,
    expiresAt: T0 + 7n * 24n * 60n * MIN_NS,
    multiplier,
  });
}

const CAP: ProviderCapacity = { vcpus: 4n, memory_mb: 8192n, disk_gb: 100n, max_concurrent_leases: 0n };
const WANT = { vcpus: 1n, memory_mb: 1024n, disk_gb: 1n, duration: 3600n };

describe('AdBook', () => {
  it('keeps the latest ad per provider and ignores older ones and replays', () => {
    const book = new AdBook();
    expect(book.offer(ad(P1, T0), T0)).toBe('stored');
    expect(book.offer(ad(P1, T0), T0)).toBe('stale');
    expect(book.offer(ad(P1, T0 - 1n, 8n), T0)).toBe('stale');
    expect(book.offer(ad(P1, T0 + 5n, 2n), T0)).toBe('stored');
    expect(book.offer(ad(P2, T0), T0)).toBe('stored');
    expect(book.get(P1.address, T0)?.vcpus).toBe(2n);
    expect(book.live(T0).map((a) => a.provider)).toEqual([P1.address, P2.address].sort());
  });

  it('forgets an ad 15 minutes after it was signed, and refuses one that old', () => {
    const book = new AdBook();
    book.offer(ad(P1, T0), T0);
    expect(book.live(T0 + AD_TTL_NS)).toHaveLength(1);
    expect(book.live(T0 + AD_TTL_NS + 1n)).toHaveLength(0);
    expect(book.size).toBe(0);
    expect(book.offer(ad(P2, T0), T0 + AD_TTL_NS + 1n)).toBe('stale');
  });

  it('holds at most `max` providers, making room from expired ones first', () => {
    const book = new AdBook({ max: 1 });
    expect(book.offer(ad(P1, T0), T0)).toBe('stored');
    expect(book.offer(ad(P2, T0), T0)).toBe('stale');
    expect(book.offer(ad(P2, T0 + AD_TTL_NS + 1n), T0 + AD_TTL_NS + 1n)).toBe('stored');
  });
});

describe('availability', () => {
  it('counts created and accepted leases, never terminal ones, and floors at zero', () => {
    const a = availability(CAP, [
      lease(P1.address, 'created', 1n),
      lease(P1.address, 'accepted', 2n),
      lease(P1.address, 'settled', 3n),
      lease(P1.address, 'cancelled', 3n),
      lease(P1.address, 'expired', 3n),
      lease(P1.address, 'unfulfilled', 3n),
    ]);
    expect(a).toEqual({
      active_leases: 2n,
      available_vcpus: 1n,
      available_memory_mb: 8192n - 2048n,
      available_disk_gb: 80n,
    });
    const over = availability(CAP, [lease(P1.address, 'accepted', 9n, 9000n)]);
    expect(over.available_vcpus).toBe(0n);
    expect(over.available_memory_mb).toBe(0n);
  });

  it('fits a lease in what is left, under the lease cap', () => {
    const a = availability(CAP, [lease(P1.address, 'accepted', 3n)]);
    expect(fits(CAP, a, { vcpus: 1n, memory_mb: 1024n, disk_gb: 1n })).toBe(true);
    expect(fits(CAP, a, { vcpus: 2n, memory_mb: 0n, disk_gb: 0n })).toBe(false);
    expect(fits({ ...CAP, max_concurrent_leases: 1n }, a, { vcpus: 1n, memory_mb: 0n, disk_gb: 0n })).toBe(
      false,
    );
  });
});

interface Harness {
  market: Marketplace;
  sent: MarketplaceGossip[];
  clock: { now: bigint };
  certs: Map<string, PerformanceCertificate>;
  leases: LeaseRecord[];
}

function harness(key: KeyPair, over: Partial<MarketplaceDeps> = {}): Harness {
  const sent: MarketplaceGossip[] = [];
  const clock = { now: T0 };
  const certs = new Map<string, PerformanceCertificate>();
  const leases: LeaseRecord[] = [];
  const market = new Marketplace({
    key: { seed: seed(key), pubKey: key.pub_key, address: key.address },
    networkId: () => NET,
    now: () => clock.now,
    publish: (m) => sent.push(m),
    certificates: {
      get: (h) => certs.get(h),
      newestValid: (p, now) => [...certs.values()].find((c) => c.provider === p && c.expires_at >= now),
    },
    leasesOf: (p) => leases.filter((l) => l.provider === p),
    ...over,
  });
  return { market, sent, clock, certs, leases };
}

function request(k: KeyPair, at: bigint, want = WANT) {
  return signMarketplaceMessage(
    'request',
    {
      consumer: k.address,
      consumer_pub_key: k.pub_key,
      request_id: marketplaceRequestId(k.address, at),
      ...want,
      timestamp: at,
    },
    NET,
    seed(k),
  );
}

function offerFor(
  k: KeyPair,
  requestId: string,
  cert: PerformanceCertificate,
  over: Partial<MarketplaceOffer> = {},
): MarketplaceOffer {
  const unsigned = {
    provider: k.address,
    provider_pub_key: k.pub_key,
    request_id: requestId,
    ...WANT,
    total_cost: leaseCost(WANT, cert.price_multiplier_milli),
    certificate_hash: cert.hash,
    timestamp: T0,
    ...over,
  };
  return signMarketplaceMessage('offer', unsigned, NET, seed(k));
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe('Marketplace', () => {
  afterEach(() => vi.useRealTimers());

  it('accepts a signed ad, ignores a replay, rejects forgeries and timestamps out of window', () => {
    const { market } = harness(ME);
    expect(market.receive({ type: 'ad', ad: ad(P1, T0) })).toBe('accept');
    expect(market.receive({ type: 'ad', ad: ad(P1, T0) })).toBe('ignore');
    const forged = { ...ad(P2, T0 + 1n), vcpus: 64n };
    expect(market.receive({ type: 'ad', ad: forged })).toBe('reject');
    // A key that does not derive the provider's address.
    const stolen = signMarketplaceMessage(
      'advertisement',
      { ...ad(P2, T0), provider: P1.address, timestamp: T0 + 2n },
      NET,
      seed(P2),
    );
    expect(market.receive({ type: 'ad', ad: stolen })).toBe('reject');
    expect(market.receive({ type: 'ad', ad: ad(P2, T0 + MAX_FUTURE_NS + 1n) })).toBe('reject');
    expect(market.receive({ type: 'ad', ad: ad(P2, T0 - AD_TTL_NS - 1n) })).toBe('reject');
    // Another network's signature does not verify here.
    const other = signMarketplaceMessage('advertisement', { ...ad(P2, T0) }, 'othernet', seed(P2));
    expect(market.receive({ type: 'ad', ad: other })).toBe('reject');
    expect(market.providers().map((p) => p.address)).toEqual([P1.address]);
  });

  it("a page of providers reads the leases of that page's providers only", () => {
    const keys = Array.from({ length: 30 }, (_, i) => keyOf(i + 40));
    const asked: string[] = [];
    const h = harness(ME, { leasesOf: (p) => (asked.push(p), []) });
    for (const k of keys) expect(h.market.receive({ type: 'ad', ad: ad(k, T0) })).toBe('accept');
    const byAddress = keys.map((k) => k.address).sort();
    const page = h.market.providerPage(10, 5);
    expect(page.total).toBe(30);
    expect(page.providers.map((p) => p.address)).toEqual(byAddress.slice(10, 15));
    expect(asked).toEqual(byAddress.slice(10, 15));
    expect(h.market.providerPage(28, 5).providers.map((p) => p.address)).toEqual(byAddress.slice(28));
  });

  it('lists providers from unexpired ads and itself when it provides, with live availability', () => {
    const h = harness(ME, { capacity: CAP });
    h.market.receive({ type: 'ad', ad: ad(P1, T0) });
    h.leases.push(lease(P1.address, 'created', 1n), lease(P1.address, 'settled', 2n));
    // No certificate of its own yet: not listed as a provider.
    expect(h.market.providers().map((p) => p.address)).toEqual([P1.address]);
    const mine = certificate(ME);
    h.certs.set(mine.hash, mine);
    const all = h.market.providers();
    expect(all.map((p) => p.address)).toEqual([P1.address, ME.address].sort());
    expect(all.find((p) => p.address === P1.address)).toEqual({
      address: P1.address,
      vcpus: 4n,
      memory_mb: 8192n,
      disk_gb: 100n,
      active_leases: 1n,
      available_vcpus: 3n,
      available_memory_mb: 8192n - 1024n,
      available_disk_gb: 90n,
    });
    h.clock.now = T0 + AD_TTL_NS + 1n;
    expect(h.market.providers().map((p) => p.address)).toEqual([ME.address]);
  });

  it('advertises once it has a certificate, then every interval', () => {
    vi.useFakeTimers();
    const h = harness(ME, { capacity: CAP });
    const market = new Marketplace(
      {
        key: { seed: seed(ME), pubKey: ME.pub_key, address: ME.address },
        networkId: () => NET,
        now: () => h.clock.now,
        publish: (m) => h.sent.push(m),
        certificates: {
          get: (x) => h.certs.get(x),
          newestValid: (p) => [...h.certs.values()].find((c) => c.provider === p),
        },
        leasesOf: () => [],
        capacity: CAP,
      },
      { adIntervalMs: 1000 },
    );
    market.start();
    vi.advanceTimersByTime(3000);
    expect(h.sent).toHaveLength(0);
    const mine = certificate(ME);
    h.certs.set(mine.hash, mine);
    vi.advanceTimersByTime(1000);
    expect(h.sent).toHaveLength(1);
    expect(h.sent[0]).toMatchObject({ type: 'ad', ad: { provider: ME.address, vcpus: 4n } });
    vi.advanceTimersByTime(1000);
    expect(h.sent).toHaveLength(2);
    market.stop();
    vi.advanceTimersByTime(5000);
    expect(h.sent).toHaveLength(2);
  });

  it('advertises to a new peer once it subscribes to the marketplace, not before', () => {
    vi.useFakeTimers();
    const subscribed = new Set<string>();
    const h = harness(ME, { capacity: CAP, subscribes: (p) => subscribed.has(p) });
    const mine = certificate(ME);
    h.certs.set(mine.hash, mine);
    h.market.start();
    expect(h.sent).toHaveLength(1);
    h.market.peerConnected('peer-b');
    // B's subscription arrives 12 s after its connection (a loaded machine): an ad before that
    // reaches no one, and the next would come only at the interval (5 minutes).
    vi.advanceTimersByTime(12_000);
    expect(h.sent).toHaveLength(1);
    subscribed.add('peer-b');
    vi.advanceTimersByTime(100);
    expect(h.sent).toHaveLength(2);
    expect(h.sent[1]).toMatchObject({ type: 'ad', ad: { provider: ME.address } });
    vi.advanceTimersByTime(60_000);
    expect(h.sent).toHaveLength(2);
    h.market.stop();
  });

  it('a provider offers what fits at its certificate multiplier, and only then', async () => {
    const h = harness(P1, { capacity: { ...CAP, vcpus: 2n } });
    expect(h.market.receive({ type: 'request', request: request(CONSUMER, T0) })).toBe('accept');
    await flush();
    expect(h.sent).toHaveLength(0); // no certificate: no offer
    const cert = certificate(P1, 1500n);
    h.certs.set(cert.hash, cert);
    expect(h.market.receive({ type: 'request', request: request(CONSUMER, T0) })).toBe('ignore');
    h.market.receive({ type: 'request', request: request(CONSUMER, T0 + 1n) });
    await flush();
    expect(h.sent).toHaveLength(1);
    const offer = (h.sent[0] as { offer: MarketplaceOffer }).offer;
    expect(offer).toMatchObject({
      provider: P1.address,
      request_id: marketplaceRequestId(CONSUMER.address, T0 + 1n),
      total_cost: leaseCost(WANT, 1500n),
      certificate_hash: cert.hash,
    });
    // A lease not yet accepted holds its resources: 2 vCPUs are taken.
    h.leases.push(lease(P1.address, 'created', 2n));
    h.market.receive({ type: 'request', request: request(CONSUMER, T0 + 2n) });
    await flush();
    expect(h.sent).toHaveLength(1);
    // A request signed too long ago is a replay.
    h.clock.now = T0 + 10n * MIN_NS;
    expect(h.market.receive({ type: 'request', request: request(CONSUMER, T0 + 3n) })).toBe('reject');
  });

  it('remembers 10,000 requests at most, the first seen going first, and forgets expired ones as it goes', () => {
    const h = harness(P1, { verify: verifyBytesNode });
    const consumerSeed = seed(CONSUMER);
    // Signed by libsodium (the isomorphic signer would take seconds for 10,050).
    const fastRequest = (at: bigint) => {
      const msg = {
        consumer: CONSUMER.address,
        consumer_pub_key: CONSUMER.pub_key,
        request_id: marketplaceRequestId(CONSUMER.address, at),
        ...WANT,
        timestamp: at,
      };
      const signature = bytesToHex(signBytesNode(marketplaceDigest('request', msg, NET), consumerSeed));
      return { type: 'request' as const, request: { ...msg, signature } };
    };
    const inside = h.market as unknown as { seen: Map<string, bigint>; seenOrder: { visited: number } };
    const first = fastRequest(T0);
    expect(h.market.receive(first)).toBe('accept');
    for (let i = 1n; i < 10_050n; i++) {
      h.clock.now = T0 + i * 1_000_000n; // a millisecond apart
      expect(h.market.receive(fastRequest(T0 + i))).toBe('accept');
    }
    expect(inside.seen.size).toBe(10_000);
    // Constant work a message: the order's places looked at stay within a small multiple of them.
    expect(inside.seenOrder.visited).toBeLessThan(3 * 10_050);
    // A recent one is a replay; the first, dropped to make room, is news again.
    expect(h.market.receive(fastRequest(T0 + 10_049n))).toBe('ignore');
    expect(h.market.receive(first)).toBe('accept');
    // Two minutes on, every one of them has aged out: dropped as the next one comes.
    h.clock.now = T0 + 10_050n * 1_000_000n + 121n * 1_000_000_000n;
    expect(h.market.receive(fastRequest(h.clock.now))).toBe('accept');
    expect(inside.seen.size).toBe(1);
  });

  it('a consumer takes the first valid offer, skipping a wrong price and an unaffordable one', async () => {
    const h = harness(ME);
    const c1 = certificate(P1, 1500n);
    const c2 = certificate(P2, 2000n);
    h.certs.set(c1.hash, c1);
    h.certs.set(c2.hash, c2);
    const found = h.market.findOffer(WANT, {
      deadlineMs: 5000,
      acceptable: (o) => o.provider !== P1.address || o.total_cost < 100n,
    });
    const req = (h.sent[0] as { request: { request_id: string } }).request;
    expect(h.sent[0]!.type).toBe('request');
    // P2 under-prices: not what the ledger would accept.
    expect(
      h.market.receive({ type: 'offer', offer: offerFor(P2, req.request_id, c2, { total_cost: 1n }) }),
    ).toBe('accept');
    h.market.receive({ type: 'offer', offer: offerFor(P1, req.request_id, c1) }); // not acceptable
    // One offer per provider and request: P2's second is a replay.
    expect(
      h.market.receive({ type: 'offer', offer: offerFor(P2, req.request_id, c2, { timestamp: T0 + 1n }) }),
    ).toBe('ignore');
    const p3 = keyOf(5);
    const c3 = certificate(p3, 2000n);
    h.certs.set(c3.hash, c3);
    const good = offerFor(p3, req.request_id, c3);
    h.market.receive({ type: 'offer', offer: good });
    expect(await found).toEqual(good);
  });

  it('holds an offer whose certificate is not known yet, and gives up at the deadline', async () => {
    const h = harness(ME);
    const found = h.market.findOffer(WANT, { deadlineMs: 1200 });
    const req = (h.sent[0] as { request: { request_id: string } }).request;
    const c1 = certificate(P1);
    const o = offerFor(P1, req.request_id, c1);
    h.market.receive({ type: 'offer', offer: o });
    h.certs.set(c1.hash, c1); // arrives after the offer; the next poll takes it
    expect(await found).toEqual(o);
    const none = await h.market.findOffer(WANT, { deadlineMs: 50 });
    expect(none).toBeUndefined();
  });
});

describe('marketplace gossip', () => {
  it('round-trips and refuses unknown keys', () => {
    const msg: MarketplaceGossip = { type: 'ad', ad: ad(P1, T0) };
    expect(decodeMarketplaceMessage(encodeMarketplaceMessage(msg))).toEqual(msg);
    const enc = (o: unknown) => new TextEncoder().encode(stringifyJson(o));
    expect(decodeMarketplaceMessage(enc({ ...msg, extra: 1 }))).toBeUndefined();
    expect(decodeMarketplaceMessage(enc({ type: 'ad', ad: { ...msg.ad, extra: 1 } }))).toBeUndefined();
    expect(decodeMarketplaceMessage(enc({ type: 'offer', ad: msg.ad }))).toBeUndefined();
    expect(decodeMarketplaceMessage(new TextEncoder().encode('{'))).toBeUndefined();
  });
});

describe('LeaseRequests', () => {
  const wallet = (xusd: bigint) => ({
    address: ME.address,
    balance: () => xusd,
    write: vi.fn(async (draft: (b: (a: string) => bigint) => object) => ({
      ...draft(() => xusd),
      hash: 'aa'.repeat(32),
    })),
  });

  it('refuses before asking the marketplace when the account cannot pay the lowest price', async () => {
    const findOffer = vi.fn();
    const lr = new LeaseRequests({ findOffer, wallet: wallet(1n) as never });
    await expect(lr.request(WANT, 'ef'.repeat(32))).rejects.toMatchObject({
      code: 'insufficient_balance',
    });
    expect(findOffer).not.toHaveBeenCalled();
  });

  it('no offer is "no providers"; an offer builds the lease block from its terms', async () => {
    const w = wallet(10n ** 9n);
    const none = new LeaseRequests({ findOffer: async () => undefined, wallet: w as never });
    const err = await none.request(WANT, 'ef'.repeat(32)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseRequestError);
    expect((err as LeaseRequestError).code).toBe('no_providers');
    const cert = certificate(P1);
    const offer = offerFor(P1, marketplaceRequestId(ME.address, T0), cert);
    const lr = new LeaseRequests({ findOffer: async () => offer, wallet: w as never });
    const block = await lr.request(WANT, 'ef'.repeat(32));
    expect(block).toMatchObject({
      type: 'lease',
      asset: 'XUSD',
      destination: P1.address,
      amount: offer.total_cost,
      certificate_hash: cert.hash,
      access_pub_key: 'ef'.repeat(32),
      balance: 10n ** 9n - offer.total_cost,
      ...WANT,
    });
  });
});
