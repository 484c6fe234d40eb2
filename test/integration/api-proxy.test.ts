import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Wallet } from '../../node-core/client/wallet.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import { http, type HttpResult } from '../helpers/ledger-kit.ts';
import { LimiterClock } from '../helpers/limiter-clock.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * The proxy form (decisions D5, D11) of a real node: balances with spendable and final height,
 * paginated chains, block submission and rejection, the discovery and OpenAPI documents, headers.
 */

const XE = 1_000_000n;
const RATE_HEADERS = [
  'ratelimit-policy',
  'ratelimit',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
];

type ProxyError = {
  error: { code: string; status: number; message: string; hint: string; retryable?: boolean };
};

function expectProxyError(r: HttpResult, status: number, code: string): ProxyError['error'] {
  expect(r.status).toBe(status);
  expect(r.headers.get('x-api-version')).toBe('1');
  const e = (r.body as ProxyError).error;
  expect(e).toMatchObject({ code, status, docs: '/api/v1', openapi: '/api/v1/openapi.json' });
  expect(e.hint).not.toBe('');
  return e;
}

const randomHex = () => randomBytes(32).toString('hex');

describe('HTTP API: proxy form', () => {
  let t: TestNode;
  let a: Wallet;
  let b: Wallet;
  let treasury: Wallet;

  beforeAll(async () => {
    t = await startTestNode();
    treasury = await t.wallet(seedOf(t.keys.treasury.seed_hex));
    a = await t.wallet();
    b = await t.wallet();
    await a.claim(50n * XE);
    await a.send(b.address, 20n * XE);
    await b.receiveAll();
    await a.send(b.address, 5n * XE); // left pending
  });
  afterAll(async () => {
    await t?.stop();
  });

  const get = (path: string) => http(t.node.url, 'GET', path);

  /** Waits until every block of the account's chain is final (this node alone is the quorum). */
  const finalChain = (address: string) =>
    waitFor(
      async () => {
        const r = (await get(`/api/v1/accounts/${address}/balance`)).body as { final_height: number };
        const c = (await get(`/api/v1/accounts/${address}/chain`)).body as { total: number };
        return r.final_height === c.total;
      },
      5000,
      `final chain of ${address}`,
    );

  describe('balance', () => {
    it('returns balances, spendable and final_height; the node form keeps its flat map', async () => {
      await finalChain(a.address);
      await finalChain(b.address);
      const r = await get(`/api/v1/accounts/${a.address}/balance`);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-api-version')).toBe('1');
      expect(r.body).toEqual({
        address: a.address,
        balances: { XE: (25n * XE).toString() },
        spendable: { XE: (25n * XE).toString() },
        final_height: 3,
      });
      expect(r.text).toMatch(/"final_height":3}$/);
      expect((await get(`/api/v1/accounts/${b.address}/balance`)).body).toEqual({
        address: b.address,
        balances: { XE: (20n * XE).toString() },
        spendable: { XE: (20n * XE).toString() },
        final_height: 1,
      });
      // The node form, unchanged.
      const node = await get(`/accounts/${a.address}/balance`);
      expect(node.body).toEqual({ XE: (25n * XE).toString() });
      expect(node.headers.get('x-api-version')).toBeNull();
    });

    it('agrees with the ledger for the genesis treasury, through the alias too', async () => {
      const ledger = t.node.ledger;
      const acct = ledger.getAccount(treasury.address)!;
      const r = await get(`/api/accounts/${treasury.address.toUpperCase()}/balance`);
      expect(r.status).toBe(200);
      const body = r.body as { address: string; final_height: number; spendable: Record<string, string> };
      expect(body.address).toBe(treasury.address);
      expect(body.final_height).toBe(acct.final_height);
      expect(body.final_height).toBeGreaterThanOrEqual(1);
      expect(body.spendable).toEqual(
        Object.fromEntries(
          Object.entries(ledger.spendable(treasury.address)).map(([k, v]) => [k, v.toString()]),
        ),
      );
    });

    it('answers 200 with nothing for an unknown account, where the node form says 404', async () => {
      const address = randomHex();
      const r = await get(`/api/v1/accounts/${address}/balance`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ address, balances: {}, spendable: {}, final_height: 0 });
      expect((await get(`/accounts/${address}/balance`)).status).toBe(404);
    });

    it('refuses a malformed address in the proxy error form', async () => {
      const e = expectProxyError(await get('/api/v1/accounts/xyz/balance'), 400, 'bad_request');
      expect(e.message).toMatch(/^invalid path parameter 'address'/);
    });
  });

  describe('chain', () => {
    it('returns {address, blocks, total}, oldest first, the blocks as the node form shows them', async () => {
      const r = await get(`/api/v1/accounts/${a.address}/chain`);
      expect(r.status).toBe(200);
      const body = r.body as { address: string; blocks: Record<string, unknown>[]; total: number };
      expect(body.address).toBe(a.address);
      expect(body.total).toBe(3);
      expect(body.blocks.map((x) => x.type)).toEqual(['claim', 'send', 'send']);
      expect(body.blocks.every((x) => typeof x.finalized === 'boolean')).toBe(true);
      expect(body.blocks[0]!.pub_key).toBeDefined();
      const node = await get(`/accounts/${a.address}/chain`);
      expect(node.body).toEqual(body.blocks);
      expect(node.headers.get('x-total-count')).toBe('3');
    });

    it('paginates by offset and limit, and clamps limits over 1000', async () => {
      const all = ((await get(`/api/v1/accounts/${a.address}/chain`)).body as { blocks: unknown[] }).blocks;
      const page = (await get(`/api/v1/accounts/${a.address}/chain?offset=1&limit=1`)).body as {
        blocks: unknown[];
        total: number;
      };
      expect(page).toEqual({ address: a.address, blocks: [all[1]], total: 3 });
      const past = (await get(`/api/v1/accounts/${a.address}/chain?offset=10`)).body;
      expect(past).toEqual({ address: a.address, blocks: [], total: 3 });
      expect((await get(`/api/v1/accounts/${a.address}/chain?limit=5000`)).status).toBe(200);
      const bad = expectProxyError(
        await get(`/api/v1/accounts/${a.address}/chain?limit=0`),
        400,
        'bad_request',
      );
      expect(bad.message).toBe("invalid query parameter 'limit': must be >= 1");
    });

    it('answers 200 with an empty chain for an unknown account, where the node form says 404', async () => {
      const address = randomHex();
      expect((await get(`/api/v1/accounts/${address}/chain`)).body).toEqual({
        address,
        blocks: [],
        total: 0,
      });
      expect((await get(`/accounts/${address}/chain`)).status).toBe(404);
    });
  });

  describe('blocks and errors', () => {
    const post = (path: string, block: Block) => http(t.node.url, 'POST', path, blockToJson(block, 'node'));

    it('accepts a block as the node form does (201, the same body)', async () => {
      const c = await t.wallet();
      const block = await c.prepare({ type: 'claim', asset: 'XE', amount: 3n * XE, balance: 3n * XE });
      const r = await post('/api/v1/blocks/claim', block);
      expect(r.status).toBe(201);
      expect(r.headers.get('x-api-version')).toBe('1');
      // The node form's body (an idempotent resubmission there), plus the proxy form's tell_user.
      const { tell_user, ...rest } = r.body as Record<string, unknown>;
      expect(rest).toEqual((await post('/blocks/claim', block)).body);
      expect(tell_user).toMatch(/^Claimed 3 XE; final /);
      c.advance(block);
      expect(
        ((await get(`/api/v1/accounts/${c.address}/balance`)).body as { balances: unknown }).balances,
      ).toEqual({ XE: (3n * XE).toString() });
    });

    it("passes an invalid block's refusal through as the node answers it: 400, retryable false", async () => {
      const block = await a.prepare({
        type: 'send',
        asset: 'XE',
        destination: b.address,
        amount: XE,
        balance: 24n * XE,
      });
      const r = await post('/api/v1/blocks/send', { ...block, signature: '00'.repeat(64) });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'block rejected: invalid signature', retryable: false });
      expect(r.headers.get('x-api-version')).toBe('1');
      const node = await post('/blocks/send', { ...block, signature: '00'.repeat(64) });
      expect(node.status).toBe(400);
      expect(node.text).toBe(r.text);
    });

    it('passes a block that may succeed later through as the node answers it: 503, retryable true', async () => {
      const c = await t.wallet();
      const block = await c.prepare({ type: 'receive', asset: 'XE', source: randomHex(), balance: XE });
      const r = await post('/api/blocks/receive', block);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ error: expect.stringMatching(/^block rejected: /), retryable: true });
    });

    it('wraps unknown routes, unknown resources, wrong methods and unreadable bodies', async () => {
      expect(expectProxyError(await get('/api/v1/nope'), 404, 'not_found').message).toBe('not found');
      const block = expectProxyError(await get(`/api/v1/blocks/${randomHex()}`), 404, 'not_found');
      expect(block.message).toBe('block not found');
      const wrong = await http(t.node.url, 'DELETE', '/api/v1/node');
      expectProxyError(wrong, 405, 'method_not_allowed');
      expect(wrong.headers.get('allow')).toBe('GET, HEAD');
      const body = expectProxyError(
        await http(t.node.url, 'POST', '/api/v1/directory/register', '{"account":'),
        400,
        'bad_request',
      );
      expect(body.message).toBe('invalid request body');
      // A block's unreadable body is a refused block: it passes through as the node answers it.
      const refused = await http(t.node.url, 'POST', '/api/v1/blocks/send', '{"type":');
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'invalid request body', retryable: false });
      const admin = await http(t.node.url, 'POST', '/api/v1/lease/request', '{}');
      expectProxyError(admin, 401, 'unauthorized');
    });
  });

  describe('discovery and OpenAPI', () => {
    it('lists every node route, with its auth class, relative to /api/v1', async () => {
      const r = await get('/api/v1');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-api-version')).toBe('1');
      const doc = r.body as {
        api_version: number;
        base: string;
        openapi: string;
        network_id: string;
        versioning: { policy: string; previous_major_supported_days: number };
        endpoints: { method: string; path: string; description: string; auth: string }[];
      };
      expect(doc).toMatchObject({
        api_version: 1,
        base: '/api/v1',
        openapi: '/api/v1/openapi.json',
        network_id: t.keys.network_id,
      });
      expect(doc.versioning.previous_major_supported_days).toBe(180);
      const manifest = ((await get('/')).body as { endpoints: { method: string; path: string }[] }).endpoints;
      expect(doc.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual([
        'GET /',
        'GET /openapi.json',
        ...manifest.map((e) => `${e.method} ${e.path}`),
      ]);
      expect(doc.endpoints.find((e) => e.path === '/lease/request')?.auth).toBe('admin');
      expect(doc.endpoints.filter((e) => e.auth !== 'none').map((e) => e.path)).toEqual([
        '/node/log',
        '/node/log/events',
        '/node/p2p',
        '/lease/request',
        '/lease/{hash}/renew',
        '/lease/{hash}/hold',
        '/agent/audit',
        '/agent/checkpoints',
        '/agent/checkpoints',
        '/agent/checkpoints/{id}/diff',
        '/agent/rollbacks',
        '/app/store',
        '/app/store/{key}',
        '/app/store/{key}',
      ]);
      expect((await get('/api')).body).toEqual(r.body);
    });

    it('publishes the OpenAPI document of the proxy form with the proxy shapes', async () => {
      const r = await get('/api/v1/openapi.json');
      expect(r.status).toBe(200);
      type Op = {
        summary: string;
        responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
      };
      const doc = r.body as {
        servers: { url: string }[];
        paths: Record<string, Record<string, Op>>;
        components: { schemas: Record<string, unknown> };
      };
      expect(doc.servers).toEqual([expect.objectContaining({ url: '/api/v1' })]);
      const discovery = ((await get('/api/v1')).body as { endpoints: { method: string; path: string }[] })
        .endpoints;
      const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
      );
      expect(documented.sort()).toEqual(discovery.map((e) => `${e.method} ${e.path}`).sort());
      const balance = doc.paths['/accounts/{address}/balance']!.get!;
      expect(balance.responses['200']?.content?.['application/json']?.schema).toMatchObject({
        required: ['address', 'balances', 'spendable', 'final_height'],
      });
      expect(balance.responses['404']).toBeUndefined();
      const chain = doc.paths['/accounts/{address}/chain']!.get!;
      expect(chain.responses['200']?.content?.['application/json']?.schema).toMatchObject({
        required: ['address', 'blocks', 'total'],
      });
      expect(doc.components.schemas.Error).toMatchObject({
        properties: { error: { type: 'object' } },
      });
      // A refused block passes through as the node answers it, and is documented so (#14).
      const send = doc.paths['/blocks/send']!.post!;
      for (const status of ['400', '503'])
        expect(send.responses[status]?.content?.['application/json']?.schema).toEqual({
          $ref: '#/components/schemas/BlockRefusal',
        });
      expect(doc.components.schemas.BlockRefusal).toMatchObject({ required: ['error', 'retryable'] });
      // The node form's document stays at the root, without the proxy paths.
      const nodeDoc = (await get('/openapi.json')).body as { paths: Record<string, unknown> };
      expect(Object.keys(nodeDoc.paths).filter((p) => p.startsWith('/api'))).toEqual([]);
    });
  });

  describe('headers', () => {
    it('with rate limits off (this node), no rate-limit headers in either form', async () => {
      for (const path of ['/api/v1/supply', '/api/v1/health']) {
        const r = await get(path);
        expect(r.headers.get('x-api-version')).toBe('1');
        for (const h of RATE_HEADERS) expect(r.headers.get(h), `${path} ${h}`).toBeNull();
      }
      const root = await get('/supply');
      expect(root.headers.get('x-api-version')).toBeNull();
      for (const h of RATE_HEADERS) expect(root.headers.get(h)).toBeNull();
    });
  });
});

