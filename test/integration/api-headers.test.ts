import { describe, expect, it } from 'vitest';
import { ApiError } from '../../node-core/api/errors.ts';
import type { RateLimitOptions } from '../../node-core/api/rate-limit.ts';
import { defineRoutes } from '../../node-core/api/route-table.ts';
import { createApiServer } from '../../node-core/api/server.ts';

/**
 * Response headers of the API server to the letter of the contract (issue #14): the rate-limit
 * fields of draft-ietf-httpapi-ratelimit-headers-11 with one named policy per class.
 */

const HOST = { host: '127.0.0.1:8080' };
const RATE_HEADERS = [
  'ratelimit-policy',
  'ratelimit',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
];

const routes = defineRoutes(
  { method: 'GET', path: '/health', description: 'liveness', auth: 'none', handler: async () => ({ ok: 1 }) },
  { method: 'GET', path: '/thing', description: 'a read', auth: 'none', handler: async () => ({ a: 1 }) },
  {
    method: 'GET',
    path: '/missing',
    description: 'a read that fails',
    auth: 'none',
    handler: async () => {
      throw ApiError.notFound('nothing here');
    },
  },
  { method: 'POST', path: '/thing', description: 'a write', auth: 'none', handler: async () => ({ b: 2 }) },
);

/** A server whose limiter runs on a clock the test moves. */
function server(rateLimit: RateLimitOptions | false = {}) {
  const clock = { ms: 1_000_000 };
  const app = createApiServer({
    routes,
    rateLimit: rateLimit === false ? false : { now: () => clock.ms, ...rateLimit },
    security: { bindAddress: '127.0.0.1' },
  });
  const inject = (method: 'GET' | 'POST' | 'HEAD', url: string, client = '198.51.100.1') =>
    app.inject({
      method,
      url,
      headers: { ...HOST, 'x-forwarded-for': client },
      ...(method === 'POST' ? { payload: '{}' } : {}),
    });
  return { app, clock, inject };
}

/** An sf-list of exactly one Item: a String and its Integer parameters (RFC 9651 syntax). */
function parseSfItem(v: string | string[] | number | undefined): {
  name: string;
  params: Record<string, number>;
} {
  expect(typeof v).toBe('string');
  const m = /^"([a-z]+)"((?:;[a-z]+=\d+)+)$/.exec(v as string);
  expect(m, String(v)).not.toBeNull();
  const params: Record<string, number> = {};
  for (const p of m![2]!.slice(1).split(';')) {
    const [k, n] = p.split('=');
    params[k!] = Number(n);
  }
  return { name: m![1]!, params };
}

describe('RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  it('name the policy of each class with its quota and window, and the client standing under it', async () => {
    const { app, inject } = server();
    try {
      const read = await inject('GET', '/api/v1/thing');
      expect(read.statusCode).toBe(200);
      expect(read.headers['ratelimit-policy']).toBe('"read";q=1000;w=5');
      expect(read.headers.ratelimit).toBe('"read";r=999;t=1');
      expect(parseSfItem(read.headers.ratelimit)).toEqual({ name: 'read', params: { r: 999, t: 1 } });
      // The legacy fields stay, with the same numbers.
      expect(read.headers['ratelimit-limit']).toBe('1000');
      expect(read.headers['ratelimit-remaining']).toBe('999');
      expect(read.headers['ratelimit-reset']).toBe('1');

      const write = await inject('POST', '/api/v1/thing');
      expect(write.statusCode).toBe(200);
      expect(parseSfItem(write.headers['ratelimit-policy'])).toEqual({
        name: 'write',
        params: { q: 50, w: 5 },
      });
      expect(parseSfItem(write.headers.ratelimit)).toEqual({ name: 'write', params: { r: 49, t: 1 } });

      const probe = await inject('GET', '/api/v1/health');
      expect(parseSfItem(probe.headers['ratelimit-policy'])).toEqual({
        name: 'probe',
        params: { q: 100, w: 5 },
      });
      expect(parseSfItem(probe.headers.ratelimit)).toEqual({ name: 'probe', params: { r: 99, t: 1 } });

      // A second read spends from the read quota only: the write and probe ones are untouched.
      expect((await inject('GET', '/api/v1/thing')).headers.ratelimit).toBe('"read";r=998;t=1');
      expect((await inject('POST', '/api/v1/thing')).headers.ratelimit).toBe('"write";r=48;t=1');
      // Errors answered by a route carry them too.
      const missing = await inject('GET', '/api/v1/missing');
      expect(missing.statusCode).toBe(404);
      expect(missing.headers.ratelimit).toBe('"read";r=997;t=1');
    } finally {
      await app.close();
    }
  });

  it('a 429 carries Retry-After and the same fields, with r=0 and t equal to Retry-After', async () => {
    const { app, clock, inject } = server({ rates: { write: { perSecond: 0.5, burst: 3 } } });
    try {
      for (let i = 0; i < 3; i++) expect((await inject('POST', '/api/v1/thing')).statusCode).toBe(200);
      const refused = await inject('POST', '/api/v1/thing');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error: { code: 'rate_limited', status: 429 } });
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.headers['ratelimit-policy']).toBe('"write";q=3;w=6');
      // The draft: Retry-After must not point before the end of the effective window t.
      expect(refused.headers.ratelimit).toBe('"write";r=0;t=2');
      expect(refused.headers['ratelimit-remaining']).toBe('0');
      expect(Number(refused.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(2);
      clock.ms += 2000;
      const again = await inject('POST', '/api/v1/thing');
      expect(again.statusCode).toBe(200);
      expect(again.headers.ratelimit).toBe('"write";r=0;t=6');
      expect(again.headers['retry-after']).toBeUndefined();
      // The node form shares the bucket and answers 429 with Retry-After, without the fields.
      const node = await inject('POST', '/thing');
      expect(node.statusCode).toBe(429);
      expect(node.headers['retry-after']).toBe('2');
      for (const h of RATE_HEADERS) expect(node.headers[h], h).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('with rate limits off, sends no rate-limit fields at all (no bucket that never empties)', async () => {
    const { app, inject } = server(false);
    try {
      for (const [method, url] of [
        ['GET', '/api/v1/thing'],
        ['POST', '/api/v1/thing'],
        ['GET', '/api/v1/health'],
        ['GET', '/api/v1/missing'],
        ['GET', '/api/v1/nope'],
        ['GET', '/thing'],
      ] as const) {
        const r = await inject(method, url);
        expect(r.statusCode, url).toBeLessThan(500);
        for (const h of [...RATE_HEADERS, 'retry-after']) expect(r.headers[h], `${url} ${h}`).toBeUndefined();
        if (url.startsWith('/api')) expect(r.headers['x-api-version'], url).toBe('1');
      }
    } finally {
      await app.close();
    }
  });
});
