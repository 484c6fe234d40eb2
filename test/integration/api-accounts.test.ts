import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account, http, type Kit, kitOf } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/** GET /accounts over more than 1,000 accounts: order (L-20), default page, maximum page, offsets. */
describe('HTTP API: account listing', () => {
  let t: TestNode;
  let kit: Kit;
  let all: string[];

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    const accounts = Array.from({ length: 1000 }, () => new Account(kit));
    for (let i = 0; i < accounts.length; i += 50) {
      await Promise.all(accounts.slice(i, i + 50).map((a, j) => a.claim(BigInt(i + j + 1))));
    }
    all = [t.keys.treasury.address, ...accounts.map((a) => a.address)].sort();
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  });

  type Listed = { address: string; balances: Record<string, string>; block_count: number; frontier: string };
  const list = async (q = '') => {
    const r = await http(kit.url, 'GET', `/accounts${q}`);
    expect(r.status, r.text.slice(0, 200)).toBe(200);
    return r.body as Listed[];
  };

  it('L-20: lists accounts sorted by address, 100 by default', async () => {
    const page = await list();
    expect(page.map((a) => a.address)).toEqual(all.slice(0, 100));
    for (const a of page) {
      expect(Object.keys(a)).toEqual(
        expect.arrayContaining(['address', 'balances', 'block_count', 'frontier', 'last_block_timestamp']),
      );
    }
  });

  it('pages with offset and limit, and clamps limit to 1000', async () => {
    expect((await list('?limit=1000')).map((a) => a.address)).toEqual(all.slice(0, 1000));
    expect((await list('?limit=5000')).map((a) => a.address)).toEqual(all.slice(0, 1000));
    expect((await list('?offset=1000&limit=1000')).map((a) => a.address)).toEqual(all.slice(1000));
    expect((await list('?offset=250&limit=7')).map((a) => a.address)).toEqual(all.slice(250, 257));
    expect(await list('?offset=5000')).toEqual([]);
    const some = (await list('?limit=1000')).find((a) => a.address !== t.keys.treasury.address)!;
    expect(some.block_count).toBe(1);
    expect(Object.values(some.balances).every((v) => /^[0-9]+$/.test(v))).toBe(true);
  });

  it('refuses bad paging parameters with 400 JSON', async () => {
    for (const q of ['limit=0', 'limit=-1', 'offset=-1', 'limit=abc']) {
      const r = await http(kit.url, 'GET', `/accounts?${q}`);
      expect(r.status, q).toBe(400);
      expect(Object.keys(r.body as object)).toEqual(['error']);
    }
  });

  it('GET /frontiers and GET /node agree with the listing', async () => {
    const frontiers = (await http(kit.url, 'GET', '/frontiers?limit=1000')).body as Record<string, string>;
    expect(Object.keys(frontiers)).toEqual(all.slice(0, 1000));
    const node = (await http(kit.url, 'GET', '/node')).body as { accounts: number; block_count: number };
    expect(node).toMatchObject({ accounts: 1001, block_count: 1001 });
  });
});
