import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runChildScript } from '../helpers/child-script.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * The node loads lmdb-js through its CommonJS build (store/lmdb-package.ts), never its ES build: that
 * took 63-87 ms against 39-50 ms of a start, and the two in one process would be two copies of the
 * library. Checked in a fresh Node process, whose module hooks see every file loaded.
 */
const CHILD = `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({
  load(url, context, next) {
    if (url.includes('/node_modules/lmdb/')) loaded.add(url.slice(url.indexOf('/node_modules/lmdb/') + 19));
    return next(url, context);
  },
});
const { startTestNode } = await import(process.argv[2]);
const t = await startTestNode({});
const health = await fetch(t.node.url + '/health');
await t.stop();
console.log(JSON.stringify({ loaded: [...loaded], status: health.status }));
`;

describe('lmdb-js in a node', () => {
  const dir = tempDir('ledger-lmdb-load-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is its CommonJS build only', async () => {
    const helpers = new URL('../helpers/node.ts', import.meta.url).href;
    const r = await runChildScript<{ loaded: string[]; status: number }>(dir, CHILD, [helpers]);
    expect(r.status).toBe(200);
    expect(r.loaded.filter((f) => f.endsWith('.js') || f.endsWith('.cjs'))).toEqual(['dist/index.cjs']);
  }, 90_000);
});
