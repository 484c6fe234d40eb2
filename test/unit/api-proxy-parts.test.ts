import type { FastifyReply } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, ERROR_REGISTRY } from '../../node-core/api/errors.ts';
import type { ApiErrorCode } from '../../node-core/api/errors.ts';
import { buildOpenApi, PROXY_ERROR_SCHEMA } from '../../node-core/api/openapi.ts';
import {
  aliasToBase,
  discoveryDocument,
  discoveryEndpoints,
  isProxyPath,
  PROXY_ERROR_CODES,
  PROXY_HINTS,
  proxyErrorBody,
  type ProxyErrorBody,
  proxyErrorCode,
  proxyMounts,
  proxyRouteOf,
} from '../../node-core/api/proxy.ts';
import { DEFAULT_RATES, quotaOf, RateLimiter, rateLimitFields } from '../../node-core/api/rate-limit.ts';
import { defineRoute, defineRoutes } from '../../node-core/api/route-table.ts';
import type { ApiRequest, RouteDef } from '../../node-core/api/route-table.ts';

/** The proxy form's pure parts: error mapping, headers, the proxy table, discovery, OpenAPI. */

const ok = async (): Promise<unknown> => ({ node: true });
const fakeReply = (sent = false) => ({ sent }) as unknown as FastifyReply;
const fakeRequest = {} as ApiRequest;

describe('proxy paths', () => {
  it('are /api and everything below it, nothing else', () => {
    for (const p of ['/api', '/api/', '/api/v1', '/api/v1/accounts', '/api/v2/x', '/api/openapi.json'])
      expect(isProxyPath(p)).toBe(true);
    for (const p of ['/', '/apis', '/apiv1', '/accounts/api', '/API/v1', '/openapi.json'])
      expect(isProxyPath(p)).toBe(false);
  });

  it('mount every route under the base only; the root as the base itself', () => {
    const r: RouteDef = { method: 'GET', path: '/x/:id', description: 'x', auth: 'none', handler: ok };
    expect(proxyMounts(r).map((m) => m.path)).toEqual(['/api/v1/x/:id']);
    expect(proxyMounts({ ...r, path: '/' }).map((m) => m.path)).toEqual(['/api/v1', '/api/v1/']);
  });

  it('route the alias as the base: the same target under /api/v1, nothing else touched', () => {
    const cases: [string, string][] = [
      ['/api', '/api/v1'],
      ['/api/', '/api/v1/'],
      ['/api?x=1', '/api/v1?x=1'],
      ['/api/health', '/api/v1/health'],
      ['/api/accounts/a/balance?asset=XE', '/api/v1/accounts/a/balance?asset=XE'],
      // Not found under the base, as it was not under the alias.
      ['/api/v2/health', '/api/v1/v2/health'],
      ['/api/v1x', '/api/v1/v1x'],
      // The base's own targets, and everything outside /api, unchanged.
      ['/api/v1', '/api/v1'],
      ['/api/v1/', '/api/v1/'],
      ['/api/v1?x', '/api/v1?x'],
      ['/api/v1/v1/health', '/api/v1/v1/health'],
      ['/apis', '/apis'],
      ['/apiv1', '/apiv1'],
      ['/health', '/health'],
      ['/', '/'],
      ['http://127.0.0.1/api/health', 'http://127.0.0.1/api/health'],
    ];
    for (const [sent, routed] of cases) expect([sent, aliasToBase(sent)]).toEqual([sent, routed]);
  });
});