describe('HTTP API: proxy form with rate limits on', () => {
  let t: TestNode;
  // Held: the write bucket must not refill between the 429 and the node form's request after it.
  const clock = new LimiterClock();
  beforeAll(async () => {
    clock.hold();
    t = await startTestNode({ rateLimit: { now: clock.now } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('counts down the client bucket and answers 429 in the proxy form', async () => {
    const client = { 'x-forwarded-for': '203.0.113.77' };
    const read = await http(t.node.url, 'GET', '/api/v1/node', undefined, client);
    expect(read.headers.get('ratelimit-policy')).toBe('"read";q=1000;w=5');
    expect(read.headers.get('ratelimit')).toBe('"read";r=999;t=1');
    expect(read.headers.get('ratelimit-limit')).toBe('1000');
    expect(read.headers.get('ratelimit-remaining')).toBe('999');
    expect(read.headers.get('retry-after')).toBeNull();

    const results: HttpResult[] = [];
    for (let i = 0; i < 60; i++) {
      const r = await http(t.node.url, 'POST', '/api/v1/blocks/claim', '{}', client);
      results.push(r);
      if (r.status === 429) break;
    }
    const served = results.filter((r) => r.status !== 429);
    expect(served.length).toBeGreaterThanOrEqual(50);
    expect(
      served.every((r) => r.status === 400 && r.headers.get('ratelimit-policy') === '"write";q=50;w=5'),
    ).toBe(true);
    expect(served[0]!.headers.get('ratelimit-remaining')).toBe('49');
    const limited = results.at(-1)!;
    const e = expectProxyError(limited, 429, 'rate_limited');
    expect(e.message).toBe('rate limit exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('ratelimit')).toBe(`"write";r=0;t=${limited.headers.get('retry-after')}`);

    // The root shares the bucket but speaks the node form, without rate-limit headers.
    const node = await http(t.node.url, 'POST', '/blocks/claim', '{}', client);
    expect(node.status).toBe(429);
    expect(node.body).toEqual({ error: 'rate limit exceeded' });
    for (const h of RATE_HEADERS) expect(node.headers.get(h)).toBeNull();
  });
});
