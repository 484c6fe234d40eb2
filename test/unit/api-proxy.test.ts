import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../node-core/api/errors.ts';
import { PROXY_HINTS } from '../../node-core/api/proxy.ts';
import { defineRoute, defineRoutes } from '../../node-core/api/route-table.ts';
import { createApiServer } from '../../node-core/api/server.ts';
import type { ApiServerOptions } from '../../node-core/api/server.ts';
import { apiServerStarter } from '../helpers/api-server.ts';
import { rawHttp } from '../helpers/raw-http.ts';
import type { RawResponse as Response } from '../helpers/raw-http.ts';

/**
 * The proxy form (decisions D11) of a small table, served by createApiServer under /api/v1 and /api
 * next to the node form at the root: error wrapping, headers, adaptations, discovery and OpenAPI.
 */

const things = new Map([['t1', 18446744073709551615n]]);

const routes = defineRoutes(
  {
    method: 'GET',
    path: '/health',
    description: 'liveness',
    auth: 'none',
    pretty: true,
    noStore: true,
    handler: async () => ({ status: 'ok' }),
  },
  defineRoute<{ params: { id: string } }>({
    method: 'GET',
    path: '/things/:id',
    description: 'a thing; 404 when unknown',
    auth: 'none',
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', pattern: '^t[0-9]+$' } } },
      response: { 200: { type: 'object' }, 404: { type: 'object' } },
    },
    handler: async (req) => {
      const value = things.get(req.params.id);
      if (value === undefined) throw ApiError.notFound('thing not found');
      return { id: req.params.id, value };
    },
    proxy: {
      description: 'a thing; empty when unknown',
      handler: async (req) => ({ id: req.params.id, value: things.get(req.params.id) ?? 0n }),
    },
  }),
  defineRoute<{ query: { n?: number } }>({
    method: 'GET',
    path: '/list',
    description: 'a list',
    auth: 'none',
    schema: { querystring: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } } },
    handler: async (req) => Array.from({ length: req.query.n ?? 2 }, (_, i) => i),
    proxy: { transform: (items) => ({ items, total: (items as unknown[]).length }) },
  }),
  {
    method: 'POST',
    path: '/blocks/send',
    description: 'submit a block',
    auth: 'none',
    handler: async (req) => {
      const body = req.body as { retry?: boolean };
      throw ApiError.blockRejected('bad signature', body.retry === true);
    },
  },
  {
    method: 'GET',
    path: '/statechain/kv/*',
    description: 'a state value',
    auth: 'none',
    handler: async (req) => ({ key: req.params['*'] ?? null }),
  },
  {
    method: 'GET',
    path: '/boom',
    description: 'fails unexpectedly',
    auth: 'none',
    handler: async () => {
      throw new Error('secret detail at /home/user/.ledger/key');
    },
  },
  {
    method: 'POST',
    path: '/lease/request',
    description: 'operator only',
    auth: 'admin',
    handler: async () => ({ ok: true }),
  },
);

const startServer = apiServerStarter({
  routes,
  rateLimit: false,
  security: { bindAddress: '127.0.0.1', corsOrigins: ['http://127.0.0.1:8080'], adminToken: 's3cret' },
  info: { name: 'test-node', version: '9.9.9' },
});

const start = async (overrides: Partial<ApiServerOptions> = {}): Promise<number> =>
  (await startServer(overrides)).port;

function raw(
  port: number,
  path: string,
  opts: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return rawHttp(port, { ...opts, path });
}

const RATE_HEADERS = [
  'ratelimit-policy',
  'ratelimit',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
];

/** A proxy-form error: JSON, the contract's fields, X-API-Version. */
function expectProxyError(res: Response, status: number, code: string, message?: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers['x-api-version']).toBe('1');
  const err = (res.json as { error: Record<string, unknown> }).error;
  expect(err).toMatchObject({
    code,
    status,
    hint: PROXY_HINTS[code as keyof typeof PROXY_HINTS],
    docs: '/api/v1',
    openapi: '/api/v1/openapi.json',
  });
  expect(typeof err.message).toBe('string');
  if (message !== undefined) expect(err.message).toBe(message);
}

