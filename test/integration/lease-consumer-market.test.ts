import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { marketplaceRequestId, signMarketplaceMessage } from '../../node-core/protocol/marketplace.ts';
import { leaseCost } from '../../node-core/leasing/pricing.ts';
import { certify, SMALL } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, nowNs, XE } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { listenAddr, P2P, twoNodes } from '../helpers/p2p.ts';

/**
 * The cheapest offer among several (reference-behavior.md 4.9 takes the first; we take the
 * cheapest): three nodes on loopback, A the consumer, B a provider at x1.5 and C one at x0.8. A's
 * lease request leases from C, and answers as soon as both providers answered (not after the
 * deadline); `POST /lease/offers` with a user-signed request lists both, cheapest first.
 */

type Json = Record<string, JsonValue>;
const CAPACITY = { vcpus: 4n, memory_mb: 8192n, disk_gb: 50n, max_concurrent_leases: 0n };
// A long deadline and gather window: the answers must come from "everyone answered", not timers.
const MARKET = { adIntervalMs: 300, offerDeadlineMs: 20_000, gatherMs: 15_000 };

describe('lease consumer: the cheapest of several offers', () => {
  let a: TestNode;
  let b: TestNode;
  let c: TestNode;
  let kit: Kit;

  const admin = (t: TestNode) => ({ authorization: `Bearer ${t.node.adminToken}` });
  const providers = async () =>
    ((await http(a.node.url, 'GET', '/providers')).body as Json[]).map((p) => p.address);

  beforeAll(async () => {
    [a, b] = await twoNodes(
      { marketplace: MARKET, ownCertificate: false },
      { marketplace: MARKET, ownCertificate: false, provide: CAPACITY },
    );
    c = await startTestNode({
      ...P2P,
      genesisDir: join(a.dataDir, 'genesis'),
      dial: [await listenAddr(a)],
      marketplace: MARKET,
      ownCertificate: false,
      provide: CAPACITY,
    });
    kit = await kitOf(a);
    // Each provider's certificate in every node's book (as certificate gossip would leave them).
    const pb = new Account(kit, seedOf(b.node.nodeKey.seed_hex));
    const pc = new Account(kit, seedOf(c.node.nodeKey.seed_hex));
    const certB = await certify(a, kit, pb, { multiplier: 1500n });
    const certC = await certify(a, kit, pc, { multiplier: 800n });
    for (const t of [b, c]) for (const cert of [certB, certC]) await t.node.certificates.add(cert);
    // A's node account: 10 XUSD from the devnet minter.
    const me = new Account(kit, seedOf(a.node.nodeKey.seed_hex));
    await me.sync();
    await me.claim(XE);
    const minter = new Account(kit, seedOf(a.keys.minter.seed_hex));
    await minter.sync();
    const xusd = 10n * XE;
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: xusd, balance: minter.bal('XUSD') + xusd }),
    );
    await me.receive(await minter.send(me.address, xusd, 'XUSD'));
    await waitFor(async () => (await providers()).length === 2, 15_000, 'both ads on A');
  }, 90_000);

  afterAll(async () => {
    await c?.stop();
    await b?.stop();
    await a?.stop();
  });

  it('POST /lease/offers lists both offers, cheapest first', async () => {
    const u = new Account(kit);
    const at = nowNs();
    const request = signMarketplaceMessage(
      'request',
      {
        consumer: u.address,
        consumer_pub_key: u.key.pub_key,
        request_id: marketplaceRequestId(u.address, at),
        ...SMALL,
        timestamp: at,
      },
      kit.networkId,
      u.seed,
    );
    const started = Date.now();
    const res = await http(a.node.url, 'POST', '/lease/offers', { request });
    expect(res.status, res.text).toBe(200);
    expect(Date.now() - started).toBeLessThan(10_000);
    const offers = (res.body as { offers: Json[] }).offers;
    expect(offers.map((o) => [o.provider, o.total_cost, o.price_multiplier_milli])).toEqual([
      [c.node.nodeKey.address, String(leaseCost(SMALL, 800n)), 800],
      [b.node.nodeKey.address, String(leaseCost(SMALL, 1500n)), 1500],
    ]);
  });

  it('POST /lease/request leases from the cheaper provider, without waiting out the deadline', async () => {
    const terms = { vcpus: 1, memory_mb: 1024, disk_gb: 10, duration: 3600 };
    const started = Date.now();
    const res = await http(
      a.node.url,
      'POST',
      '/lease/request',
      { ...terms, access_pub_key: 'ef'.repeat(32) },
      admin(a),
    );
    expect(res.status, res.text).toBe(201);
    expect(Date.now() - started).toBeLessThan(10_000);
    const hash = (res.body as Json).lease_hash as string;
    const lease = (await http(a.node.url, 'GET', `/leases/${hash}`)).body as Json;
    expect(lease).toMatchObject({
      provider: c.node.nodeKey.address,
      cost: String(leaseCost({ vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 3600n }, 800n)),
    });
    // Both providers did offer.
    expect(b.node.marketplace.stats.offers_published).toBe(2);
    expect(c.node.marketplace.stats.offers_published).toBe(2);
  });
});
