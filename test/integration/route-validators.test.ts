import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { collectValidatorSources, GENERATED_PATH, renderValidators } from '../../scripts/gen-validators.ts';
import { expectCurrent } from '../helpers/generated-file.ts';
import { startTestNode } from '../helpers/node.ts';

/**
 * The route validators a node uses are generated ahead of time (api/validators.generated.ts, Ajv's
 * standalone code): a node validates with them without ever loading Ajv, and the committed file is
 * exactly what a fresh node's route schemas generate, so no schema change goes out without them.
 */
const cjs = createRequire(import.meta.url);
/** Ajv's compiler modules in this process's CommonJS cache (fastify's copy or ajv-formats' own). */
const ajvModules = () =>
  Object.keys(cjs.cache).filter((k) => /[\\/]ajv[\\/]dist[\\/](core|ajv)\.js$/.test(k));

describe('generated route validators', () => {
  it('validate, coerce and refuse requests as before, and Ajv is never loaded', async () => {
    // Runs first in its own process (vitest isolates test files): nothing has loaded Ajv yet.
    expect(ajvModules()).toEqual([]);
    const t = await startTestNode();
    try {
      const get = async (path: string) => {
        const r = await fetch(`${t.node.url}${path}`);
        return { status: r.status, body: (await r.json()) as unknown };
      };
      expect(await get('/accounts?limit=abc')).toEqual({
        status: 400,
        body: expect.objectContaining({ error: "invalid query parameter 'limit': must be digits only" }),
      });
      expect(await get('/accounts?limit=0')).toEqual({
        status: 400,
        body: expect.objectContaining({ error: "invalid query parameter 'limit': must be >= 1" }),
      });
      expect((await get('/accounts/zz/chain')).status).toBe(400);
      const page = await get('/accounts?limit=1');
      expect(page.status).toBe(200);
      expect(page.body).toHaveLength(1); // "1" coerced to the integer the handler pages by
      // Past the time the lazy compilers would have warmed up (1 s after listening).
      await new Promise((r) => setTimeout(r, 1_500));
      expect(ajvModules()).toEqual([]);
    } finally {
      await t.stop();
    }
  });

  it('the committed validators.generated.ts is what the route schemas generate (else: npm run gen:validators)', async () => {
    expectCurrent(
      GENERATED_PATH,
      renderValidators(await collectValidatorSources()),
      'npm run gen:validators',
    );
  });
});