describe('proxy form: the same routes', () => {
  it('serves every route under /api/v1 and /api with X-API-Version; the root has no proxy headers', async () => {
    const port = await start();
    const root = await raw(port, '/statechain/kv/a/b');
    for (const path of ['/api/v1/statechain/kv/a/b', '/api/statechain/kv/a/b']) {
      const res = await raw(port, path);
      expect(res.status).toBe(200);
      expect(res.text).toBe(root.text);
      expect(res.headers['x-api-version']).toBe('1');
    }
    expect(root.headers['x-api-version']).toBeUndefined();
    for (const h of RATE_HEADERS) expect(root.headers[h]).toBeUndefined();
    // Presentation flags carry over.
    const health = await raw(port, '/api/v1/health');
    expect(health.text).toBe('{\n  "status": "ok"\n}');
    expect(health.headers['cache-control']).toBe('no-store');
  });

  it("applies a route's proxy handler and transform; the node form keeps its own answer", async () => {
    const port = await start();
    expect((await raw(port, '/things/t2')).json).toEqual({ error: 'thing not found' });
    const unknown = await raw(port, '/api/v1/things/t2');
    expect(unknown.status).toBe(200);
    expect(unknown.text).toBe('{"id":"t2","value":0}');
    expect((await raw(port, '/api/things/t1')).text).toBe('{"id":"t1","value":18446744073709551615}');
    expect((await raw(port, '/list?n=3')).json).toEqual([0, 1, 2]);
    expect((await raw(port, '/api/v1/list?n=3')).json).toEqual({ items: [0, 1, 2], total: 3 });
  });

  it('refuses a table whose node routes clash with the proxy mounts', () => {
    const clash = defineRoutes(
      { method: 'GET', path: '/health', description: 'liveness', auth: 'none', handler: async () => 1 },
      {
        method: 'GET',
        path: '/api/health',
        description: 'a node route',
        auth: 'none',
        handler: async () => 2,
      },
    );
    expect(() =>
      createApiServer({ routes: clash, rateLimit: false, security: { bindAddress: '127.0.0.1' } }),
    ).toThrow("route GET /api/health: /api is the proxy form's");
  });
});