describe('proxy errors', () => {
  it('give every registry code a contract code, and every contract code a hint', () => {
    const codes = Object.keys(ERROR_REGISTRY) as ApiErrorCode[];
    const expected: Record<ApiErrorCode, string> = {
      bad_request: 'bad_request',
      invalid_body: 'bad_request',
      payload_too_large: 'bad_request',
      unauthorized: 'unauthorized',
      forbidden: 'forbidden',
      host_not_allowed: 'forbidden',
      not_found: 'not_found',
      method_not_allowed: 'method_not_allowed',
      request_timeout: 'bad_request',
      conflict: 'bad_request',
      idempotency_in_progress: 'bad_request',
      idempotency_mismatch: 'bad_request',
      rate_limited: 'rate_limited',
      headers_too_large: 'bad_request',
      block_rejected: 'bad_request',
      missing_signature: 'unauthorized',
      signature_failed: 'forbidden',
      vm_not_found: 'not_found',
      exec_timeout: 'upstream_timeout',
      lease_not_active: 'not_found',
      exec_failed: 'upstream_error',
      tunnel_error: 'upstream_unavailable',
      internal: 'upstream_error',
      unavailable: 'upstream_unavailable',
    };
    expect(Object.fromEntries(codes.map((c) => [c, proxyErrorCode(new ApiError(c))]))).toEqual(expected);
    for (const c of PROXY_ERROR_CODES) {
      expect(PROXY_HINTS[c]).toMatch(/^[A-Z].*\.$/);
      expect(PROXY_HINTS[c]).not.toMatch(/[\r\n]/);
    }
  });

  it('keep the node status and message; a block refusal passes through as the node answered it', () => {
    expect(proxyErrorBody(ApiError.notFound('account not found'))).toEqual({
      error: {
        code: 'not_found',
        status: 404,
        message: 'account not found',
        hint: PROXY_HINTS.not_found,
        docs: '/api/v1',
        openapi: '/api/v1/openapi.json',
      },
    });
    // "Errors that the node itself returns as JSON pass through unchanged" (issue #14).
    expect(proxyErrorBody(ApiError.blockRejected('bad signature', false))).toEqual({
      error: 'block rejected: bad signature',
      retryable: false,
    });
    expect(proxyErrorBody(ApiError.blockRejected('fork in progress', true))).toEqual({
      error: 'block rejected: fork in progress',
      retryable: true,
    });
    const wrapped = (e: ApiError) => (proxyErrorBody(e) as ProxyErrorBody).error;
    expect(wrapped(ApiError.internal(new Error('secret')))).toMatchObject({
      code: 'upstream_error',
      status: 500,
      message: 'internal error',
    });
    expect(wrapped(ApiError.hostNotAllowed())).toMatchObject({ code: 'forbidden', status: 403 });
  });
});

