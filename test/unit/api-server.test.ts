import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../node-core/api/errors.ts';
import { defineRoute, defineRoutes } from '../../node-core/api/route-table.ts';
import { indentJson, serializeJson } from '../../node-core/api/server.ts';
import type { ApiServerOptions } from '../../node-core/api/server.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';
import { apiServerStarter } from '../helpers/api-server.ts';
import { rawExchange, rawHttp as raw } from '../helpers/raw-http.ts';
import type { RawResponse as Response } from '../helpers/raw-http.ts';

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
  {
    method: 'GET',
    path: '/ready',
    description: 'readiness',
    auth: 'none',
    pretty: true,
    noStore: true,
    handler: async (req) => {
      if ((req.query as { fail?: string }).fail !== undefined) throw ApiError.unavailable('not ready');
      return { ready: true, height: 18446744073709551615n };
    },
  },
  {
    method: 'POST',
    path: '/echo',
    description: 'echoes the body',
    auth: 'none',
    handler: async (req) => req.body,
  },
  defineRoute<{ params: { address: string }; query: { limit?: number } }>({
    method: 'GET',
    path: '/accounts/:address/balance',
    description: 'balance of an account',
    auth: 'none',
    schema: {
      params: { type: 'object', properties: { address: { type: 'string', pattern: '^xe_[0-9a-f]{4,}$' } } },
      querystring: {
        type: 'object',
        properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } },
        additionalProperties: false,
      },
    },
    handler: async (req) => ({
      address: req.params.address,
      limit: req.query.limit ?? null,
      balance: 18446744073709551615n,
    }),
  }),
  {
    method: 'POST',
    path: '/accounts/:address/balance',
    description: 'not really: a second method on the same path',
    auth: 'none',
    handler: async (_req, reply) => {
      reply.code(201);
      return { created: true };
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
    method: 'POST',
    path: '/blocks',
    description: 'submit a block',
    auth: 'none',
    handler: async (req) => {
      const body = req.body as { retry?: boolean; hash?: string };
      if (typeof body.hash === 'string') throw new ProtocolError('ERR_HEX', 'not lowercase hex', 'hash');
      throw ApiError.blockRejected('bad signature', body.retry === true);
    },
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
    method: 'GET',
    path: '/unsafe',
    description: 'returns an unsafe number',
    auth: 'none',
    handler: async () => ({ n: 2 ** 60 }),
  },
  {
    method: 'POST',
    path: '/admin/peers',
    description: 'add a peer',
    auth: 'admin',
    handler: async () => ({ ok: true }),
  },
);

const DEFAULTS: ApiServerOptions = {
  routes,
  rateLimit: false,
  security: { bindAddress: '127.0.0.1', corsOrigins: ['http://127.0.0.1:8080'], adminToken: 's3cret' },
  info: { name: 'test-node', version: '9.9.9' },
};

const start = apiServerStarter(DEFAULTS);

function expectNodeError(res: Response, status: number, message?: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = res.json as { error?: unknown };
  expect(typeof body.error).toBe('string');
  if (message !== undefined) expect(body.error).toBe(message);
}

