import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../node-core/api/errors.ts';
import type { RateLimitOptions } from '../../node-core/api/rate-limit.ts';
import { defineRoutes } from '../../node-core/api/route-table.ts';
import { createApiServer } from '../../node-core/api/server.ts';
import { registerUi } from '../../node-core/api/ui-static.ts';
import { startTestNode, tempDir, type TestNode, waitFor } from '../helpers/node.ts';
import { parseRawAnswer, rawConnect } from '../helpers/raw-http.ts';

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

/**
 * HEAD on every GET route (issue #14 item 5): the GET answer's status and headers, no body, one
 * read from the client's read quota; streams answer headers only and end.
 */
describe('HEAD on every GET route of a real node', () => {
  let t: TestNode;
  let uiDir: string;
  let port: number;

  beforeAll(async () => {
    uiDir = tempDir('ledger-ui-head-');
    mkdirSync(join(uiDir, 'assets'), { recursive: true });
    writeFileSync(join(uiDir, 'index.html'), '<!doctype html><title>x</title>\n');
    writeFileSync(join(uiDir, 'assets', 'app-1a2b3c.js'), 'console.log(1);\n');
    copyFileSync(
      fileURLToPath(new URL('../../renderer/public/favicon.ico', import.meta.url)),
      join(uiDir, 'favicon.ico'),
    );
    t = await startTestNode({ uiDir, rateLimit: true });
    port = Number(new URL(t.node.url).port);
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(uiDir, { recursive: true, force: true });
  });

  /** One request on its own connection, `Connection: close`: every byte the node sent, once it closed. */
  async function exchange(method: string, path: string, headers: Record<string, string> = {}) {
    const { socket, closed } = await rawConnect(port);
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    socket.write(lines.join('\r\n') + '\r\n\r\n');
    const timer = setTimeout(() => socket.destroy(), 5000);
    const { text } = await closed;
    clearTimeout(timer);
    const end = text.indexOf('\r\n\r\n');
    expect(
      end,
      `${method} ${path}: no complete header block in ${JSON.stringify(text.slice(0, 200))}`,
    ).toBeGreaterThan(0);
    const parsed = parseRawAnswer(text.slice(0, end + 4))!;
    return { ...parsed, body: text.slice(end + 4) };
  }

  const HEX = '0'.repeat(64);
  const concrete = (path: string) =>
    path.replace(/\{([a-z_]+)\}/g, (_, name: string) =>
      name === 'key' ? 'sys.faucet' : name === 'index' ? '0' : HEX,
    );

  it('answers HEAD like GET, without a body, on every GET route of both forms, the GUI and the icon', async () => {
    const manifest = (await (await fetch(`${t.node.url}/`)).json()) as {
      endpoints: { method: string; path: string }[];
    };
    const gets = [
      '/',
      '/openapi.json',
      ...manifest.endpoints.filter((e) => e.method === 'GET').map((e) => e.path),
    ];
    expect(gets.length).toBeGreaterThan(30);
    const paths = [
      ...gets.map(concrete),
      ...gets.map((p) => `/api/v1${p === '/' ? '' : concrete(p)}`),
      '/api/',
      '/ui',
      '/ui/',
      '/ui/wallet',
      '/ui/assets/app-1a2b3c.js',
      '/ui/assets/missing.js',
      '/ui/favicon.ico',
      '/favicon.ico',
    ];
    const client = { 'x-forwarded-for': '198.51.100.50' };
    for (const path of paths) {
      let head = await exchange('HEAD', path, client);
      let get = await exchange('GET', path, client);
      // The node's state may change between the two (its certificate appears after start): ask again.
      if (head.status !== get.status) {
        head = await exchange('HEAD', path, client);
        get = await exchange('GET', path, client);
      }
      expect(head.status, path).toBe(get.status);
      expect(head.status, path).not.toBe(405);
      expect(head.body, path).toBe('');
      if (get.status < 300 || get.status >= 400) expect(get.body.length, path).toBeGreaterThan(0);
      for (const h of ['content-type', 'cache-control', 'x-api-version', 'ratelimit-policy', 'location'])
        expect(head.headers[h], `${path} ${h}`).toBe(get.headers[h]);
      // Fixed answers: the very length GET sends.
      if (
        [
          '/openapi.json',
          '/api/v1/openapi.json',
          '/ui/',
          '/ui/assets/app-1a2b3c.js',
          '/favicon.ico',
        ].includes(path)
      )
        expect(head.headers['content-length'], path).toBe(get.headers['content-length']);
    }
  });

  it('lists HEAD in Allow wherever GET is served, and refuses it where only POST is', async () => {
    const wrong = await exchange('POST', '/api/v1/node');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, HEAD');
    const post = await exchange('HEAD', '/attestation/request');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('POST');
    expect(post.body).toBe('');
  });

  it('answers HEAD on the chat event stream with its headers only, and ends it', async () => {
    const admin = `Bearer ${t.node.adminToken!}`;
    // The stream asks for keep-alive: the HEAD answer must be complete for the connection to serve
    // the next request, sent on it as soon as the HEAD's headers arrived.
    const { socket, closed } = await rawConnect(port);
    let seen = '';
    socket.on('data', (d: string) => (seen += d));
    socket.write(`HEAD /chat/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${admin}\r\n\r\n`);
    await waitFor(() => seen.includes('\r\n\r\n'), 5000, 'the HEAD answer');
    socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    const timer = setTimeout(() => socket.destroy(), 5000);
    const { text } = await closed;
    clearTimeout(timer);
    const second = text.indexOf('HTTP/1.1', 1);
    expect(second, JSON.stringify(text)).toBeGreaterThan(0);
    const head = parseRawAnswer(text.slice(0, second))!;
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/event-stream');
    expect(text.slice(0, second).endsWith('\r\n\r\n')).toBe(true); // nothing after the headers
    expect(parseRawAnswer(text.slice(second))).toMatchObject({ status: 200, json: { status: 'ok' } });
    // The stream it opened is gone: no subscriber left behind.
    await waitFor(() => t.node.chatEvents.size === 0, 5000, 'the HEAD stream to close');
    // Its checks still answer first: without the token, the GET's 401, headers only.
    const refused = await exchange('HEAD', '/api/v1/chat/events');
    expect(refused.status).toBe(401);
    expect(refused.body).toBe('');
    // A GET is still a live stream.
    const ctrl = new AbortController();
    const live = await fetch(`${t.node.url}/chat/events`, {
      headers: { authorization: admin },
      signal: ctrl.signal,
    });
    expect(live.headers.get('content-type')).toBe('text/event-stream');
    expect(t.node.chatEvents.size).toBe(1);
    ctrl.abort();
    await waitFor(() => t.node.chatEvents.size === 0, 5000, 'the GET stream to close');
  });

  it('answers HEAD on the VM console (a WebSocket route) with the plain GET answer, headers only', async () => {
    const head = await exchange('HEAD', `/vms/${HEX}/console`);
    const get = await exchange('GET', `/vms/${HEX}/console`);
    expect(get.status).toBe(400);
    expect(head.status).toBe(400);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.body).toBe('');
  });
});