describe('rate-limit headers', () => {
  const limiters: RateLimiter[] = [];
  afterEach(() => {
    for (const l of limiters.splice(0)) l.close();
  });

  it('state a named policy per class (draft-ietf-httpapi-ratelimit-headers-11) and the legacy trio', () => {
    const full = (cls: 'read' | 'write' | 'probe') =>
      rateLimitFields(cls, { ok: true, quota: quotaOf(DEFAULT_RATES[cls]) });
    expect(full('read')).toEqual({
      'ratelimit-policy': '"read";q=1000;w=5',
      ratelimit: '"read";r=1000;t=0',
      'ratelimit-limit': '1000',
      'ratelimit-remaining': '1000',
      'ratelimit-reset': '0',
    });
    expect(full('write')['ratelimit-policy']).toBe('"write";q=50;w=5');
    expect(full('probe')['ratelimit-policy']).toBe('"probe";q=100;w=5');
  });

  it('follow the bucket: remaining whole tokens, seconds until full again', () => {
    let now = 1_000_000;
    const l = new RateLimiter({ now: () => now });
    limiters.push(l);
    expect(l.quota('a', 'write')).toEqual({ limit: 50, windowSeconds: 5, remaining: 50, resetSeconds: 0 });
    for (let i = 0; i < 3; i++) l.take('a', 'write');
    expect(l.quota('a', 'write')).toEqual({ limit: 50, windowSeconds: 5, remaining: 47, resetSeconds: 1 });
    for (let i = 0; i < 47; i++) l.take('a', 'write');
    expect(l.quota('a', 'write')).toMatchObject({ remaining: 0, resetSeconds: 5 });
    expect(l.take('a', 'write').ok).toBe(false);
    now += 150; // 1.5 tokens at 10/s
    expect(l.quota('a', 'write')).toMatchObject({ remaining: 1, resetSeconds: 5 });
    expect(rateLimitFields('write', { ok: true, quota: l.quota('a', 'write') }).ratelimit).toBe(
      '"write";r=1;t=5',
    );
  });

  it('tell a refused client it has nothing left, and when to come back (t equals Retry-After)', () => {
    const l = new RateLimiter({ now: () => 0, maxClients: 1 });
    limiters.push(l);
    const first = l.take('a', 'read');
    expect(rateLimitFields('read', first).ratelimit).toBe('"read";r=999;t=1');
    const refused = l.take('b', 'read'); // a newcomer beyond maxClients
    expect(refused.ok).toBe(false);
    const headers = rateLimitFields('read', refused);
    expect(headers['ratelimit-remaining']).toBe('0');
    expect(Number(headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    expect(headers.ratelimit).toBe(`"read";r=0;t=${refused.ok ? -1 : refused.retryAfterSeconds}`);
  });

  it('report the quota as the take left it, however long the answer takes to be written', () => {
    let now = 0;
    const l = new RateLimiter({ now: () => now });
    limiters.push(l);
    const taken = l.take('a', 'read');
    now += 50; // the event loop was busy: 10 tokens refilled since
    expect(rateLimitFields('read', taken)['ratelimit-remaining']).toBe('999');
  });

  it('are read without spending or tracking anything', () => {
    const l = new RateLimiter({ now: () => 0, rates: { read: { perSecond: 1, burst: 2 } } });
    limiters.push(l);
    for (let i = 0; i < 5; i++) expect(l.quota('x', 'read').remaining).toBe(2);
    expect(l.size).toBe(0);
    expect(l.take('x', 'read').ok).toBe(true);
    expect(l.quota('x', 'read')).toEqual({ limit: 2, windowSeconds: 2, remaining: 1, resetSeconds: 1 });
    expect(l.take('x', 'read').ok).toBe(true);
    expect(l.take('x', 'read').ok).toBe(false);
  });
});

describe('the proxy table', () => {
  const nodeRoute = defineRoute<{ params: { id: string } }>({
    method: 'GET',
    path: '/things/:id',
    description: 'a thing',
    auth: 'none',
    schema: {
      params: { type: 'object', properties: { id: { type: 'string' } } },
      response: { 200: { type: 'object' }, 404: { type: 'object' } },
    },
    handler: async (req) => ({ id: req.params.id }),
  });

  it('serves a route without adaptation as is, with its rate class fixed from its own path', async () => {
    const health: RouteDef = { method: 'GET', path: '/health', description: 'h', auth: 'none', handler: ok };
    const p = proxyRouteOf(health);
    expect(p.rateClass).toBe('probe');
    expect(p.handler).toBe(health.handler);
    expect(proxyMounts(p)[0]?.rateClass).toBe('probe');
    expect(proxyRouteOf({ ...health, method: 'POST', path: '/x' }).rateClass).toBe('write');
    expect(proxyRouteOf({ ...health, path: '/x', rateClass: 'probe' }).rateClass).toBe('probe');
    expect('proxy' in proxyRouteOf({ ...health, proxy: {} })).toBe(false);
  });

  it('applies a proxy handler, a transform, a description and schema parts', async () => {
    const req = { params: { id: 'x1' } } as unknown as ApiRequest;
    const replaced = proxyRouteOf({
      ...nodeRoute,
      proxy: {
        description: 'a thing, or nothing',
        schema: { response: { 200: { type: 'array' } } },
        handler: async () => ['proxy'],
      },
    });
    expect(replaced.description).toBe('a thing, or nothing');
    expect(replaced.schema?.params).toEqual(nodeRoute.schema?.params);
    expect(replaced.schema?.response).toEqual({ 200: { type: 'array' } });
    expect(await replaced.handler(req, fakeReply())).toEqual(['proxy']);

    const reshaped = proxyRouteOf({
      ...nodeRoute,
      proxy: { transform: (body) => ({ wrapped: body }) },
    });
    expect(reshaped.description).toBe('a thing');
    expect(await reshaped.handler(req, fakeReply())).toEqual({ wrapped: { id: 'x1' } });
    // A handler that answered by itself is left alone.
    expect(await reshaped.handler(req, fakeReply(true))).toEqual({ id: 'x1' });

    const both = proxyRouteOf({
      ...nodeRoute,
      proxy: { handler: async () => 1, transform: (body) => (body as number) + 1 },
    });
    expect(await both.handler(fakeRequest, fakeReply())).toBe(2);
  });

  it('lists the discovery endpoints with their auth class, relative to the base', () => {
    const routes = defineRoutes(
      { method: 'GET', path: '/', description: 'discovery', auth: 'none', handler: ok },
      nodeRoute,
      { method: 'GET', path: '/kv/*', description: 'kv', auth: 'none', handler: ok, wildcardName: 'key' },
      { method: 'POST', path: '/lease/request', description: 'lease', auth: 'admin', handler: ok },
    );
    const endpoints = discoveryEndpoints(routes);
    expect(endpoints).toEqual([
      { method: 'GET', path: '/', description: 'discovery', auth: 'none' },
      { method: 'GET', path: '/things/{id}', description: 'a thing', auth: 'none' },
      { method: 'GET', path: '/kv/{key}', description: 'kv', auth: 'none' },
      // A mutating route: its answers carry tell_user.
      { method: 'POST', path: '/lease/request', description: 'lease', auth: 'admin', tell_user: true },
    ]);
    const doc = discoveryDocument({ name: 'n', version: '1.2.3' }, endpoints, {
      network_id: 'devnet',
      base: 'not allowed to mask the contract',
    });
    expect(doc).toMatchObject({
      name: 'n',
      version: '1.2.3',
      network_id: 'devnet',
      api_version: 1,
      base: '/api/v1',
      alias: '/api',
      openapi: '/api/v1/openapi.json',
      docs: '/api/v1',
      endpoints,
    });
    expect(doc.versioning.previous_major_supported_days).toBe(180);
    expect(doc.versioning.policy).toMatch(/additive/);
    expect(doc.versioning.deprecation_headers).toEqual(['Deprecation', 'Sunset', 'Link']);
  });
});

describe('the proxy OpenAPI document', () => {
  const routes = defineRoutes(
    {
      method: 'POST',
      path: '/blocks/send',
      description: 'submit',
      auth: 'none',
      schema: {
        body: { type: 'object' },
        response: { 201: { type: 'object' }, 400: { type: 'object' }, 503: { type: 'object' } },
      },
      handler: ok,
    },
    { method: 'POST', path: '/admin', description: 'admin', auth: 'admin', handler: ok },
  );
  const node = buildOpenApi(routes, { title: 't', version: '1' });
  const proxy = buildOpenApi(routes, { title: 't', version: '1' }, 'proxy');

  it('has the proxy base as its server and the proxy error schema', () => {
    expect(proxy.servers).toEqual([{ url: '/api/v1', description: 'proxy form, API version 1' }]);
    expect(proxy.components.schemas.Error).toBe(PROXY_ERROR_SCHEMA);
    expect(node.servers).toBeUndefined();
    expect(node.components.schemas.Error).toMatchObject({ properties: { error: { type: 'string' } } });
    expect(Object.keys(proxy.paths)).toEqual(Object.keys(node.paths));
  });

  it('wraps declared errors and documents the proxy headers', () => {
    const op = proxy.paths['/blocks/send']?.post;
    const responses = op?.responses as Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
    expect(responses['400']).toEqual({ $ref: '#/components/responses/Error' });
    expect(responses['503']).toEqual({ $ref: '#/components/responses/Error' });
    expect(Object.keys(responses['201']?.headers ?? {})).toEqual([
      'X-API-Version',
      'RateLimit-Policy',
      'RateLimit',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ]);
    expect(responses['429']?.headers?.['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    expect(responses['201']?.headers?.['Retry-After']).toBeUndefined();
    const admin = proxy.paths['/admin']?.post?.responses as Record<string, { headers?: unknown }>;
    expect(admin['401']?.headers).toBeDefined();
    expect(Object.keys(proxy.components.headers ?? {})).toContain('Retry-After');
    // The node form is as it was: no headers, errors in its own schema.
    const nodeResponses = node.paths['/blocks/send']?.post?.responses as Record<
      string,
      { headers?: unknown }
    >;
    expect(nodeResponses['400']).toMatchObject({
      content: { 'application/json': { schema: { type: 'object' } } },
    });
    expect(nodeResponses['201']?.headers).toBeUndefined();
  });
});
