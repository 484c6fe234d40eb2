import { describe, expect, it } from 'vitest';
import { ApiError } from '../../node-core/api/errors.ts';
import { defineRoute, defineRoutes, deprecationHeaders } from '../../node-core/api/route-table.ts';
import type { RouteDef, RouteDeprecation } from '../../node-core/api/route-table.ts';
import { createApiServer } from '../../node-core/api/server.ts';
import { apiServerStarter } from '../helpers/api-server.ts';
import { rawHttp } from '../helpers/raw-http.ts';

/**
 * Deprecation (contract, Versioning 5; issue #14 item 6): a route marked deprecated in the route
 * table is flagged in the manifest, the discovery document and both OpenAPI documents, and every
 * answer it gives, errors included, carries Deprecation (RFC 9745), Sunset (RFC 8594) and Link.
 */

const SINCE = '2026-01-15T00:00:00Z';
const SINCE_S = Date.parse(SINCE) / 1000;
const SUNSET = '2026-07-01T00:00:00Z';
const DEPRECATED: RouteDeprecation = { since: SINCE, sunset: SUNSET, link: '/api/v1#deprecations' };
const EXPECTED = {
  deprecation: `@${SINCE_S}`,
  sunset: 'Wed, 01 Jul 2026 00:00:00 GMT',
  link: '</api/v1#deprecations>; rel="deprecation"',
};

const routes = defineRoutes(
  {
    method: 'GET',
    path: '/new',
    description: 'the replacement',
    auth: 'none',
    handler: async () => ({ v: 2 }),
  },
  {
    method: 'GET',
    path: '/old',
    description: 'the old way',
    auth: 'none',
    deprecated: DEPRECATED,
    handler: async () => ({ v: 1 }),
  },
  defineRoute<{ params: { id: string } }>({
    method: 'GET',
    path: '/old/:id',
    description: 'an old lookup that finds nothing',
    auth: 'none',
    deprecated: DEPRECATED,
    handler: async (req) => {
      throw ApiError.notFound(`no ${req.params.id}`);
    },
  }),
  {
    method: 'POST',
    path: '/old/admin',
    description: 'an old operator action',
    auth: 'admin',
    deprecated: { since: new Date(SINCE), sunset: new Date(SUNSET), link: 'https://example.org/docs/old' },
    handler: async () => ({ done: true }),
  },
);

const start = apiServerStarter({
  routes,
  rateLimit: { rates: { write: { perSecond: 0.001, burst: 2 } } },
  security: { bindAddress: '127.0.0.1', adminToken: 'secret-token-for-tests' },
});

function expectDeprecated(headers: Record<string, unknown>, where: string, link = EXPECTED.link) {
  expect(headers.deprecation, where).toBe(EXPECTED.deprecation);
  expect(headers.sunset, where).toBe(EXPECTED.sunset);
  expect(headers.link, where).toBe(link);
}

