import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../node-core/api/openapi.ts';
import type { OpenApiParameter } from '../../node-core/api/openapi.ts';
import { defineRoutes } from '../../node-core/api/route-table.ts';

const ok = async (): Promise<unknown> => ({});

const routes = defineRoutes(
  {
    method: 'GET',
    path: '/accounts/:address/balance',
    description: 'balance of an account',
    auth: 'none',
    schema: {
      params: { type: 'object', properties: { address: { type: 'string', description: 'account address' } } },
      querystring: {
        type: 'object',
        required: ['asset'],
        properties: { asset: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
      },
      response: { 200: { type: 'object', properties: { balance: { type: 'string' } } } },
    },
    handler: ok,
  },
  {
    method: 'POST',
    path: '/blocks',
    description: 'submit a block',
    auth: 'none',
    schema: { body: { type: 'object' }, response: { 201: { type: 'object' } } },
    handler: ok,
  },
  { method: 'GET', path: '/statechain/kv/*', description: 'a state value', auth: 'none', handler: ok },
  { method: 'POST', path: '/admin/peers', description: 'add a peer', auth: 'admin', handler: ok },
);

describe('OpenAPI document', () => {
  const doc = buildOpenApi(routes, { title: 'ledger-node', version: '1.2.3' });

  it('is OpenAPI 3.1 with every route under its contract path and method', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toEqual({ title: 'ledger-node', version: '1.2.3' });
    expect(Object.keys(doc.paths)).toEqual([
      '/accounts/{address}/balance',
      '/blocks',
      '/statechain/kv/{key}',
      '/admin/peers',
    ]);
    expect(doc.paths['/blocks']?.post?.summary).toBe('submit a block');
    expect(doc.paths['/accounts/{address}/balance']?.get?.operationId).toBe('get_accounts_address_balance');
  });

  it('documents path and query parameters', () => {
    const params = doc.paths['/accounts/{address}/balance']?.get?.parameters ?? [];
    expect(params).toEqual<OpenApiParameter[]>([
      {
        name: 'address',
        in: 'path',
        required: true,
        description: 'account address',
        schema: { type: 'string', description: 'account address' },
      },
      { name: 'asset', in: 'query', required: true, schema: { type: 'string' } },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
    ]);
    const kv = doc.paths['/statechain/kv/{key}']?.get?.parameters ?? [];
    expect(kv.map((p) => [p.name, p.in, p.required])).toEqual([['key', 'path', true]]);
  });

  it('documents bodies, responses, errors and bearer auth for admin routes', () => {
    const post = doc.paths['/blocks']?.post;
    expect(post?.requestBody?.content['application/json'].schema).toEqual({ type: 'object' });
    expect(Object.keys(post?.responses ?? {})).toEqual(expect.arrayContaining(['201', '429', '4XX', '5XX']));
    expect(post?.security).toBeUndefined();
    const admin = doc.paths['/admin/peers']?.post;
    expect(admin?.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(admin?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '403']));
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Error).toMatchObject({ required: ['error'] });
  });
});
