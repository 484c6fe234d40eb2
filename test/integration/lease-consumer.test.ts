import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeOptions } from '../../node-core/node.ts';
import type { PerformanceCertificate } from '../../node-core/protocol/certificate.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import {
  marketplaceRequestId,
  signMarketplaceMessage,
  verifyMarketplaceMessage,
} from '../../node-core/protocol/marketplace.ts';
import { leaseCost } from '../../node-core/leasing/pricing.ts';
import { acceptBlock, certify, leaseBlock, SHORT_WINDOWS, SMALL, SMALL_COST } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, nowNs, XE } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * The consumer side in one node (no peers): a lease request with nobody to ask fails at once;
 * `POST /lease/offers` checks a request signed by the user's own account and lets this node's own
 * provider answer it (our gossip never comes back to us); `POST /lease/attestations` gathers the
 * timekeeper's signature; `POST /lease/{hash}/renew` extends the node account's lease with a
 * lease_renew the node signs; `POST /lease/{hash}/hold` renews before expiry on a clock the test
 * moves, warns of low funds before a renewal fails, stops when the funds run out, and survives a
 * restart.
 */

type Json = Record<string, JsonValue>;
const SECOND_NS = 1_000_000_000n;
const CAPACITY = { vcpus: 8n, memory_mb: 16_384n, disk_gb: 100n, max_concurrent_leases: 0n };
const OWN_MULTIPLIER = 1200n;
const RENEW_120 = leaseCost({ ...SMALL, duration: 120n }, 1000n);
/** lease 1 + its renewal + lease 2 + two hold segments + 100 left over. */
const FUNDS = SMALL_COST + RENEW_120 + SMALL_COST + 2n * SMALL_COST + 100n;