describe('proxy form: errors', () => {
  it('wraps unknown routes and wrong methods', async () => {
    const port = await start();
    for (const path of [
      '/api/v1/nope',
      '/api/nope',
      '/api/v2/health',
      '/api/v1/health/',
      '/api/v1/v1/health',
    ]) {
      expectProxyError(await raw(port, path), 404, 'not_found', 'not found');
    }
    expectProxyError(await raw(port, '/api/v1/nope', { method: 'POST', body: '{{' }), 404, 'not_found');
    const wrong = await raw(port, '/api/v1/health', { method: 'POST', body: '{}' });
    expectProxyError(wrong, 405, 'method_not_allowed', 'method not allowed');
    expect(wrong.headers.allow).toBe('GET, HEAD');
    // HEAD is served wherever GET is (the contract's read quota counts GET and HEAD): no body.
    const head = await raw(port, '/api/health', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['x-api-version']).toBe('1');
    expect(head.text).toBe('');
    // The same mistakes at the root stay in the node form.
    expect((await raw(port, '/nope')).json).toEqual({ error: 'not found' });
    expect((await raw(port, '/health', { method: 'POST', body: '{}' })).json).toEqual({
      error: 'method not allowed',
    });
  });

  it('wraps bad input: schema failures, unreadable bodies, malformed URLs', async () => {
    const port = await start();
    expectProxyError(
      await raw(port, '/api/v1/list?n=0'),
      400,
      'bad_request',
      "invalid query parameter 'n': must be >= 1",
    );
    expectProxyError(await raw(port, '/api/v1/things/x'), 400, 'bad_request');
    expectProxyError(
      await raw(port, '/api/v1/blocks/send', { method: 'POST', body: '{"a":' }),
      400,
      'bad_request',
      'invalid request body',
    );
    expectProxyError(
      await raw(port, '/api/v1/blocks/send', { method: 'POST' }),
      400,
      'bad_request',
      'invalid request body',
    );
    expectProxyError(await raw(port, '/api/v1/statechain/kv/%zz'), 400, 'bad_request', 'malformed URL');
    expectProxyError(
      await raw(port, `/api/v1/things/t${'1'.repeat(2000)}`),
      400,
      'bad_request',
      'path parameter too long',
    );
    expect((await raw(port, '/statechain/kv/%zz')).json).toEqual({ error: 'malformed URL' });
  });

  it('passes block refusals through as the node answers them, status and {error, retryable} (#14)', async () => {
    const port = await start();
    const final = await raw(port, '/api/v1/blocks/send', { method: 'POST', body: '{}' });
    expect(final.status).toBe(400);
    expect(final.json).toEqual({ error: 'block rejected: bad signature', retryable: false });
    const later = await raw(port, '/api/blocks/send', { method: 'POST', body: '{"retry":true}' });
    expect(later.status).toBe(503);
    expect(later.json).toEqual({ error: 'block rejected: bad signature', retryable: true });
    // Everything else keeps the wrapped shape.
    expectProxyError(await raw(port, '/api/v1/nope'), 404, 'not_found', 'not found');
  });

  it('wraps auth and Host refusals', async () => {
    const port = await start();
    expectProxyError(
      await raw(port, '/api/v1/lease/request', { method: 'POST', body: '{}' }),
      401,
      'unauthorized',
      'invalid or missing admin token',
    );
    const authorized = await raw(port, '/api/v1/lease/request', {
      method: 'POST',
      body: '{}',
      headers: { authorization: 'Bearer s3cret' },
    });
    // A mutating route's answer in the proxy form carries tell_user (this test route: the generic line).
    expect(authorized.json).toEqual({ ok: true, tell_user: 'Done (200 OK): operator only' });
    const noToken = await start({ security: { bindAddress: '127.0.0.1' } });
    expectProxyError(
      await raw(noToken, '/api/v1/lease/request', { method: 'POST', body: '{}' }),
      403,
      'forbidden',
    );
    const rebinding = await raw(port, '/api/v1/health', { headers: { host: 'evil.example:8080' } });
    expectProxyError(rebinding, 403, 'forbidden', 'host not allowed');
    expect(rebinding.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('hides unexpected exceptions behind upstream_error, and logs them', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const port = await start({ logger });
    const res = await raw(port, '/api/v1/boom');
    expectProxyError(res, 500, 'upstream_error', 'internal error');
    expect(res.text).not.toContain('secret');
    expect(lines.some((l) => l.includes('secret detail'))).toBe(true);
  });

  it('answers CORS preflights under the prefix with X-API-Version', async () => {
    const port = await start();
    const res = await raw(port, '/api/v1/blocks/send', {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:8080', 'access-control-request-method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers['x-api-version']).toBe('1');
    expect(res.headers['access-control-allow-origin']).toBe('http://127.0.0.1:8080');
  });
});

describe('proxy form: rate-limit headers', () => {
  it('report the bucket of the request class; 429 in the proxy form with Retry-After', async () => {
    const port = await start({ rateLimit: { rates: { write: { perSecond: 0.5, burst: 3 } } } });
    const client = { 'x-forwarded-for': '198.51.100.1' };
    const seen: Response[] = [];
    for (let i = 0; i < 4; i++) {
      seen.push(await raw(port, '/api/v1/blocks/send', { method: 'POST', body: '{}', headers: client }));
    }
    expect(seen.map((r) => r.status)).toEqual([400, 400, 400, 429]);
    for (const r of seen) expect(r.headers['ratelimit-policy']).toBe('"write";q=3;w=6');
    expect(seen.map((r) => r.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(seen[0]?.headers.ratelimit).toBe('"write";r=2;t=2');
    expect(seen[0]?.headers['ratelimit-limit']).toBe('3');
    expect(seen[0]?.headers['ratelimit-reset']).toBe('2');
    expect(seen[0]?.headers['retry-after']).toBeUndefined();
    const limited = seen[3]!;
    expectProxyError(limited, 429, 'rate_limited', 'rate limit exceeded');
    expect(Number(limited.headers['retry-after'])).toBe(2);
    // t: the wait before the next request, which Retry-After says too (the draft's rule).
    expect(limited.headers.ratelimit).toBe('"write";r=0;t=2');
    expect(limited.headers['ratelimit-reset']).toMatch(/^[56]$/);

    // Reads have their own bucket, at the default policy; probes theirs.
    const read = await raw(port, '/api/v1/things/t1', { headers: client });
    expect(read.headers['ratelimit-policy']).toBe('"read";q=1000;w=5');
    expect(read.headers['ratelimit-remaining']).toBe('999');
    const probe = await raw(port, '/api/v1/health', { headers: client });
    expect(probe.headers['ratelimit-policy']).toBe('"probe";q=100;w=5');

    // The node form spends the same buckets but sends no such headers, and its own 429 body.
    const nodeForm = await raw(port, '/blocks/send', { method: 'POST', body: '{}', headers: client });
    expect(nodeForm.status).toBe(429);
    expect(nodeForm.json).toEqual({ error: 'rate limit exceeded' });
    expect(nodeForm.headers['retry-after']).toBeDefined();
    for (const h of RATE_HEADERS) expect(nodeForm.headers[h]).toBeUndefined();
  });

  it('with rate limits off, send no rate-limit headers (no quota to report)', async () => {
    const port = await start({ rateLimit: false });
    const read = await raw(port, '/api/v1/things/t1');
    const write = await raw(port, '/api/blocks/send', { method: 'POST', body: '{}' });
    for (const r of [read, write]) {
      expect(r.headers['x-api-version']).toBe('1');
      for (const h of [...RATE_HEADERS, 'retry-after']) expect(r.headers[h], h).toBeUndefined();
    }
  });
});

describe('proxy form: discovery and OpenAPI', () => {
  it('publishes a discovery document at the base and the alias, with or without a slash', async () => {
    const port = await start({ manifestExtra: () => ({ network_id: 'devnet-1' }) });
    const res = await raw(port, '/api/v1');
    expect(res.status).toBe(200);
    expect(res.headers['x-api-version']).toBe('1');
    expect(res.text).toContain('\n  "endpoints": [\n');
    const doc = res.json as Record<string, unknown> & {
      endpoints: { method: string; path: string; description: string; auth: string }[];
    };
    expect(doc).toMatchObject({
      name: 'test-node',
      version: '9.9.9',
      network_id: 'devnet-1',
      api_version: 1,
      base: '/api/v1',
      openapi: '/api/v1/openapi.json',
      docs: '/api/v1',
      versioning: { previous_major_supported_days: 180 },
    });
    expect(doc.endpoints.map((e) => `${e.method} ${e.path} ${e.auth}`)).toEqual([
      'GET / none',
      'GET /openapi.json none',
      'GET /health none',
      'GET /things/{id} none',
      'GET /list none',
      'POST /blocks/send none',
      'GET /statechain/kv/{key} none',
      'GET /boom none',
      'POST /lease/request admin',
    ]);
    expect(doc.endpoints.find((e) => e.path === '/things/{id}')?.description).toBe(
      'a thing; empty when unknown',
    );
    for (const path of ['/api/v1/', '/api', '/api/']) expect((await raw(port, path)).text).toBe(res.text);
    // The node manifest is unchanged.
    const manifest = (await raw(port, '/')).json as { endpoints: { description: string }[] };
    expect(manifest.endpoints.map((e) => e.description)).toContain('a thing; 404 when unknown');
  });

  it('publishes the OpenAPI document of the proxy form; the root keeps the node form', async () => {
    const port = await start();
    const res = await raw(port, '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['x-api-version']).toBe('1');
    const doc = res.json as {
      openapi: string;
      servers: { url: string }[];
      paths: Record<string, Record<string, { summary: string }>>;
      components: { schemas: { Error: { properties: { error: { type: string } } } } };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0]?.url).toBe('/api/v1');
    expect(doc.components.schemas.Error.properties.error.type).toBe('object');
    const discovery = (await raw(port, '/api/v1')).json as { endpoints: { method: string; path: string }[] };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(discovery.endpoints.map((e) => `${e.method} ${e.path}`).sort());
    expect(doc.paths['/things/{id}']?.get?.summary).toBe('a thing; empty when unknown');
    expect((await raw(port, '/api/openapi.json')).text).toBe(res.text);

    const nodeDoc = (await raw(port, '/openapi.json')).json as {
      servers?: unknown;
      paths: Record<string, unknown>;
    };
    expect(nodeDoc.servers).toBeUndefined();
    expect(Object.keys(nodeDoc.paths).some((p) => p.startsWith('/api'))).toBe(false);
    expect(Object.keys(nodeDoc.paths)).toContain('/things/{id}');
  });
});