describe('HEAD in the read quota', () => {
  it('counts a HEAD once, in the read class, on table routes of both forms and on the GUI', async () => {
    const uiDir = tempDir('ledger-ui-head-');
    writeFileSync(join(uiDir, 'index.html'), '<!doctype html><title>x</title>\n');
    const { app, inject } = server();
    registerUi(app, uiDir);
    try {
      const ratelimit = async (method: 'GET' | 'HEAD', url: string) =>
        (await inject(method, url)).headers.ratelimit;
      expect(await ratelimit('HEAD', '/api/v1/thing')).toBe('"read";r=999;t=1');
      expect(await ratelimit('HEAD', '/api/v1/thing')).toBe('"read";r=998;t=1');
      expect(await ratelimit('GET', '/api/v1/thing')).toBe('"read";r=997;t=1');
      expect((await inject('HEAD', '/ui/')).statusCode).toBe(200);
      expect((await inject('HEAD', '/thing')).statusCode).toBe(200);
      expect((await inject('HEAD', '/api/v1/missing')).statusCode).toBe(404);
      expect(await ratelimit('HEAD', '/api/v1/health')).toBe('"probe";r=99;t=1');
      expect(await ratelimit('HEAD', '/api/v1/thing')).toBe('"read";r=993;t=1');
    } finally {
      await app.close();
      rmSync(uiDir, { recursive: true, force: true });
    }
  });
});
