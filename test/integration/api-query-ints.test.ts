import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { Account, http, type Kit, kitOf, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Integer query parameters (issue #15 item 8) take exactly digits: every form fastify's type
 * coercion used to turn into a number ("1.0", "1e3", "-0", "0x10", " 1") is a 400 naming the
 * parameter, on every route that has one (found in the OpenAPI document, so a new one is covered).
 */
const BAD_FORMS = ['1.0', '1e3', '-0', '0x10', '%201', '1%20', '+1', '-1', '', 'abc', '1_0', '%EF%BC%91'];

type Param = { name: string; in: string; schema: Record<string, JsonValue> };
type Operation = { parameters?: Param[] };

describe('HTTP API: integer query parameters are digits only', () => {
  let t: TestNode;
  let kit: Kit;
  let a: Account;
  /** [route template, parameter] for every integer query parameter of a GET route. */
  const intParams: [string, string][] = [];

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    a = new Account(kit);
    await a.claim(XE);
    await a.send(new Account(kit).address, 1n, 'XE');
    await new Account(kit).claim(XE);
    const doc = (await http(kit.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, { get?: Operation }>;
    };
    for (const [path, item] of Object.entries(doc.paths))
      for (const p of item.get?.parameters ?? [])
        if (p.in === 'query' && p.schema.pattern === '^[0-9]+$') intParams.push([path, p.name]);
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** The template with its path parameters filled in (the account when it names one). */
  const fill = (template: string) =>
    template.replace(/\{([^}]+)\}/g, (_, name: string) => (name === 'address' ? a.address : 'ab'.repeat(32)));

  it('the OpenAPI document describes them as digit strings, and no query parameter as a bare integer', async () => {
    const doc = (await http(kit.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, Operation>>;
    };
    const integers = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.values(item).flatMap((op) =>
        (op.parameters ?? [])
          .filter((p) => p.in === 'query' && (p.schema.type === 'integer' || p.schema.type === 'number'))
          .map((p) => `${path}?${p.name}`),
      ),
    );
    expect(integers).toEqual([]);
    const names = intParams.map(([path, name]) => `${path}?${name}`);
    for (const expected of [
      '/accounts?offset',
      '/accounts?limit',
      '/accounts/{address}/chain?offset',
      '/blocks/recent?limit',
      '/blocks/recent?since',
      '/statechain/blocks?start',
      '/statechain/blocks?limit',
      '/statechain/kv?offset',
      '/leases?limit',
      '/pending?offset',
    ])
      expect(names).toContain(expected);
    const accounts = doc.paths['/accounts']!.get!.parameters!;
    expect(accounts.find((p) => p.name === 'offset')).toEqual({
      name: 'offset',
      in: 'query',
      required: false,
      description: 'entries to skip',
      schema: { type: 'string', pattern: '^[0-9]+$', default: '0', description: 'entries to skip' },
    });
  });

  it('every bad form of every integer query parameter is a 400 naming it, in both API forms', async () => {
    expect(intParams.length).toBeGreaterThanOrEqual(20);
    const wrong: string[] = [];
    for (const [template, name] of intParams) {
      for (const bad of BAD_FORMS) {
        for (const prefix of ['', '/api/v1']) {
          const path = `${prefix}${fill(template)}?${name}=${bad}`;
          // The admin token too: an operator route checks its query as any other (once let in).
          const r = await http(kit.url, 'GET', path, undefined, {
            authorization: `Bearer ${t.node.adminToken}`,
          });
          const body = r.body as Record<string, JsonValue> | undefined;
          const message = prefix === '' ? body?.error : (body?.error as Record<string, JsonValue>)?.message;
          if (r.status !== 400 || typeof message !== 'string' || !message.includes(`'${name}'`))
            wrong.push(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect((await http(kit.url, 'GET', '/accounts?offset=1.0')).body).toEqual({
      error: "invalid query parameter 'offset': must be digits only",
    });
  });

  it('out-of-range values are a 400 naming the parameter; limits over 1000 are still clamped', async () => {
    const error = async (path: string) => {
      const r = await http(kit.url, 'GET', path);
      expect(r.status, path).toBe(400);
      return (r.body as { error: string }).error;
    };
    expect(await error('/accounts?limit=0')).toBe("invalid query parameter 'limit': must be >= 1");
    expect(await error('/accounts?limit=00')).toBe("invalid query parameter 'limit': must be >= 1");
    expect(await error('/accounts?offset=9007199254740992')).toBe(
      "invalid query parameter 'offset': must be <= 9007199254740991",
    );
    expect(await error('/statechain/blocks?start=18446744073709551616')).toBe(
      "invalid query parameter 'start': must be <= 18446744073709551615",
    );
    expect(await error('/blocks/recent?since=9223372036854775808')).toBe(
      "invalid query parameter 'since': must be <= 9223372036854775807",
    );
    const all = (await http(kit.url, 'GET', '/accounts?limit=1000')).body as unknown[];
    expect(all.length).toBeGreaterThan(2);
    for (const big of ['1001', '5000', '18446744073709551616', '9'.repeat(60)])
      expect((await http(kit.url, 'GET', `/accounts?limit=${big}`)).body, big).toEqual(all);
  });

  it('good forms mean what they always meant', async () => {
    const all = (await http(kit.url, 'GET', '/accounts')).body as { address: string }[];
    expect(all.length).toBeGreaterThan(2);
    expect((await http(kit.url, 'GET', '/accounts?offset=1&limit=1')).body).toEqual([all[1]]);
    expect((await http(kit.url, 'GET', '/accounts?offset=01&limit=001')).body).toEqual([all[1]]);
    expect((await http(kit.url, 'GET', '/accounts?offset=9007199254740991')).body).toEqual([]);
    expect((await http(kit.url, 'GET', `/accounts?offset=${all.length}`)).body).toEqual([]);

    const chain = await http(kit.url, 'GET', `/accounts/${a.address}/chain?offset=1&limit=1`);
    expect(chain.status).toBe(200);
    expect((chain.body as { type: string }[]).map((b) => b.type)).toEqual(['send']);
    expect(chain.headers.get('x-total-count')).toBe('2');

    const recent = (await http(kit.url, 'GET', '/blocks/recent?limit=2')).body as { timestamp: bigint }[];
    expect(recent).toHaveLength(2);
    const since = BigInt(recent[1]!.timestamp);
    expect(
      ((await http(kit.url, 'GET', `/blocks/recent?since=${since}`)).body as unknown[]).length,
    ).toBeGreaterThanOrEqual(1);
    expect((await http(kit.url, 'GET', '/blocks/recent?since=9223372036854775807')).body).toEqual([]);
    expect(((await http(kit.url, 'GET', '/blocks/recent?since=0')).body as unknown[]).length).toBeGreaterThan(
      2,
    );

    const blocks = (await http(kit.url, 'GET', '/statechain/blocks')).body as { index: number }[];
    expect(blocks.length).toBeGreaterThanOrEqual(1);
    expect(blocks[0]!.index).toBe(0);
    expect((await http(kit.url, 'GET', '/statechain/blocks?start=0&limit=1')).body).toEqual([blocks[0]]);
    expect((await http(kit.url, 'GET', '/statechain/blocks?start=18446744073709551615')).body).toEqual([]);
    expect((await http(kit.url, 'GET', '/leases?offset=0&limit=10')).status).toBe(200);
  });
});
