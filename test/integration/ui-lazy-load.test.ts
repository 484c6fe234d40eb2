import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runChildScript } from '../helpers/child-script.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * The node does not load the GUI's file sender (@fastify/send, and with @fastify/static before it
 * glob, mime and http-errors) until a GUI file is asked for: 35-50 ms of CPU at start-up otherwise
 * (ui-send.ts). Nor does it load a WebSocket library (ws; @fastify/websocket and duplexify before)
 * until the first upgrade (ws-upgrade.ts): 16-24 ms. Checked in a fresh Node process, since the
 * test runner's own may have loaded them.
 */
const CHILD = `
import { createRequire } from 'node:module';
const { startTestNode } = await import(process.argv[2]);
const require = createRequire(import.meta.url);
const loaded = () =>
  ['@fastify/send', '@fastify/static', 'glob', 'mime', 'http-errors', 'ws', '@fastify/websocket', 'duplexify'].filter((name) =>
    Object.keys(require.cache).some((path) => path.includes('/node_modules/' + name + '/')),
  );
const t = await startTestNode({ uiDir: process.argv[3] });
const before = loaded();
const page = await fetch(t.node.url + '/ui/');
const body = await page.text();
const after = loaded();
await t.stop();
console.log(JSON.stringify({ before, after, status: page.status, body }));
`;

describe('the GUI file sender loads with the first file', () => {
  const dir = tempDir('ledger-ui-lazy-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is not loaded when the API starts, and serves once asked', async () => {
    const ui = join(dir, 'dist');
    mkdirSync(ui, { recursive: true });
    writeFileSync(join(ui, 'index.html'), '<!doctype html><title>lazy</title>\n');
    const helpers = new URL('../helpers/node.ts', import.meta.url).href;
    const r = await runChildScript<{ before: string[]; after: string[]; status: number; body: string }>(
      dir,
      CHILD,
      [helpers, ui],
    );
    expect(r.before).toEqual([]);
    expect(r.status).toBe(200);
    expect(r.body).toContain('<title>lazy</title>');
    expect(r.after).toContain('@fastify/send');
    expect(r.after.filter((name) => ['ws', '@fastify/websocket', 'duplexify'].includes(name))).toEqual([]);
  }, 90_000);
});
