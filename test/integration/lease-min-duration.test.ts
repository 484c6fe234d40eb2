import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { marketplaceRequestId, signMarketplaceMessage } from '../../node-core/protocol/marketplace.ts';
import { certify, SMALL } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, nowNs, XE } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * A network whose genesis pins a shorter lease minimum than the protocol's 60 s (testnet-0003 pins
 * 5 s): the marketplace offers, and asks for, leases down to that minimum, as the ledger would take
 * them; below it, the request is refused with the network's bound in the message.
 */
type Json = Record<string, JsonValue>;
const CAPACITY = { vcpus: 8n, memory_mb: 16_384n, disk_gb: 100n, max_concurrent_leases: 0n };

describe('lease marketplace on a network with a 5 s lease minimum', () => {
  let t: TestNode;
  let kit: Kit;
  beforeAll(async () => {
    t = await startTestNode({
      genesisSet: { lease_min_duration_secs: 5n },
      ownCertificate: false,
      provide: CAPACITY,
      marketplace: { offerDeadlineMs: 3000 },
    });
    kit = await kitOf(t);
    const me = new Account(kit, seedOf(t.node.nodeKey.seed_hex));
    await me.sync();
    await me.claim(XE);
    await certify(t, kit, me);
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  const ask = (duration: bigint) => {
    const u = new Account(kit);
    const at = nowNs();
    const request = signMarketplaceMessage(
      'request',
      {
        consumer: u.address,
        consumer_pub_key: u.key.pub_key,
        request_id: marketplaceRequestId(u.address, at),
        ...SMALL,
        duration,
        timestamp: at,
      },
      kit.networkId,
      u.seed,
    );
    return http(t.node.url, 'POST', '/lease/offers', { request, wait_ms: 3000 });
  };

  it('offers a 10 s lease (below the protocol default, above the network minimum)', async () => {
    const res = await ask(10n);
    expect(res.status, res.text).toBe(200);
    const offers = (res.body as { offers: Json[] }).offers;
    expect(offers).toHaveLength(1);
    expect(offers[0]).toMatchObject({ duration: 10 });
  });

  it('refuses a 4 s lease, naming the network minimum', async () => {
    const res = await ask(4n);
    expect(res.status).toBe(400);
    expect((res.body as Json).error).toMatch(/duration must be from 5 to/);
  });
});
