import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_ROUTE_KEYS, ROUTES } from '../../node-core/client/api-routes.generated.ts';
import { schemaToType } from '../../node-core/client/codegen.ts';
import { fetchOpenApi, GENERATED_PATH, renderClientRoutes } from '../../scripts/gen-client-routes.ts';
import { expectCurrent } from '../helpers/generated-file.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * The client's route types are generated from the OpenAPI documents that the node builds from its
 * route table; this test regenerates them from a real node and fails when they differ from the
 * committed file, so a route's schema and the client's type cannot drift apart.
 */
let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t?.stop();
});

describe('client route types and the route table', () => {
  it('the committed api-routes.generated.ts is what the route table generates (else: npm run gen:client-routes)', async () => {
    expectCurrent(
      GENERATED_PATH,
      await renderClientRoutes(await fetchOpenApi(t.node.url)),
      'npm run gen:client-routes',
    );
  });

  it('lists every route of the manifest, in both forms, with its auth', async () => {
    type Entry = { method: string; path: string };
    const manifest = (await (await fetch(`${t.node.url}/`)).json()) as Entry[] | { endpoints: Entry[] };
    const entries: Entry[] = Array.isArray(manifest) ? manifest : manifest.endpoints;
    expect(entries.length).toBeGreaterThan(50);
    // The manifest lists the table's routes; the OpenAPI document adds the two documents themselves.
    const tableRoutes = ROUTES.map((r) => `${r.method} ${r.path}`).filter(
      (k) => k !== 'GET /' && k !== 'GET /openapi.json',
    );
    // OpenAPI groups methods by path, so the order differs from the table's.
    expect(tableRoutes.sort()).toEqual(entries.map((e) => `${e.method} ${e.path}`).sort());
    expect([...PROXY_ROUTE_KEYS].sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(ROUTES.find((r) => r.path === '/lease/request')?.admin).toBe(true);
    expect(ROUTES.find((r) => r.path === '/node')?.admin).toBe(false);
    expect(ROUTES.find((r) => r.path === '/blocks/send')?.idempotent).toBe(true);
  });

  it('turns JSON Schema into the types the lossless parser produces', () => {
    expect(schemaToType({ type: 'integer' })).toBe('number | bigint');
    expect(schemaToType({ type: ['string', 'null'] })).toBe('string | null');
    expect(schemaToType({ enum: ['a', 'b'] })).toBe('"a" | "b"');
    expect(
      schemaToType({
        type: 'object',
        required: ['a'],
        properties: { a: { type: 'string' }, 'b-c': { type: 'array', items: { type: 'boolean' } } },
        additionalProperties: false,
      }),
    ).toBe('{ a: string; "b-c"?: Array<boolean> }');
    expect(schemaToType({ $ref: '#/components/schemas/E' }, { E: { type: 'string' } })).toBe('string');
    expect(schemaToType({})).toBe('JsonValue');
  });
});
