import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazyCompilers, type PrecompiledValidator } from '../../node-core/api/lazy-compilers.ts';

/**
 * Route validators compiled on first use (api/lazy-compilers.ts): nothing is compiled before the
 * server is ready, and every request is validated, coerced and refused exactly as by fastify's own
 * compiler on the same routes.
 */
const query = {
  type: 'object',
  properties: { n: { type: 'integer', minimum: 1 }, tag: { type: 'string', maxLength: 3 } },
  additionalProperties: false,
} as const;
const params = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;

function server(compilers?: ReturnType<typeof lazyCompilers>) {
  const app = Fastify(
    compilers ? { schemaController: { compilersFactory: compilers.compilersFactory } } : {},
  );
  app.get('/q', { schema: { querystring: query } }, async (req) => ({ query: req.query }));
  app.get('/p/:id', { schema: { params } }, async (req) => ({ params: req.params }));
  app.get('/none', async () => ({ ok: true }));
  return app;
}

const urls = ['/q?n=5', '/q?n=abc', '/q?n=0', '/q?tag=abcd', '/q?n=2&x=1', '/q', '/p/7', '/p/x', '/none'];

/** Every url answered alike (status and body) by both servers. */
async function expectSameAnswers(
  lazy: ReturnType<typeof server>,
  eager: ReturnType<typeof server>,
): Promise<void> {
  for (const url of urls) {
    const [a, b] = [await lazy.inject(url), await eager.inject(url)];
    expect({ url, status: a.statusCode, body: a.body }).toEqual({ url, status: b.statusCode, body: b.body });
  }
}

describe('lazy route validators', () => {
  it('compile nothing before the first request, then only the route asked for', async () => {
    const compilers = lazyCompilers();
    const app = server(compilers);
    await app.ready();
    expect(compilers.total).toBe(4); // GET and HEAD of each route with a schema
    expect(compilers.compiled).toBe(0);
    expect((await app.inject('/none')).statusCode).toBe(200);
    expect(compilers.compiled).toBe(0);
    const r = await app.inject('/q?n=5');
    expect(r.json()).toEqual({ query: { n: 5 } }); // coerced to an integer, as fastify does
    expect(compilers.compiled).toBe(1);
    expect(compilers.warm(1)).toBe(2); // a slice at a time: how many remain
    expect(compilers.warm()).toBe(0);
    expect(compilers.compiled).toBe(4);
    await app.close();
  });

  it('warm a step at a time: the compiler’s package, its build’s, the compiler, then one validator a step', async () => {
    const compilers = lazyCompilers();
    const app = server(compilers);
    await app.ready();
    expect(compilers.warm(1)).toBe(4); // the package loaded
    expect(compilers.warm(1)).toBe(4); // what its build requires loaded (ajv-formats)
    expect(compilers.warm(1)).toBe(4); // the compiler built
    expect(compilers.compiled).toBe(0);
    expect(compilers.warm(1)).toBe(3); // the first validator
    expect(compilers.warm(2)).toBe(1);
    expect(compilers.warm()).toBe(0);
    expect(compilers.compiled).toBe(4);
    expect((await app.inject('/q?n=5')).json()).toEqual({ query: { n: 5 } });
    await app.close();
  });

  it('answer every request as fastify’s own compiler does (status and body)', async () => {
    const lazy = server(lazyCompilers());
    const eager = server();
    await expectSameAnswers(lazy, eager);
    expect((await lazy.inject('/q?n=abc')).statusCode).toBe(400);
    await Promise.all([lazy.close(), eager.close()]);
  });

  it('after warm(), still answer as before', async () => {
    const compilers = lazyCompilers();
    const lazy = server(compilers);
    const eager = server();
    await lazy.ready();
    compilers.warm();
    await expectSameAnswers(lazy, eager);
    await Promise.all([lazy.close(), eager.close()]);
  });

  it('generated ahead (standalone source), answer as before with nothing compiled; a changed schema is compiled', async () => {
    const sources = new Map<string, string>();
    const generating = lazyCompilers({ onSource: (key, source) => sources.set(key, source) });
    const gen = server(generating);
    await gen.ready();
    generating.warm();
    expect([...sources.keys()].map((k) => k.split(' ').slice(0, 3).join(' ')).sort()).toEqual([
      'GET /p/:id params',
      'GET /q querystring',
      'HEAD /p/:id params',
      'HEAD /q querystring',
    ]);
    // As the generated module holds them: each source as a function of `require` and `module`.
    const precompiled: Record<string, PrecompiledValidator> = {};
    for (const [key, source] of sources)
      precompiled[key] = new Function('require', 'module', source) as PrecompiledValidator;
    const compilers = lazyCompilers({ precompiled });
    const pre = server(compilers);
    const eager = server();
    await expectSameAnswers(pre, eager);
    expect(compilers.total).toBe(0); // none left to compile
    expect(compilers.warm()).toBe(0);

    // The same routes with the query schema changed: its stale validator is not used.
    const changed = lazyCompilers({ precompiled });
    const app = Fastify({ schemaController: { compilersFactory: changed.compilersFactory } });
    const looser = { ...query, properties: { ...query.properties, tag: { type: 'string', maxLength: 5 } } };
    app.get('/q', { schema: { querystring: looser } }, async (req) => ({ query: req.query }));
    app.get('/p/:id', { schema: { params } }, async (req) => ({ params: req.params }));
    await app.ready();
    expect(changed.total).toBe(2); // GET and HEAD /q, compiled by Ajv; /p/:id generated
    expect((await app.inject('/q?tag=abcd')).statusCode).toBe(200);
    expect((await app.inject('/p/x')).statusCode).toBe(400);
    await Promise.all([gen.close(), pre.close(), eager.close(), app.close()]);
  });
});
