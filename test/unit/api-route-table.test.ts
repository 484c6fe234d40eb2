import { describe, expect, it } from 'vitest';
import {
  buildManifest,
  createMethodIndex,
  defineRoute,
  defineRoutes,
  pathParamNames,
  rateClassOf,
  toContractPath,
} from '../../node-core/api/route-table.ts';
import type { RouteDef } from '../../node-core/api/route-table.ts';

const ok = async (): Promise<unknown> => ({});

function route(method: 'GET' | 'POST', path: string, description = `${method} ${path}`): RouteDef {
  return { method, path, description, auth: 'none', handler: ok };
}

describe('route table', () => {
  it('converts fastify paths to contract paths', () => {
    expect(toContractPath('/accounts/:address/balance')).toBe('/accounts/{address}/balance');
    expect(toContractPath('/statechain/kv/*')).toBe('/statechain/kv/{key}');
    expect(toContractPath('/files/*', 'path')).toBe('/files/{path}');
    expect(toContractPath('/blocks/:hash(^[0-9a-f]{64}$)/raw')).toBe('/blocks/{hash}/raw');
    expect(toContractPath('/range/:from-:to')).toBe('/range/{from}-{to}');
    expect(toContractPath('/time::now')).toBe('/time:now');
    expect(toContractPath('/')).toBe('/');
  });

  it('lists path parameter names as fastify names them', () => {
    expect(pathParamNames('/a/:x/b/:y')).toEqual(['x', 'y']);
    expect(pathParamNames('/statechain/kv/*')).toEqual(['*']);
    expect(pathParamNames('/health')).toEqual([]);
  });

  it('builds the manifest in table order', () => {
    const routes = defineRoutes(
      route('GET', '/health', 'liveness'),
      [route('POST', '/blocks', 'submit a block'), route('GET', '/accounts/:address', 'an account')],
      route('GET', '/statechain/kv/*', 'a state value'),
    );
    expect(buildManifest(routes)).toEqual([
      { method: 'GET', path: '/health', description: 'liveness' },
      { method: 'POST', path: '/blocks', description: 'submit a block' },
      { method: 'GET', path: '/accounts/{address}', description: 'an account' },
      { method: 'GET', path: '/statechain/kv/{key}', description: 'a state value' },
    ]);
  });

  it('refuses duplicate routes, even with other parameter names', () => {
    expect(() => defineRoutes(route('GET', '/a/:x'), route('GET', '/a/:y'))).toThrow(/defined twice/);
    expect(() => defineRoutes(route('GET', '/a'), route('POST', '/a'))).not.toThrow();
  });

  it('refuses multi-line or empty descriptions and bad paths', () => {
    expect(() => defineRoutes(route('GET', '/a', 'two\nlines'))).toThrow(/description/);
    expect(() => defineRoutes(route('GET', '/a', ' '))).toThrow(/description/);
    expect(() => defineRoutes(route('GET', 'a'))).toThrow(/bad path/);
    expect(() => defineRoutes(route('GET', '/a?b=1'))).toThrow(/bad path/);
  });

  it('defaults rate classes: POST write, /health and /ready probe, else read', () => {
    expect(rateClassOf('POST', '/blocks')).toBe('write');
    expect(rateClassOf('GET', '/health')).toBe('probe');
    expect(rateClassOf('GET', '/ready')).toBe('probe');
    expect(rateClassOf('GET', '/accounts/x')).toBe('read');
    expect(rateClassOf('GET', '/x', 'write')).toBe('write');
  });

  it('finds the methods a concrete path accepts (for 405)', () => {
    const methodsAt = createMethodIndex([
      route('GET', '/accounts/:address'),
      route('POST', '/accounts/:address'),
      route('GET', '/statechain/kv/*'),
      route('POST', '/a.b'),
    ]);
    expect(methodsAt('/accounts/xe_1')).toEqual(['GET', 'POST']);
    expect(methodsAt('/accounts/xe_1/more')).toEqual([]);
    expect(methodsAt('/statechain/kv/a/b/c')).toEqual(['GET']);
    expect(methodsAt('/a.b')).toEqual(['POST']);
    expect(methodsAt('/aXb')).toEqual([]);
  });

  it('types handlers through defineRoute', async () => {
    const r = defineRoute<{ params: { address: string } }>({
      method: 'GET',
      path: '/accounts/:address',
      description: 'an account',
      auth: 'none',
      handler: async (req) => ({ address: req.params.address.toUpperCase() }),
    });
    expect(defineRoutes(r)).toHaveLength(1);
  });
});
