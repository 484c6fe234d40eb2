import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlockRejected,
  IdempotencyConflict,
  LedgerClient,
  newIdempotencyKey,
  NodeUnreachable,
  NotFound,
  RateLimited,
  Unauthorized,
} from '../../node-core/client/index.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { LimiterClock } from '../helpers/limiter-clock.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/** The typed client against a real node: every route reachable in both forms, typed errors, keys, retries. */
let t: TestNode;
const clock = new LimiterClock();
beforeAll(async () => {
  t = await startTestNode({ rateLimit: { now: clock.now } });
});
afterAll(async () => {
  await t?.stop();
});

describe('typed client against a real node', () => {
  it('calls routes of both forms with their route-table types', async () => {
    const w = await t.wallet();
    await w.claim(5_000_000n);
    const c = new LedgerClient(t.node.url);
    const bal = await c.call('GET /accounts/{address}/balance', { params: { address: w.address } });
    expect(bal).toEqual({ XE: '5000000' });
    const proxy = await c.callProxy('GET /accounts/{address}/balance', { params: { address: w.address } });
    expect(proxy.address).toBe(w.address);
    expect(proxy.balances).toEqual({ XE: '5000000' });
    const chain = await c.callProxy('GET /accounts/{address}/chain', {
      params: { address: w.address },
      query: { limit: '1' },
    });
    expect(chain.total).toBe(1);
    expect(chain.blocks[0]?.type).toBe('claim');
    // A proxy-form answer to an unknown account is 200 with nothing in it, the node form's a NotFound.
    const nobody = 'ab'.repeat(32);
    expect(
      (await c.callProxy('GET /accounts/{address}/balance', { params: { address: nobody } })).balances,
    ).toEqual({});
    await expect(
      c.call('GET /accounts/{address}/balance', { params: { address: nobody } }),
    ).rejects.toBeInstanceOf(NotFound);
  });

  it('throws NotFound, BlockRejected, Unauthorized and NodeUnreachable', async () => {
    const c = new LedgerClient(t.node.url);
    const e404 = await c
      .call('GET /blocks/{hash}', { params: { hash: '00'.repeat(32) } })
      .catch((e: unknown) => e);
    expect(e404).toBeInstanceOf(NotFound);
    expect((e404 as NotFound).status).toBe(404);

    const w = await t.wallet();
    const e400 = await w.send('cd'.repeat(32), 1n).catch((e: unknown) => e);
    expect(e400).toBeInstanceOf(BlockRejected);
    expect((e400 as BlockRejected).retryable).toBe(false);
    expect((e400 as BlockRejected).message).toMatch(/balance|account|previous|funds/i);

    const e401 = await c
      .call('POST /lease/request', { body: { vcpus: 1, duration: 60, access_pub_key: 'ab'.repeat(32) } })
      .catch((e: unknown) => e);
    expect(e401).toBeInstanceOf(Unauthorized);
    expect((e401 as Unauthorized).status).toBe(401);

    const gone = new LedgerClient('http://127.0.0.1:9');
    const down = await gone.node().catch((e: unknown) => e);
    expect(down).toBeInstanceOf(NodeUnreachable);
    expect((down as NodeUnreachable).code).toBe('node_unreachable');
  });

  it('sends an Idempotency-Key: a repeat is replayed, another body with the key refused', async () => {
    const w = await t.wallet();
    const block = await w.prepare({ type: 'claim', asset: 'XE', amount: 7n, balance: 7n });
    const c = new LedgerClient(t.node.url);
    const key = newIdempotencyKey();
    const first = await c.send('POST', '/blocks/claim', blockToJson(block, 'node'), { idempotencyKey: key });
    expect(first.status).toBe(201);
    const again = await c.send('POST', '/blocks/claim', blockToJson(block, 'node'), { idempotencyKey: key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    const other = await w.prepare({ type: 'claim', asset: 'XE', amount: 8n, balance: 8n });
    const err = await c
      .send('POST', '/blocks/claim', blockToJson(other, 'node'), { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyConflict);
    expect((err as IdempotencyConflict).code).toBe('idempotency_mismatch');
  });

  it("reaches the app store with the window's session (X-Ledger-App and the cookie) in place of the token", async () => {
    const opened = await fetch(`${t.node.url}/app/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: t.node.adminToken }),
    });
    expect(opened.status).toBe(200);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    // Node's fetch keeps no cookies: the test hands the cookie over as a browser would send it.
    const withSession = new LedgerClient(t.node.url, { appSession: true, headers: { cookie } });
    const session = await withSession.call('GET /app/session', {});
    expect(session).toMatchObject({ authenticated: true });
    // An operator route: answered with the session, refused (401) with the cookie alone.
    await expect(withSession.call('GET /app/store', {})).resolves.toBeDefined();
    const cookieOnly = new LedgerClient(t.node.url, { headers: { cookie } });
    await expect(cookieOnly.call('GET /app/store', {})).rejects.toBeInstanceOf(Unauthorized);
  });

  it('waits out a real 429 (Retry-After) and then succeeds; with retries off it throws RateLimited', async () => {
    // The limiter's clock stands still, so no bucket refills however long the burst takes.
    clock.hold();
    try {
      // The probe class allows a burst of 100: spend it, then ask once more.
      const burst = await Promise.all(
        Array.from({ length: 110 }, () => fetch(`${t.node.url}/health`).then((r) => r.status)),
      );
      expect(burst).toContain(429);
      const off = new LedgerClient(t.node.url, { retry: false });
      const refused = await off.get('/health').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RateLimited);
      expect((refused as RateLimited).retryAfterMs).toBeGreaterThanOrEqual(1000);
      // The client's wait moves the limiter's clock on by as long as it waits.
      const waits: number[] = [];
      const c = new LedgerClient(t.node.url, {
        sleep: async (ms) => (waits.push(ms), clock.advance(ms)),
      });
      await expect(c.get('/health')).resolves.toBeDefined();
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(waits[0]).toBeGreaterThanOrEqual(1000);
    } finally {
      clock.release();
    }
  });
});

describe('retries against a scripted HTTP server (a real node cannot be made to refuse transiently on demand)', () => {
  let server: Server;
  let url: string;
  let answers: { status: number; body: unknown }[] = [];
  const seen: { key: string | undefined }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ key: req.headers['idempotency-key'] as string | undefined });
      req.resume();
      const a = answers.shift() ?? { status: 201, body: { ok: true } };
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('retries a retryable block refusal with backoff, then gives up after maxAttempts', async () => {
    const busy = { status: 503, body: { error: 'store busy', retryable: true } };
    answers = [busy, busy];
    const waits: number[] = [];
    const c = new LedgerClient(url, { sleep: async (ms) => void waits.push(ms) });
    expect((await c.send('POST', '/blocks/send', {})).status).toBe(201);
    expect(waits).toEqual([250, 500]);
    answers = [busy, busy, busy, busy, busy];
    waits.length = 0;
    const err = await c.send('POST', '/blocks/send', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockRejected);
    expect(waits).toEqual([250, 500, 1000]);
    answers = [];
  });

  it('does not repeat another POST without a key; repeats it with the same key', async () => {
    const busy = { status: 503, body: { error: 'busy', retryable: true } };
    answers = [busy];
    const c = new LedgerClient(url, { sleep: async () => {} });
    await expect(c.send('POST', '/directory/register', {})).rejects.toBeInstanceOf(BlockRejected);
    answers = [busy];
    seen.length = 0;
    expect((await c.send('POST', '/directory/register', {}, { idempotencyKey: 'k-1' })).status).toBe(201);
    expect(seen).toEqual([{ key: 'k-1' }, { key: 'k-1' }]);
  });
});