describe('request bodies', () => {
  it('echoes big integers exactly (lossless on both sides)', async () => {
    const { port } = await start();
    const body = '{"amount":18446744073709551615,"neg":-9223372036854775808,"small":7,"s":"x"}';
    const res = await raw(port, {
      method: 'POST',
      path: '/echo',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text).toBe(body);
  });

  it('treats a missing or other content type as JSON', async () => {
    const { port } = await start();
    const noType = await raw(port, { method: 'POST', path: '/echo', body: '[1,2]' });
    expect(noType.text).toBe('[1,2]');
    const textType = await raw(port, {
      method: 'POST',
      path: '/echo',
      body: '{"a":1}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(textType.text).toBe('{"a":1}');
    const charset = await raw(port, {
      method: 'POST',
      path: '/echo',
      body: '"é"',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(charset.text).toBe('"é"');
  });

  it('refuses bodies over 1 MiB with 400, declared or streamed', async () => {
    const { port } = await start();
    const big = `"${'a'.repeat(1024 * 1024)}"`;
    expectNodeError(
      await raw(port, { method: 'POST', path: '/echo', body: big }),
      400,
      'invalid request body',
    );
    expectNodeError(
      await raw(port, { method: 'POST', path: '/echo', body: big, chunked: true }),
      400,
      'invalid request body',
    );
    const fits = `"${'a'.repeat(1024 * 1024 - 2)}"`;
    expect((await raw(port, { method: 'POST', path: '/echo', body: fits })).status).toBe(200);
  });

  it('refuses malformed JSON, invalid UTF-8, deep nesting, empty and missing bodies with 400', async () => {
    const { port } = await start();
    const bad: (string | Buffer)[] = [
      '{"a":',
      '{"a":1,}',
      "{'a':1}",
      'NaN',
      '01',
      Buffer.from([0x22, 0xff, 0xfe, 0x22]),
      Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), // UTF-8-encoded lone surrogate
      '['.repeat(100) + ']'.repeat(100),
      '{"a":'.repeat(70) + '1' + '}'.repeat(70),
      '',
      // Valid JSON, but numbers the node could not write back exactly.
      '{"a":1e400}',
      '[-1e21]',
    ];
    for (const body of bad) {
      const res = await raw(port, {
        method: 'POST',
        path: '/echo',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expectNodeError(res, 400, 'invalid request body');
    }
    expectNodeError(await raw(port, { method: 'POST', path: '/echo' }), 400, 'invalid request body');
    expectNodeError(
      await raw(port, { method: 'POST', path: '/echo', body: '{}', headers: { 'content-type': '??' } }),
      400,
      'invalid request body',
    );
  });

  it('maps decoding errors thrown by handlers to 400, and block rejections to 400 or 503', async () => {
    const { port } = await start();
    const hex = await raw(port, { method: 'POST', path: '/blocks', body: '{"hash":"ABC"}' });
    expectNodeError(hex, 400, 'hash: not lowercase hex');
    const rejected = await raw(port, { method: 'POST', path: '/blocks', body: '{}' });
    expect(rejected.status).toBe(400);
    expect(rejected.json).toEqual({ error: 'block rejected: bad signature', retryable: false });
    const retry = await raw(port, { method: 'POST', path: '/blocks', body: '{"retry":true}' });
    expect(retry.status).toBe(503);
    expect(retry.json).toEqual({ error: 'block rejected: bad signature', retryable: true });
  });
});

describe('routing', () => {
  it('answers unknown routes with a JSON 404', async () => {
    const { port } = await start();
    for (const path of ['/nope', '/accounts', '/health/', '/accounts/xe_abcd/balance/extra']) {
      expectNodeError(await raw(port, { path }), 404, 'not found');
    }
    // A body sent to an unknown path is not parsed: still 404.
    expectNodeError(await raw(port, { method: 'POST', path: '/nope', body: '{{{' }), 404, 'not found');
  });

  it('answers a known path with the wrong method with 405 and Allow (HEAD wherever GET is)', async () => {
    const { port } = await start();
    const res = await raw(port, { method: 'POST', path: '/health', body: '{}' });
    expectNodeError(res, 405, 'method not allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
    const del = await raw(port, { method: 'DELETE', path: '/accounts/xe_abcd/balance' });
    expectNodeError(del, 405);
    expect(del.headers.allow).toBe('GET, HEAD, POST');
    const head = await raw(port, { method: 'HEAD', path: '/health' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(
      String(Buffer.byteLength(serializeJson({ status: 'ok' }, true))),
    );
    expect(head.text).toBe('');
    expect((await raw(port, { method: 'HEAD', path: '/echo' })).headers.allow).toBe('POST');
    expect((await raw(port, { method: 'POST', path: '/', body: '{}' })).headers.allow).toBe('GET, HEAD');
  });

  it('validates params and query with messages naming the field', async () => {
    const { port } = await start();
    const okRes = await raw(port, { path: '/accounts/xe_abcd/balance?limit=10' });
    expect(okRes.status).toBe(200);
    expect(okRes.text).toBe('{"address":"xe_abcd","limit":10,"balance":18446744073709551615}');
    expectNodeError(await raw(port, { path: '/accounts/nope/balance' }), 400);
    expect((await raw(port, { path: '/accounts/nope/balance' })).json).toEqual({
      error: 'invalid path parameter \'address\': must match pattern "^xe_[0-9a-f]{4,}$"',
    });
    expect((await raw(port, { path: '/accounts/xe_abcd/balance?limit=1000' })).json).toEqual({
      error: "invalid query parameter 'limit': must be <= 100",
    });
    expect((await raw(port, { path: '/accounts/xe_abcd/balance?limit=ten' })).json).toEqual({
      error: "invalid query parameter 'limit': must be integer",
    });
  });

  it('passes keys with slashes to wildcard routes, and long parameters', async () => {
    const { port } = await start();
    const res = await raw(port, { path: '/statechain/kv/users/alice/profile' });
    expect(res.json).toEqual({ key: 'users/alice/profile' });
    const long = 'k'.repeat(600);
    expect((await raw(port, { path: `/statechain/kv/${long}` })).json).toEqual({ key: long });
    expect((await raw(port, { path: `/accounts/xe_${'a'.repeat(300)}/balance` })).status).toBe(200);
  });

  it('answers a malformed URL with a JSON 400', async () => {
    const { port } = await start();
    expectNodeError(await raw(port, { path: '/statechain/kv/%zz' }), 400);
  });

  it('answers malformed HTTP with a JSON 400', async () => {
    const { port } = await start();
    const text = await rawExchange(port, 'GARBAGE\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toContain('application/json');
    expect(text.endsWith('{"error":"malformed HTTP request"}')).toBe(true);
  });

  it('hides unexpected exceptions behind a 500 without details, and logs them', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { port } = await start({ logger });
    const res = await raw(port, { path: '/boom' });
    expect(res.status).toBe(500);
    expect(res.text).toBe('{"error":"internal error"}');
    expect(res.text).not.toContain('secret');
    const errors = lines
      .map((l) => JSON.parse(l) as { level: number; err?: { message?: string; stack?: string } })
      .filter((e) => e.level >= 50); // pino's error level
    expect(errors).toHaveLength(1);
    const entry = errors[0];
    expect(entry?.err?.message).toBe('secret detail at /home/user/.ledger/key');
    expect(entry?.err?.stack).toContain('api-server.test.ts');
    const unsafe = await raw(port, { path: '/unsafe' });
    expect(unsafe.text).toBe('{"error":"internal error"}');
  });
});

describe('manifest, OpenAPI, presentation', () => {
  it('lists every table route in order on GET /, pretty-printed', async () => {
    const { port } = await start({ manifestExtra: () => ({ network_id: 'devnet', node_id: 'n1' }) });
    const res = await raw(port, { path: '/' });
    expect(res.status).toBe(200);
    const body = res.json as { name: string; version: string; network_id: string; endpoints: unknown[] };
    expect(Object.keys(body)).toEqual(['name', 'version', 'network_id', 'node_id', 'endpoints']);
    expect(body.name).toBe('test-node');
    expect(body.version).toBe('9.9.9');
    expect(body.endpoints).toEqual(
      routes.map((r) => ({
        method: r.method,
        path: r.path.replace(/:(\w+)/g, '{$1}').replace('*', '{key}'),
        description: r.description,
      })),
    );
    expect(res.text).toBe(JSON.stringify(res.json, null, 2));
  });

  it('serves an OpenAPI 3.1 document covering the table', async () => {
    const { port } = await start();
    const res = await raw(port, { path: '/openapi.json' });
    expect(res.status).toBe(200);
    const doc = res.json as {
      openapi: string;
      info: { title: string };
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('test-node');
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, '{$1}').replace('*', '{key}');
      expect(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/']?.get).toBeDefined();
    expect(JSON.stringify(doc)).not.toContain(':address');
  });

  it('pretty-prints and marks no-store on /health and /ready, including their errors', async () => {
    const { port } = await start();
    const health = await raw(port, { path: '/health' });
    expect(health.text).toBe('{\n  "status": "ok"\n}');
    expect(health.headers['cache-control']).toBe('no-store');
    const ready = await raw(port, { path: '/ready' });
    expect(ready.text).toBe('{\n  "ready": true,\n  "height": 18446744073709551615\n}');
    expect(ready.headers['cache-control']).toBe('no-store');
    const notReady = await raw(port, { path: '/ready?fail=1' });
    expect(notReady.status).toBe(503);
    expect(notReady.text).toBe('{\n  "error": "not ready"\n}');
    expect(notReady.headers['cache-control']).toBe('no-store');
    const other = await raw(port, { path: '/accounts/xe_abcd/balance' });
    expect(other.text).not.toContain('\n');
    expect(other.headers['cache-control']).toBeUndefined();
  });

  it('indents like JSON.stringify(v, null, 2) while keeping big integers', () => {
    const samples: unknown[] = [{ a: [1, { b: 'x,y:{z}"' }, []], c: {}, d: null }, [], 'a\\"b', [[[]]]];
    for (const v of samples) expect(indentJson(JSON.stringify(v))).toBe(JSON.stringify(v, null, 2));
    expect(serializeJson({ n: 2n ** 64n - 1n }, true)).toBe('{\n  "n": 18446744073709551615\n}');
  });
});

describe('security', () => {
  it('refuses foreign Host headers (DNS rebinding) and accepts loopback names', async () => {
    const { port } = await start();
    expectNodeError(
      await raw(port, { path: '/health', headers: { host: 'evil.example' } }),
      403,
      'host not allowed',
    );
    expectNodeError(await raw(port, { path: '/nope', headers: { host: `evil.example:${port}` } }), 403);
    for (const host of [`localhost:${port}`, 'localhost', `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect((await raw(port, { path: '/health', headers: { host } })).status, host).toBe(200);
    }
    expectNodeError(await raw(port, { path: '/health', noHost: true }), 400);
  });

  it('accepts names added by allowedHosts', async () => {
    const { port } = await start({ security: { bindAddress: '127.0.0.1', allowedHosts: ['node.lan'] } });
    expect((await raw(port, { path: '/health', headers: { host: 'node.lan:1' } })).status).toBe(200);
  });

  it('sends CORS headers only to the allowed origin, and answers preflights with 204', async () => {
    const { port, base } = await start();
    const allowed = await fetch(`${base}/health`, { headers: { origin: 'http://127.0.0.1:8080' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8080');
    expect(allowed.headers.get('vary')).toBe('Origin');
    const other = await fetch(`${base}/health`, { headers: { origin: 'http://evil.example' } });
    expect(other.status).toBe(200);
    expect([...other.headers.keys()].filter((k) => k.startsWith('access-control-'))).toEqual([]);
    const preflight = await raw(port, {
      method: 'OPTIONS',
      path: '/admin/peers',
      headers: { origin: 'http://127.0.0.1:8080', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.text).toBe('');
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
    expect(preflight.headers['access-control-allow-headers']).toBe(
      'Content-Type, Authorization, Idempotency-Key, X-Source, X-Ledger-App',
    );
    expect(preflight.headers['access-control-max-age']).toBe('3600');
    const foreign = await raw(port, {
      method: 'OPTIONS',
      path: '/nope',
      headers: { origin: 'http://evil.example' },
    });
    expect(foreign.status).toBe(204);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    // Errors keep the CORS headers, so the app can read them.
    const err = await fetch(`${base}/nope`, { headers: { origin: 'http://127.0.0.1:8080' } });
    expect(err.status).toBe(404);
    expect(err.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8080');
  });

  it('guards admin routes: 403 without a configured token, 401 wrong or missing, 200 right', async () => {
    const none = await start({ security: { bindAddress: '127.0.0.1' } });
    const forbidden = await raw(none.port, {
      method: 'POST',
      path: '/admin/peers',
      body: '{}',
      headers: { authorization: 'Bearer s3cret' },
    });
    expectNodeError(forbidden, 403, 'operator endpoint disabled: no admin token configured');
    const { port } = await start();
    expectNodeError(
      await raw(port, { method: 'POST', path: '/admin/peers', body: '{}' }),
      401,
      'invalid or missing admin token',
    );
    expectNodeError(
      await raw(port, {
        method: 'POST',
        path: '/admin/peers',
        body: '{}',
        headers: { authorization: 'Bearer nope' },
      }),
      401,
    );
    const ok = await raw(port, {
      method: 'POST',
      path: '/admin/peers',
      body: '{}',
      headers: { authorization: 'Bearer s3cret' },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ ok: true });
  });
});

describe('rate limits', () => {
  it('spends write tokens on POST: burst, then 429 with Retry-After, then refill', async () => {
    let now = 0;
    const { port } = await start({ rateLimit: { now: () => now } });
    const post = (): Promise<Response> => raw(port, { method: 'POST', path: '/echo', body: '1' });
    for (let i = 0; i < 50; i++) expect((await post()).status).toBe(200);
    const limited = await post();
    expectNodeError(limited, 429, 'rate limit exceeded');
    expect(limited.headers['retry-after']).toBe('1');
    // Reads are a separate class.
    expect((await raw(port, { path: '/accounts/xe_abcd/balance' })).status).toBe(200);
    now += 1000;
    for (let i = 0; i < 10; i++) expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(429);
  });

  it('gives probes their own class, and unknown paths spend read tokens', async () => {
    const { port } = await start({
      rateLimit: {
        now: () => 0,
        rates: { probe: { perSecond: 1, burst: 2 }, read: { perSecond: 1, burst: 3 } },
      },
    });
    expect((await raw(port, { path: '/health' })).status).toBe(200);
    expect((await raw(port, { path: '/ready' })).status).toBe(200);
    const limited = await raw(port, { path: '/health' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await raw(port, { path: '/nope' })).status).toBe(404);
    expect((await raw(port, { path: '/nope' })).status).toBe(404);
    expect((await raw(port, { path: '/accounts/xe_abcd/balance' })).status).toBe(200);
    expect((await raw(port, { path: '/nope' })).status).toBe(429);
    // Preflights are never counted.
    for (let i = 0; i < 5; i++)
      expect((await raw(port, { method: 'OPTIONS', path: '/health' })).status).toBe(204);
  });

  it('keys clients by the rightmost X-Forwarded-For entry when the peer is loopback', async () => {
    const { port } = await start({
      rateLimit: { now: () => 0, rates: { write: { perSecond: 1, burst: 1 } } },
    });
    const post = (xff: string): Promise<Response> =>
      raw(port, { method: 'POST', path: '/echo', body: '1', headers: { 'x-forwarded-for': xff } });
    expect((await post('10.0.0.1, 10.0.0.2')).status).toBe(200);
    expect((await post('10.0.0.9, 10.0.0.2')).status).toBe(429); // same rightmost entry
    expect((await post('10.0.0.2, 10.0.0.3')).status).toBe(200);
  });

  it('can be turned off', async () => {
    const { port } = await start({ rateLimit: false });
    for (let i = 0; i < 60; i++)
      expect((await raw(port, { method: 'POST', path: '/echo', body: '1' })).status).toBe(200);
  });
});
