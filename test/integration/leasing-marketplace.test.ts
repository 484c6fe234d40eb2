import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PerformanceCertificate } from '../../node-core/protocol/certificate.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { leaseCost } from '../../node-core/leasing/pricing.ts';
import { certify } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, XE } from '../helpers/ledger-kit.ts';
import { seedOf, type TestNode, waitFor } from '../helpers/node.ts';
import { twoNodes } from '../helpers/p2p.ts';

/**
 * The marketplace between two real nodes on loopback (reference-behavior.md 4.9, issue #11): B
 * provides (capacity from its options, a certificate in both books) and advertises; A lists B in
 * `GET /providers` with what B's leases leave free; `POST /lease/request` on A publishes a request,
 * takes B's offer and answers 201 with the hash of the lease block it built from A's node account
 * (decisions D17), which both nodes then hold as `created`. Short ad interval and offer deadline.
 */

const CAPACITY = { vcpus: 4n, memory_mb: 4096n, disk_gb: 50n, max_concurrent_leases: 5n };
const MARKET = { adIntervalMs: 300, offerDeadlineMs: 3000 };
const ACCESS_KEY = 'ef'.repeat(32);
const MULTIPLIER = 1500n;

type Json = Record<string, JsonValue>;

describe('marketplace: providers and lease requests between two nodes', () => {
  let a: TestNode;
  let b: TestNode;
  let kit: Kit;
  let cert: PerformanceCertificate;
  let consumer: Account;

  const admin = (t: TestNode) => ({ authorization: `Bearer ${t.node.adminToken}` });
  const requestLease = (t: TestNode, body: Record<string, unknown>) =>
    http(t.node.url, 'POST', '/lease/request', body, admin(t));
  const providerOn = async (t: TestNode, address: string) =>
    ((await http(t.node.url, 'GET', '/providers')).body as Json[]).find((p) => p.address === address);

  beforeAll(async () => {
    [a, b] = await twoNodes(
      { marketplace: MARKET, ownCertificate: false },
      { marketplace: MARKET, ownCertificate: false, provide: CAPACITY },
    );
    kit = await kitOf(a);
    // B's certificate, in both books (as certificate gossip would leave it).
    const provider = new Account(kit, seedOf(b.node.nodeKey.seed_hex));
    cert = await certify(a, kit, provider, { multiplier: MULTIPLIER });
    await b.node.certificates.add(cert);
    // A's node account: opened, then 10 XUSD from the devnet minter.
    consumer = new Account(kit, seedOf(a.node.nodeKey.seed_hex));
    await consumer.sync();
    const minter = new Account(kit, seedOf(a.keys.minter.seed_hex));
    await minter.sync();
    await consumer.claim(XE);
    const xusd = 10n * XE;
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: xusd, balance: minter.bal('XUSD') + xusd }),
    );
    await consumer.receive(await minter.send(consumer.address, xusd, 'XUSD'));
  }, 60_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('lists the provider from its advertisement, with its whole capacity free', async () => {
    const address = b.node.nodeKey.address;
    const p = await waitFor(() => providerOn(a, address), 10_000, 'B advertised to A');
    expect(p).toEqual({
      address,
      vcpus: 4,
      memory_mb: 4096,
      disk_gb: 50,
      active_leases: 0,
      available_vcpus: 4,
      available_memory_mb: 4096,
      available_disk_gb: 50,
    });
    // B lists itself; A provides nothing, so it lists only B.
    expect(await providerOn(b, address)).toEqual(p);
    expect(((await http(a.node.url, 'GET', '/providers')).body as Json[]).length).toBe(1);
  });

  it('a lease request answers 201 with the hash of the lease block it created', async () => {
    const terms = { vcpus: 1, memory_mb: 1024, disk_gb: 10, duration: 3600 };
    const res = await requestLease(a, { ...terms, access_pub_key: ACCESS_KEY });
    expect(res.status, res.text).toBe(201);
    const hash = (res.body as Json).lease_hash as string;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const cost = leaseCost({ vcpus: 1n, memory_mb: 1024n, disk_gb: 10n, duration: 3600n }, MULTIPLIER);
    const lease = (await http(a.node.url, 'GET', `/leases/${hash}`)).body as Json;
    expect(lease).toMatchObject({
      lease_hash: hash,
      state: 'created',
      consumer: a.node.nodeKey.address,
      provider: b.node.nodeKey.address,
      ...terms,
      access_pub_key: ACCESS_KEY,
      cost: String(cost),
      certificate_hash: cert.hash,
    });
    // The block is the node account's newest, and it reaches the provider by gossip.
    expect((await http(a.node.url, 'GET', `/blocks/${hash}`)).body).toMatchObject({
      type: 'lease',
      account: a.node.nodeKey.address,
    });
    await waitFor(
      async () => (await http(b.node.url, 'GET', `/leases/${hash}`)).status === 200,
      10_000,
      'the lease on B',
    );
    const balance = (await http(a.node.url, 'GET', `/accounts/${a.node.nodeKey.address}/balance`))
      .body as Json;
    expect(JSON.stringify(balance)).toContain(String(10n * XE - cost));
    // B's availability drops by the lease it has not even accepted yet, on both nodes.
    for (const t of [a, b]) {
      expect(await providerOn(t, b.node.nodeKey.address)).toMatchObject({
        active_leases: 1,
        available_vcpus: 3,
        available_memory_mb: 3072,
        available_disk_gb: 40,
      });
    }
  });

  it('a request larger than any provider has free is "no providers" after the deadline', async () => {
    const before = a.node.marketplace.stats.requests_published;
    const res = await requestLease(a, { vcpus: 4, duration: 60, access_pub_key: ACCESS_KEY });
    expect(res.status).toBe(400);
    expect((res.body as Json).error).toMatch(/^no providers/);
    expect(a.node.marketplace.stats.requests_published).toBe(before + 1);
    expect(b.node.marketplace.stats.offers_published).toBe(1);
  });

  it('a request the node account cannot pay is refused before anything is published', async () => {
    const before = a.node.marketplace.stats.requests_published;
    const seenByB = b.node.marketplace.stats.requests_received;
    const res = await requestLease(a, {
      vcpus: 4,
      memory_mb: 4096,
      duration: 31_536_000,
      access_pub_key: ACCESS_KEY,
    });
    expect(res.status).toBe(400);
    expect((res.body as Json).error).toMatch(/^insufficient XUSD balance/);
    expect(a.node.marketplace.stats.requests_published).toBe(before);
    expect(b.node.marketplace.stats.requests_received).toBe(seenByB);
  });

  it('keeps the existing body checks', async () => {
    const res = await requestLease(a, { duration: 60, access_pub_key: ACCESS_KEY });
    expect(res.status).toBe(400);
    expect((res.body as Json).error).toMatch(/at least one of vcpus/);
    const noAuth = await http(a.node.url, 'POST', '/lease/request', { vcpus: 1, duration: 60 });
    expect(noAuth.status).toBe(401);
  });
});
