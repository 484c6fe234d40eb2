import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../node-core/api/errors.ts';
import { defineRoutes } from '../../node-core/api/route-table.ts';
import { createApiServer } from '../../node-core/api/server.ts';
import { parseJson, stringifyJson } from '../../node-core/protocol/json.ts';

/** A route that checks its body the way domain routes will: wrong shapes are 400, never 5xx. */
const routes = defineRoutes(
  {
    method: 'POST',
    path: '/echo',
    description: 'echoes the body',
    auth: 'none',
    handler: async (req) => req.body,
  },
  {
    method: 'POST',
    path: '/transfer',
    description: 'checks a transfer-like body',
    auth: 'none',
    handler: async (req) => {
      const body = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw ApiError.badRequest('body must be an object');
      const { to, amount } = body as Record<string, unknown>;
      if (typeof to !== 'string') throw ApiError.badRequest('to: must be a string');
      if (typeof amount !== 'bigint' && !(typeof amount === 'number' && Number.isSafeInteger(amount))) {
        throw ApiError.badRequest('amount: must be an integer');
      }
      if (BigInt(amount) < 0n || BigInt(amount) >= 2n ** 64n)
        throw ApiError.badRequest('amount: out of range');
      return { to, amount: BigInt(amount) };
    },
  },
);

let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  app = createApiServer({ routes, rateLimit: false, security: { bindAddress: '127.0.0.1' } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app.close();
});

const enc = new TextEncoder();

const bodies: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.json().chain((j) => fc.nat(j.length).map((n) => enc.encode(j.slice(0, n)))),
  fc.jsonValue().map((v) => enc.encode(JSON.stringify(v))),
  fc
    .tuple(fc.string({ maxLength: 12 }), fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }))
    .map(([to, n]) => enc.encode(`{"to":${JSON.stringify(to)},"amount":${n}}`)),
  fc.stringMatching(/^-?[0-9]{1,400}(\.[0-9]{0,40})?([eE][+-]?[0-9]{1,6})?$/).map((s) => enc.encode(s)),
  fc.integer({ min: 1, max: 400 }).map((d) => enc.encode('['.repeat(d) + ']'.repeat(d))),
  fc.integer({ min: 1, max: 400 }).map((d) => enc.encode('{"a":'.repeat(d) + '0' + '}'.repeat(d))),
  fc
    .constantFrom('', ' ', 'null', 'true', '"\\ud800"', '{"__proto__":{"x":1}}', '\ufeff{}')
    .map((s) => enc.encode(s)),
);

describe('fuzzing request bodies', () => {
  it('2,000 random bodies: never a 5xx, always JSON, errors always carry an error string', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.constantFrom('/echo', '/transfer'),
        fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/octet-stream', 'x'),
        async (body, path, type) => {
          const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
          // A copy typed over a plain ArrayBuffer, as fetch's BodyInit wants.
          const res = await fetch(base + path, { method: 'POST', body: new Uint8Array(body), headers });
          const text = await res.text();
          expect(res.status).toBeLessThan(500);
          expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
          if (res.status >= 400) {
            const parsed = JSON.parse(text) as { error?: unknown };
            expect(typeof parsed.error).toBe('string');
          } else if (path === '/echo') {
            // Accepted: the echo is the body's lossless value, re-serialized.
            expect(text).toBe(stringifyJson(parseJson(new TextDecoder().decode(body))));
          } else {
            expect(() => parseJson(text)).not.toThrow();
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