describe('a deprecated route', () => {
  it('is flagged deprecated: true in the manifest, the discovery document and both OpenAPI documents', async () => {
    const { port } = await start();
    type Entry = { method: string; path: string; deprecated?: boolean };
    const manifest = (await rawHttp(port, { path: '/' })).json as { endpoints: Entry[] };
    const discovery = (await rawHttp(port, { path: '/api/v1' })).json as { endpoints: Entry[] };
    for (const [name, list] of [
      ['manifest', manifest.endpoints],
      ['discovery', discovery.endpoints],
    ] as const) {
      const flag = (method: string, path: string) =>
        list.find((e) => e.method === method && e.path === path)?.deprecated;
      expect(flag('GET', '/old'), name).toBe(true);
      expect(flag('GET', '/old/{id}'), name).toBe(true);
      expect(flag('POST', '/old/admin'), name).toBe(true);
      // Others carry no flag at all (not even false): the entries stay as they were.
      const fresh = list.find((e) => e.path === '/new');
      expect(fresh, name).toBeDefined();
      expect(Object.keys(fresh!), name).not.toContain('deprecated');
    }
    for (const path of ['/openapi.json', '/api/v1/openapi.json']) {
      const doc = (await rawHttp(port, { path })).json as {
        paths: Record<string, Record<string, { deprecated?: boolean }>>;
      };
      expect(doc.paths['/old']!.get!.deprecated, path).toBe(true);
      expect(doc.paths['/old/{id}']!.get!.deprecated, path).toBe(true);
      expect(doc.paths['/old/admin']!.post!.deprecated, path).toBe(true);
      expect(doc.paths['/new']!.get!.deprecated, path).toBeUndefined();
    }
  });

  it('answers with Deprecation, Sunset and Link in both forms, HEAD included', async () => {
    const { port } = await start();
    for (const path of ['/old', '/api/v1/old', '/api/old']) {
      const r = await rawHttp(port, { path });
      expect(r.status, path).toBe(200);
      expectDeprecated(r.headers, path);
      const head = await rawHttp(port, { method: 'HEAD', path });
      expect(head.status, path).toBe(200);
      expectDeprecated(head.headers, `HEAD ${path}`);
    }
    for (const path of ['/new', '/api/v1/new', '/', '/api/v1', '/nope']) {
      const r = await rawHttp(port, { path });
      for (const h of ['deprecation', 'sunset', 'link']) expect(r.headers[h], `${path} ${h}`).toBeUndefined();
    }
  });

  it("sends them on its errors too: the handler's 404, 401 and 403 before it runs, 429", async () => {
    const { port } = await start();
    for (const path of ['/old/x', '/api/v1/old/x']) {
      const r = await rawHttp(port, { path });
      expect(r.status, path).toBe(404);
      expectDeprecated(r.headers, path);
    }
    const link = '<https://example.org/docs/old>; rel="deprecation"';
    for (const path of ['/old/admin', '/api/v1/old/admin']) {
      const denied = await rawHttp(port, { method: 'POST', path, body: '{}' });
      expect(denied.status, path).toBe(401);
      expectDeprecated(denied.headers, path, link);
    }
    // The write bucket (burst 2) is spent by the two refusals above: the next answer is a 429.
    const limited = await rawHttp(port, {
      method: 'POST',
      path: '/api/v1/old/admin',
      body: '{}',
      headers: { authorization: 'Bearer secret-token-for-tests' },
    });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expectDeprecated(limited.headers, '429', link);
    // With no admin token configured, the operator route answers 403, still flagged.
    const { port: noAdmin } = await start({ security: { bindAddress: '127.0.0.1' } });
    const forbidden = await rawHttp(noAdmin, { method: 'POST', path: '/old/admin', body: '{}' });
    expect(forbidden.status).toBe(403);
    expectDeprecated(forbidden.headers, '403', link);
  });
});

describe('deprecation dates are checked when the table is built', () => {
  const route = (deprecated: RouteDeprecation): RouteDef => ({
    method: 'GET',
    path: '/old',
    description: 'the old way',
    auth: 'none',
    deprecated,
    handler: async () => ({}),
  });
  const server = (deprecated: RouteDeprecation) => () =>
    createApiServer({
      routes: [route(deprecated)],
      rateLimit: false,
      security: { bindAddress: '127.0.0.1' },
    });

  it('refuses a sunset less than 90 days after the deprecation date, at start-up', () => {
    const eightyNine = new Date(Date.parse(SINCE) + 89 * 86_400_000 + 86_399_000);
    expect(server({ since: SINCE, sunset: eightyNine, link: '/docs' })).toThrow(
      /route GET \/old: sunset .* less than 90 days after the deprecation date/,
    );
    expect(() => defineRoutes(route({ since: SINCE, sunset: SINCE, link: '/docs' }))).toThrow(/90 days/);
    // A sunset before the deprecation is no better.
    expect(server({ since: SUNSET, sunset: SINCE, link: '/docs' })).toThrow(/90 days/);
    // Exactly 90 days is allowed.
    const ninety = new Date(Date.parse(SINCE) + 90 * 86_400_000);
    const app = server({ since: SINCE, sunset: ninety, link: '/docs' })();
    void app.close();
    expect(deprecationHeaders({ since: SINCE, sunset: ninety, link: '/docs' }).sunset).toBe(
      'Wed, 15 Apr 2026 00:00:00 GMT',
    );
  });

  it('refuses dates that are not dates and links a header cannot carry', () => {
    expect(server({ since: 'soon', sunset: SUNSET, link: '/docs' })).toThrow(
      /deprecation date "soon" is not a date/,
    );
    expect(server({ since: SINCE, sunset: 'later', link: '/docs' })).toThrow(
      /sunset date "later" is not a date/,
    );
    for (const link of ['', 'docs', '/a b', '/a>', '//evil.example/x', 'javascript:alert(1)'])
      expect(server({ since: SINCE, sunset: SUNSET, link }), link).toThrow(/not a URL or an absolute path/);
  });
});
