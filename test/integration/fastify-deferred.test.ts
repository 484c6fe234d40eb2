import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runChildScript } from '../helpers/child-script.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * fastify is required with node:https, node:http2 and semver deferred (cjs-packages.ts): a node's
 * start loads none of them, and what they serve in fastify still works once asked for (an HTTP/2
 * server; a plugin's declared fastify version, accepted or refused). Checked in a fresh Node
 * process, since the test runner's own has loaded them.
 */
const CHILD = `
import { createRequire } from 'node:module';
const [helpers, packages] = process.argv.slice(2);
const loadedNow = () => [
  ...['https', 'http2', 'tls'].filter((m) => process.moduleLoadList.includes('NativeModule ' + m)),
  ...(Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes('/node_modules/semver/'))
    ? ['semver']
    : []),
];
const { startTestNode } = await import(helpers);
const t = await startTestNode();
// Before fetch, which loads undici (and it node:http2 and node:tls).
const atStart = loadedNow();
const health = (await fetch(t.node.url + '/health')).status;
await t.stop();

const { fastifyPackage } = await import(packages);
const http2 = await import('node:http2');
const declared = (version) =>
  Object.assign(async () => undefined, { [Symbol.for('plugin-meta')]: { name: 'p-' + version, fastify: version } });
const app = fastifyPackage({ http2: true });
app.register(declared('5.x'));
app.get('/', async () => ({ over: 'h2' }));
await app.listen({ host: '127.0.0.1', port: 0 });
const client = http2.connect('http://127.0.0.1:' + app.server.address().port);
const body = await new Promise((resolve, reject) => {
  const req = client.request({ ':path': '/' });
  let text = '';
  req.setEncoding('utf8').on('data', (c) => (text += c)).on('end', () => resolve(text)).on('error', reject);
});
client.close();
await app.close();
let refused = '';
try {
  const old = fastifyPackage();
  old.register(declared('4.x'));
  await old.ready();
} catch (e) {
  refused = e.code;
}
console.log(JSON.stringify({ health, atStart, body, refused }));
`;

describe('fastify with its rarely used requires deferred', () => {
  const dir = tempDir('fastify-deferred-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads no https, http2 or semver at start, and serves HTTP/2 and plugin versions when asked', async () => {
    const helpers = new URL('../helpers/node.ts', import.meta.url).href;
    const packages = new URL('../../node-core/cjs-packages.ts', import.meta.url).href;
    const r = await runChildScript<Record<string, unknown>>(dir, CHILD, [helpers, packages]);
    expect(r).toEqual({
      health: 200,
      atStart: [],
      body: '{"over":"h2"}',
      refused: 'FST_ERR_PLUGIN_VERSION_MISMATCH',
    });
  }, 90_000);
});
