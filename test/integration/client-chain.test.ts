import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../node-core/client/client.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * LedgerClient.chain on a real node: an account nobody has opened yet is `undefined` without any 404
 * on the wire (a browser logs each 404 as a console error, and every new wallet account is
 * unopened); an opened one reads its blocks and total.
 */
describe('LedgerClient.chain', () => {
  let t: TestNode;
  const statuses: { url: string; status: number }[] = [];
  let client: LedgerClient;

  beforeAll(async () => {
    t = await startTestNode();
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      statuses.push({ url: String(input), status: res.status });
      return res;
    };
    client = new LedgerClient(t.node.url, { fetch: recording });
  });
  afterAll(() => t?.stop());

  it('answers undefined for an unopened account, with no 404 asked for', async () => {
    expect(await client.chain('ab'.repeat(32), 0, 1)).toBeUndefined();
    expect(statuses.filter((s) => s.status >= 400)).toEqual([]);
    expect(statuses.map((s) => new URL(s.url).pathname)).toEqual([
      `/api/v1/accounts/${'ab'.repeat(32)}/chain`,
    ]);
  });

  it('reads an opened account: its blocks, oldest first, and the total', async () => {
    const w = await t.wallet();
    await w.claim(1_000_000n);
    const chain = await client.chain(w.address, 0, 10);
    expect(chain?.total).toBe(1);
    expect(chain?.blocks.map((b) => b.block.type)).toEqual(['claim']);
    expect(chain?.blocks[0]?.block.account).toBe(w.address);
    expect(statuses.filter((s) => s.status >= 400)).toEqual([]);
  });
});