describe('lease consumer: offers, attestations, renew and hold on one node', () => {
  let t: TestNode;
  let kit: Kit;
  let me: Account; // the node's own account, driven by hand for its lease blocks
  let p: Account; // a provider the test controls
  let cert: PerformanceCertificate;
  let lease1: string;
  let lease1Start: bigint;
  let lease2: string;
  const clock = { offset: 0n };
  const opts: Partial<NodeOptions> = {
    genesisSet: SHORT_WINDOWS,
    now: () => nowNs() + clock.offset,
    ownCertificate: false,
    provide: CAPACITY,
    marketplace: { offerDeadlineMs: 3000, hold: { checkMs: 100, renewBeforeSecs: 30, lowFundsSegments: 3 } },
  };

  const admin = () => ({ authorization: `Bearer ${t.node.adminToken}` });
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    http(t.node.url, 'POST', path, body, headers);
  const lease = async (hash: string) => (await http(t.node.url, 'GET', `/leases/${hash}`)).body as Json;
  const xusd = async (address: string) =>
    BigInt(((await http(t.node.url, 'GET', `/accounts/${address}/balance`)).body as Json).XUSD as string);

  beforeAll(async () => {
    t = await startTestNode(opts);
    kit = await kitOf(t);
    me = new Account(kit, seedOf(t.node.nodeKey.seed_hex));
    await me.sync();
    await me.claim(XE);
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: FUNDS, balance: minter.bal('XUSD') + FUNDS }),
    );
    await me.receive(await minter.send(me.address, FUNDS, 'XUSD'));
    p = new Account(kit);
    await p.claim(XE);
    cert = await certify(t, kit, p);
    // The node provides too, with its own certificate (the test's, at x1.2).
    await certify(t, kit, me, { multiplier: OWN_MULTIPLIER });
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('a lease request with nobody to ask fails at once, before anything is published', async () => {
    const published = t.node.marketplace.stats.requests_published;
    const started = Date.now();
    const res = await post(
      '/lease/request',
      { vcpus: 1, memory_mb: 1024, disk_gb: 1, duration: 60, access_pub_key: 'ef'.repeat(32) },
      admin(),
    );
    expect(res.status, res.text).toBe(400);
    expect((res.body as Json).error).toMatch(/^no providers: this node has no peers to ask/);
    expect(Date.now() - started).toBeLessThan(1000); // the deadline is 3 s
    expect(t.node.marketplace.stats.requests_published).toBe(published);
  });

  describe('POST /lease/offers', () => {
    const user = () => new Account(kit);
    const signedRequest = (u: Account, over: Record<string, unknown> = {}, at = nowNs()) => {
      const unsigned = {
        consumer: u.address,
        consumer_pub_key: u.key.pub_key,
        request_id: marketplaceRequestId(u.address, at),
        ...SMALL,
        timestamp: at,
      };
      return { ...signMarketplaceMessage('request', unsigned, kit.networkId, u.seed), ...over };
    };

    it("answers a user-signed request with this node's own offer, at once", async () => {
      const u = user();
      const request = signedRequest(u);
      const started = Date.now();
      const res = await post('/lease/offers', { request, wait_ms: 5000 });
      expect(res.status, res.text).toBe(200);
      // Every provider that could serve (only this node) answered: no waiting for the deadline.
      expect(Date.now() - started).toBeLessThan(2000);
      const body = res.body as { request_id: string; offers: Json[] };
      expect(body.request_id).toBe(request.request_id);
      expect(body.offers).toHaveLength(1);
      const o = body.offers[0]!;
      expect(o).toMatchObject({
        provider: me.address,
        provider_pub_key: me.key.pub_key,
        request_id: request.request_id,
        vcpus: 1,
        memory_mb: 1024,
        disk_gb: 1,
        duration: 60,
        total_cost: String(leaseCost(SMALL, OWN_MULTIPLIER)),
        price_multiplier_milli: 1200,
      });
      // A real offer the user can check and build the lease block from.
      expect(() =>
        verifyMarketplaceMessage(
          'offer',
          {
            ...(o as unknown as Parameters<typeof verifyMarketplaceMessage<'offer'>>[1]),
            vcpus: 1n,
            memory_mb: 1024n,
            disk_gb: 1n,
            duration: 60n,
            total_cost: BigInt(o.total_cost as string),
            timestamp: BigInt(o.timestamp as number),
          },
          kit.networkId,
        ),
      ).not.toThrow();
      // The same request again is a replay.
      const again = await post('/lease/offers', { request });
      expect(again.status).toBe(400);
      expect((again.body as Json).error).toBe('request already submitted');
    });

    it('refuses a bad signature, a key of another account, a stale or malformed request', async () => {
      const u = user();
      const cases: [unknown, RegExp][] = [
        [signedRequest(u, { duration: 120n }), /^invalid request signature$/],
        [
          signedRequest(u, { consumer_pub_key: user().key.pub_key }),
          /^consumer_pub_key does not derive consumer$/,
        ],
        [signedRequest(u, {}, nowNs() - 300n * SECOND_NS), /^request timestamp is stale/],
        [signedRequest(u, {}, nowNs() + 600n * SECOND_NS), /^request timestamp is in the future/],
        [{ ...signedRequest(u), vcpus: -1 }, /^invalid request: /],
        [undefined, /^request is required$/],
      ];
      const offered = t.node.marketplace.stats.offers_published;
      for (const [request, error] of cases) {
        const res = await post('/lease/offers', request === undefined ? {} : { request });
        expect(res.status, res.text).toBe(400);
        expect((res.body as Json).error).toMatch(error);
      }
      const bad = await post('/lease/offers', { request: signedRequest(u), wait_ms: 0 });
      expect(bad.status).toBe(400);
      expect((bad.body as Json).error).toMatch(/^wait_ms must be/);
      expect(t.node.marketplace.stats.offers_published).toBe(offered);
    });
  });

  describe('POST /lease/{hash}/renew and /lease/attestations', () => {
    it('refuses a lease not yet accepted, then renews an accepted one: extended, escrowed, paid', async () => {
      await me.sync();
      const l = await me.commit(leaseBlock(me, p, cert));
      lease1 = l.hash!;
      const early = await post(`/lease/${lease1}/renew`, { duration: 120 }, admin());
      expect(early.status).toBe(400);
      expect((early.body as Json).error).toMatch(/not yet accepted/);

      lease1Start = nowNs() - 10n * SECOND_NS;
      await p.commit(acceptBlock(t, p, l, lease1Start));
      const before = await xusd(me.address);
      const res = await post(`/lease/${lease1}/renew`, { duration: 120 }, admin());
      expect(res.status, res.text).toBe(201);
      const body = res.body as Json;
      expect(body.cost).toBe(String(RENEW_120));
      expect(BigInt(body.expires_at as number)).toBe(lease1Start + 180n * SECOND_NS);
      expect(await lease(lease1)).toMatchObject({
        state: 'accepted',
        duration: 180,
        cost: String(SMALL_COST + RENEW_120),
        renewals: [{ renew_hash: body.renew_hash, duration: 120, cost: String(RENEW_120) }],
      });
      expect((await http(t.node.url, 'GET', `/blocks/${body.renew_hash as string}`)).body).toMatchObject({
        type: 'lease_renew',
        account: me.address,
        source: lease1,
        certificate_hash: cert.hash,
      });
      // The escrow grew by the renewal; the node account paid exactly that.
      const escrow = (await http(t.node.url, 'GET', `/pending/${p.address}`)).body as Json[];
      expect(escrow).toEqual([
        expect.objectContaining({ hash: lease1, amount: String(SMALL_COST + RENEW_120) }),
      ]);
      expect(await xusd(me.address)).toBe(before - RENEW_120);
    });

    it('refuses what it cannot renew: another account’s lease, unknown, bad duration, no token', async () => {
      const c = new Account(kit);
      await c.claim(XE);
      const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
      await minter.sync();
      await minter.commit(
        minter.build({ type: 'mint', asset: 'XUSD', amount: XE, balance: minter.bal('XUSD') + XE }),
      );
      await c.receive(await minter.send(c.address, XE, 'XUSD'));
      const other = await c.commit(leaseBlock(c, p, cert));
      const forbidden = await post(`/lease/${other.hash!}/renew`, { duration: 60 }, admin());
      expect(forbidden.status).toBe(403);
      expect((forbidden.body as Json).error).toMatch(/is not this lease's consumer/);
      const unknown = await post(`/lease/${'ab'.repeat(32)}/renew`, { duration: 60 }, admin());
      expect(unknown.status).toBe(404);
      for (const duration of [59, 31_536_001, '60', 60.5]) {
        const r = await post(`/lease/${lease1}/renew`, { duration }, admin());
        expect(r.status).toBe(400);
        expect((r.body as Json).error).toMatch(/^duration must be/);
      }
      expect((await post(`/lease/${lease1}/renew`, { duration: 60 })).status).toBe(401);
      const hold = await post(`/lease/${other.hash!}/hold`, { enabled: true }, admin());
      expect(hold.status).toBe(403);
    });

    it('gathers attestations for the user’s own blocks, with their median', async () => {
      const res = await post('/lease/attestations', { lease_hash: lease1 });
      expect(res.status, res.text).toBe(200);
      const body = res.body as { attestations: Json[]; median: number | bigint };
      expect(body.attestations).toHaveLength(1);
      expect(body.attestations[0]).toMatchObject({ public_key: t.node.nodeKey.pub_key });
      expect(BigInt(body.median)).toBe(BigInt(body.attestations[0]!.timestamp as number));
      expect(BigInt(body.median) - nowNs()).toBeLessThan(5n * SECOND_NS);
      expect((await post('/lease/attestations', { lease_hash: 'cd'.repeat(32) })).status).toBe(404);
      expect((await post('/lease/attestations', { lease_hash: 'xyz' })).status).toBe(400);
    });
  });

  describe('POST /lease/{hash}/hold', () => {
    it('renews before expiry, warns of low funds first, stops when they run out', async () => {
      await me.sync();
      const l = await me.commit(leaseBlock(me, p, cert));
      lease2 = l.hash!;
      // Accepted 50 s ago: 10 s left, inside the 30 s lead, so the first renewal is due at once.
      const start = nowNs() - 50n * SECOND_NS;
      await p.commit(acceptBlock(t, p, l, start));
      expect(await xusd(me.address)).toBe(2n * SMALL_COST + 100n);
      expect((await lease(lease2)).hold).toBeUndefined();

      const res = await post(`/lease/${lease2}/hold`, { enabled: true, segment_secs: 60 }, admin());
      expect(res.status, res.text).toBe(200);
      // Two segments' worth left: fewer than three, so the warning comes before any renewal fails.
      expect(res.body).toMatchObject({
        enabled: true,
        segment_secs: 60,
        warning: `low funds: the node account holds ${2n * SMALL_COST + 100n} micro-XUSD, enough for 2 more renewals of 60 s at ${SMALL_COST} each`,
      });
      const renewals = async () => ((await lease(lease2)).renewals as Json[]).length;
      await waitFor(async () => (await renewals()) === 1, 10_000, 'the first renewal');
      // The hold looks at the funds once its renewal is answered: a journal sync after the block
      // shows in the ledger (store/write-batch.ts).
      const warned = async () => String(((await lease(lease2)).hold as Json).warning);
      await waitFor(async () => /1 more renewal/.test(await warned()), 10_000, 'the warning after it');
      let view = (await lease(lease2)).hold as Json;
      expect(view).toMatchObject({ enabled: true, segment_secs: 60 });
      expect(BigInt(view.next_renewal_at as number)).toBe(start + 90n * SECOND_NS);
      expect(view.warning).toMatch(/enough for 1 more renewal of 60 s/);

      // 45 s later by the node's clock the second one is due.
      clock.offset += 45n * SECOND_NS;
      await waitFor(async () => (await renewals()) === 2, 10_000, 'the second renewal');
      expect(await xusd(me.address)).toBe(100n);
      expect((await lease(lease2)).duration).toBe(180);

      // The third is due but cannot be paid: the hold stops by itself and says why.
      clock.offset += 60n * SECOND_NS;
      await waitFor(
        async () => ((await lease(lease2)).hold as Json).enabled === false,
        10_000,
        'the hold to stop',
      );
      view = (await lease(lease2)).hold as Json;
      expect(view).toEqual({
        enabled: false,
        segment_secs: 60,
        next_renewal_at: null,
        warning: `hold stopped: insufficient funds: the node account holds 100 micro-XUSD, the next renewal of 60 s costs ${SMALL_COST}`,
      });
      expect(await renewals()).toBe(2);
      expect(await xusd(me.address)).toBe(100n);
    });

    it('keeps holds across a restart', async () => {
      clock.offset = 0n; // lease 1 expires 180 s after its start: no renewal falls due during this test
      const on = await post(`/lease/${lease1}/hold`, { enabled: true, segment_secs: 120 }, admin());
      expect(on.status, on.text).toBe(200);
      await t.stop({ keepData: true });
      t = await startTestNode({ ...opts, dataDir: t.dataDir });
      expect((await lease(lease1)).hold).toMatchObject({
        enabled: true,
        segment_secs: 120,
        next_renewal_at: lease1Start + 150n * SECOND_NS,
      });
      expect(((await lease(lease2)).hold as Json).warning).toMatch(/^hold stopped: insufficient funds/);
      const off = await post(`/lease/${lease1}/hold`, { enabled: false }, admin());
      expect(off.body).toMatchObject({ enabled: false, segment_secs: 120, next_renewal_at: null });
      const bad = await post(`/lease/${lease1}/hold`, { enabled: 'yes' }, admin());
      expect(bad.status).toBe(400);
    });
  });
});
