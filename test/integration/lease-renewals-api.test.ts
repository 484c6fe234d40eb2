import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeasingClient } from '../../node-core/client/leasing.ts';
import { INLINE_RENEWALS } from '../../node-core/api/routes/leasing.ts';
import type { LeaseRecord, LeaseRenewal } from '../../node-core/leasing/records.ts';
import { renewalEmission } from '../../node-core/leasing/records.ts';
import { http } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

const SECOND = 1_000_000_000n;
const T0 = 1_790_000_000n * SECOND;
const hex = (n: number, tag: string) => `${tag}${n.toString(16)}`.padStart(64, '0');

const renewal = (k: number): LeaseRenewal => ({
  renew_hash: hex(k, 'e'),
  duration: 60n,
  cost: 1_000n + BigInt(k),
  start_time: T0 + BigInt(k + 1) * 60n * SECOND,
  locked_r: 5n,
  locked_payout_cap: 9n,
  locked_twap_milli: 1_000n,
});

/** A lease kept running by `k` renewals, as the renew rule leaves its record. */
function held(n: number, k: number): LeaseRecord {
  const rs = Array.from({ length: k }, (_, i) => renewal(i));
  const renewed = rs.reduce((a, r) => a + r.cost, 0n);
  return {
    lease_hash: hex(n, 'a'),
    state: 'accepted',
    consumer: hex(1, 'c'),
    provider: hex(1, 'b'),
    vcpus: 1n,
    memory_mb: 1024n,
    disk_gb: 1n,
    duration: 60n * BigInt(k + 1),
    cost: 1_000n + renewed,
    stake: 0n,
    start_time: T0,
    settled: false,
    locked_r: 5n,
    locked_payout_cap: 9n,
    locked_twap_milli: 1_000n,
    renewal_count: k,
    renewed_cost: renewed,
    renewal_emission: rs.reduce((a, r) => a + renewalEmission(r), 0n),
    created_at: T0 - SECOND,
  };
}

type Json = Record<string, unknown>;

/**
 * A lease kept by a renewal a minute has 10,080 renewals after a week. Its answer, and each lease
 * of a `GET /leases` page, listed them all; they now carry the count and the latest
 * INLINE_RENEWALS, and `GET /leases/{hash}/renewals` pages the rest. A real node over HTTP.
 */
describe('HTTP API: a lease with many renewals', () => {
  let t: TestNode;
  const R = 2_500;
  const many = held(1, R);
  const few = held(2, 3);

  beforeAll(async () => {
    t = await startTestNode();
    const book = t.node.ledger.leases;
    await t.node.store.transaction(() => {
      book.put(many);
      for (let k = 0; k < R; k++) book.putRenewal(many.lease_hash, k, renewal(k));
      book.put(few);
      for (let k = 0; k < 3; k++) book.putRenewal(few.lease_hash, k, renewal(k));
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const hashes = (list: unknown) => (list as Json[]).map((r) => r.renew_hash);
  const range = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => renewal(from + i).renew_hash);

  it('a lease carries its renewal count and its latest renewals, oldest first; one with few carries them all', async () => {
    const r = await http(t.node.url, 'GET', `/leases/${many.lease_hash}`);
    expect(r.status).toBe(200);
    const body = r.body as Json;
    expect(body.renewal_count).toBe(R);
    expect(hashes(body.renewals)).toEqual(range(R - INLINE_RENEWALS, R));
    expect((body.renewals as Json[])[0]).toMatchObject({
      duration: 60,
      cost: String(1_000 + R - INLINE_RENEWALS),
    });
    expect(body.duration).toBe(60 * (R + 1));

    const small = (await http(t.node.url, 'GET', `/leases/${few.lease_hash}`)).body as Json;
    expect(small.renewal_count).toBe(3);
    expect(hashes(small.renewals)).toEqual(range(0, 3));

    // The list: each lease the same way, whatever it holds.
    const list = (await http(t.node.url, 'GET', '/leases?limit=10')).body as Json[];
    const listed = list.find((l) => l.lease_hash === many.lease_hash)!;
    expect(listed.renewal_count).toBe(R);
    expect(hashes(listed.renewals)).toEqual(range(R - INLINE_RENEWALS, R));
  });

  it('pages every renewal with the total in X-Total-Count', async () => {
    const page = async (query: string) => {
      const r = await http(t.node.url, 'GET', `/leases/${many.lease_hash}/renewals${query}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-total-count')).toBe(String(R));
      return hashes(r.body);
    };
    expect(await page('')).toEqual(range(0, 100)); // the contract's default limit
    expect(await page('?offset=1000&limit=7')).toEqual(range(1_000, 1_007));
    expect(await page(`?offset=${R - 3}&limit=50`)).toEqual(range(R - 3, R));
    expect(await page(`?offset=${R}`)).toEqual([]);
    const first = (await http(t.node.url, 'GET', `/leases/${many.lease_hash}/renewals?limit=1`))
      .body as Json[];
    expect(first[0]).toEqual({
      renew_hash: renewal(0).renew_hash,
      duration: 60,
      cost: '1000',
      start_time: renewal(0).start_time,
      locked_r: 5,
      locked_payout_cap: 9,
      locked_twap_milli: 1000,
    });

    // The client's page, as the window asks for it.
    const client = new LeasingClient(t.client);
    const p = await client.renewals(many.lease_hash, R - 50, 50);
    expect(p?.total).toBe(R);
    expect(p?.renewals.map((x) => x.renew_hash)).toEqual(range(R - 50, R));
    expect(p?.renewals[49]?.start_time).toBe(renewal(R - 1).start_time);
    expect((await client.lease(many.lease_hash))?.renewal_count).toBe(R);
  });

  it('refuses an unknown lease, a bad hash and a bad page in the documented shape', async () => {
    const unknown = await http(t.node.url, 'GET', `/leases/${hex(9, 'a')}/renewals`);
    expect(unknown.status).toBe(404);
    expect((unknown.body as Json).error).toMatch(/lease not found/);
    expect(await new LeasingClient(t.client).renewals(hex(9, 'a'), 0, 10)).toBeUndefined();
    const bad = await http(t.node.url, 'GET', '/leases/xyz/renewals');
    expect(bad.status).toBe(400);
    expect(typeof (bad.body as Json).error).toBe('string');
    for (const q of ['?offset=-1', '?limit=abc', '?offset=1.5']) {
      const r = await http(t.node.url, 'GET', `/leases/${many.lease_hash}/renewals${q}`);
      expect(r.status, q).toBe(400);
      expect((r.body as Json).error, q).toMatch(/offset|limit/);
    }
  });
});
