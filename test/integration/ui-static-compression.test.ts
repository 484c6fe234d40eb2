import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precompressDir } from '../../scripts/precompress.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/**
 * The GUI's files go compressed: a real node serving a build precompressed by the build step
 * (scripts/precompress.ts), asked over node:http so Accept-Encoding and the raw bytes are the test's.
 */
const APP_JS = `${Array.from({ length: 400 }, (_, i) => `export const value${i} = "ledger ${i}";`).join('\n')}\n`;
const INDEX_HTML = `<!doctype html><html><head><title>x</title>${'<meta name="x" content="padding">'.repeat(40)}</head><body><div id="root"></div></body></html>\n`;
const PNG = Buffer.alloc(4096, 7);

function fetchRaw(
  port: number,
  path: string,
  acceptEncoding?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { connection: 'close' };
    if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
    get({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    }).on('error', reject);
  });
}

describe('compressed GUI files', () => {
  let t: TestNode;
  let dir: string;
  let port: number;

  beforeAll(async () => {
    dir = tempDir('ledger-ui-gz-');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'index.html'), INDEX_HTML);
    writeFileSync(join(dir, 'assets', 'app-1a2b.js'), APP_JS);
    writeFileSync(join(dir, 'assets', 'tiny-3c4d.js'), 'export {};\n');
    writeFileSync(join(dir, 'icon.png'), PNG);
    const done = precompressDir(dir);
    expect(done.files).toBe(2); // index.html and app-1a2b.js: tiny files and PNGs stay as they are
    t = await startTestNode({ uiDir: dir });
    port = Number(new URL(t.node.url).port);
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the build step writes .br and .gz copies only where they pay', () => {
    expect(statSync(join(dir, 'assets', 'app-1a2b.js.br')).size).toBeLessThan(APP_JS.length / 4);
    expect(statSync(join(dir, 'assets', 'app-1a2b.js.gz')).size).toBeLessThan(APP_JS.length / 4);
    expect(() => statSync(join(dir, 'assets', 'tiny-3c4d.js.br'))).toThrow();
    expect(() => statSync(join(dir, 'icon.png.gz'))).toThrow();
  });

  it('sends Brotli to a browser that takes it, with the type, cache rules and Vary of the plain file', async () => {
    const r = await fetchRaw(port, '/ui/assets/app-1a2b.js', 'gzip, deflate, br, zstd');
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers.vary).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(r.body).toString()).toBe(APP_JS);
  });

  it('sends gzip when Brotli is not accepted, and honours q=0', async () => {
    const gz = await fetchRaw(port, '/ui/assets/app-1a2b.js', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(APP_JS);
    const noBr = await fetchRaw(port, '/ui/assets/app-1a2b.js', 'br;q=0, gzip;q=0.5');
    expect(noBr.headers['content-encoding']).toBe('gzip');
  });

  it('sends the plain file to a client that accepts no compression, still with Vary', async () => {
    for (const accept of [undefined, 'identity']) {
      const r = await fetchRaw(port, '/ui/assets/app-1a2b.js', accept);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.headers.vary).toMatch(/accept-encoding/i);
      expect(r.body.toString()).toBe(APP_JS);
    }
  });

  it('compresses index.html, also as an app route, keeping its CSP and no-cache', async () => {
    for (const path of ['/ui/', '/ui/wallet/send']) {
      const r = await fetchRaw(port, path, 'br');
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe('br');
      expect(r.headers['content-type']).toMatch(/^text\/html/);
      expect(r.headers['content-security-policy']).toMatch(/default-src 'self'/);
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(brotliDecompressSync(r.body).toString()).toBe(INDEX_HTML);
    }
  });

  it('leaves files without a compressed copy as they are', async () => {
    const png = await fetchRaw(port, '/ui/icon.png', 'br, gzip');
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.body.equals(PNG)).toBe(true);
    const tiny = await fetchRaw(port, '/ui/assets/tiny-3c4d.js', 'br, gzip');
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect(tiny.body.toString()).toBe('export {};\n');
  });
});
