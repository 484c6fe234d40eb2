import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoutes } from '../../node-core/api/route-table.ts';
import { createApiServer } from '../../node-core/api/server.ts';
import {
  isAppRoute,
  registerUi,
  UI_CONTENT_SECURITY_POLICY,
  UI_NOT_BUILT_MESSAGE,
  uiRelativePath,
} from '../../node-core/api/ui-static.ts';
import { parseArgs } from '../../node-core/cli/args.ts';
import { DEFAULT_UI_DIR, LedgerNode } from '../../node-core/node.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/** The built GUI served by the node at /ui/, with a fake renderer/dist in a temp folder. */

const INDEX_HTML =
  '<!doctype html><html><head><script type="module" src="/ui/assets/app-1a2b3c.js"></script></head><body><div id="root"></div></body></html>\n';
const APP_JS = 'console.log("app");\n';

function fakeBuild(dir: string): void {
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), INDEX_HTML);
  writeFileSync(join(dir, 'assets', 'app-1a2b3c.js'), APP_JS);
  writeFileSync(join(dir, 'assets', 'kernel-9f8e7d.wasm'), Buffer.from([0, 97, 115, 109, 1, 0, 0, 0]));
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dir, '.env'), 'SECRET=1');
}

const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

describe('the GUI at /ui/ when built', () => {
  let t: TestNode;
  let uiDir: string;
  const get = (path: string, init?: RequestInit) =>
    fetch(`${t.node.url}${path}`, { redirect: 'manual', ...init });

  beforeAll(async () => {
    uiDir = tempDir('ledger-ui-');
    fakeBuild(uiDir);
    t = await startTestNode({ uiDir });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(uiDir, { recursive: true, force: true });
  });

  it('uses exactly the documented Content-Security-Policy', () => {
    expect(UI_CONTENT_SECURITY_POLICY).toBe(CSP);
  });

  it('serves index.html at /ui/ with the CSP and no-cache', async () => {
    const r = await get('/ui/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('content-security-policy')).toBe(CSP);
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('etag')).toBeTruthy();
    expect(await r.text()).toBe(INDEX_HTML);
    expect(t.node.uiUrl).toBe(`${t.node.url}/ui/`);
  });

  it('redirects /ui to /ui/, keeping the query', async () => {
    const r = await get('/ui?tab=send');
    expect(r.status).toBe(301);
    expect(r.headers.get('location')).toBe('/ui/?tab=send');
  });

  it('answers app routes with index.html (SPA fallback), HTML headers included', async () => {
    for (const path of ['/ui/wallet', '/ui/accounts/xe_abc/chain', '/ui/settings/', '/ui/wallet?x=1']) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-security-policy'), path).toBe(CSP);
      expect(r.headers.get('cache-control'), path).toBe('no-cache');
      expect(await r.text(), path).toBe(INDEX_HTML);
    }
  });

  it('serves hashed assets for a year, immutable, with their content types', async () => {
    const js = await get('/ui/assets/app-1a2b3c.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('content-security-policy')).toBeNull();
    expect(await js.text()).toBe(APP_JS);
    const wasm = await get('/ui/assets/kernel-9f8e7d.wasm');
    expect(wasm.headers.get('content-type')).toBe('application/wasm');
  });

  it('revalidates unhashed files and answers conditional requests with 304', async () => {
    const r = await get('/ui/favicon.svg');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-cache');
    // fetch() would add Cache-Control: no-cache to a conditional request, which forces a 200.
    const again = await t.node.api.inject({
      url: '/ui/favicon.svg',
      headers: { host: '127.0.0.1', 'if-none-match': r.headers.get('etag')! },
    });
    expect(again.statusCode).toBe(304);
  });

  it('answers HEAD with the headers alone, a byte range with 206, a range past the end with the JSON 400', async () => {
    const head = await get('/ui/assets/app-1a2b3c.js', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(APP_JS.length));
    expect(head.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await head.text()).toBe('');
    const part = await get('/ui/assets/app-1a2b3c.js', { headers: { range: 'bytes=0-6' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-6/${APP_JS.length}`);
    expect(await part.text()).toBe(APP_JS.slice(0, 7));
    const past = await get('/ui/assets/app-1a2b3c.js', { headers: { range: 'bytes=5000-' } });
    // Unsatisfiable (416 to @fastify/send): the server's documented error shape, like any bad request.
    expect(past.status).toBe(400);
    expect(past.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await past.json()).toEqual({ error: 'bad request' });
  });

  it('answers a missing file (an extension, or under assets/) with the JSON 404, not HTML', async () => {
    for (const path of ['/ui/assets/missing-123.js', '/ui/assets/sub/page', '/ui/logo.png', '/ui/assets']) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(await r.json(), path).toEqual({ error: 'not found' });
    }
  });

  it('never serves dotfiles or anything outside the folder', async () => {
    for (const path of [
      '/ui/.env',
      '/ui/%2e%2e/package.json',
      '/ui/..%2fpackage.json',
      '/ui/a%5c..%5c.env',
      '/ui/%E0%A4%A',
    ]) {
      const r = await get(path);
      // A bad %-escape is refused by the router itself (400 malformed URL).
      expect([400, 404], path).toContain(r.status);
      expect(await r.text(), path).not.toContain('SECRET');
    }
    // Raw paths, as a client that does not normalize URLs would send them.
    for (const url of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/assets/../.env', '/ui/.env']) {
      const r = await t.node.api.inject({ url, headers: { host: '127.0.0.1' } });
      expect(r.statusCode, url).toBe(404);
      expect(r.body, url).not.toContain('SECRET');
      expect(r.body, url).not.toContain('ledger-node-desktop');
    }
  });

  it('keeps /ui out of the manifest and the OpenAPI document', async () => {
    const manifest = (await (await get('/')).json()) as { endpoints: { path: string }[] };
    expect(manifest.endpoints.length).toBeGreaterThan(10);
    expect(manifest.endpoints.filter((e) => e.path.startsWith('/ui'))).toEqual([]);
    const openapi = (await (await get('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).filter((p) => p.startsWith('/ui'))).toEqual([]);
  });

  it('refuses other methods like any unknown route', async () => {
    const r = await get('/ui/', { method: 'POST', body: '{}' });
    expect(r.status).toBe(404);
  });
});

describe('the GUI at /ui/ before it is built', () => {
  let t: TestNode;
  let uiDir: string;

  beforeAll(async () => {
    uiDir = tempDir('ledger-ui-empty-');
    t = await startTestNode({ uiDir: join(uiDir, 'dist') });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(uiDir, { recursive: true, force: true });
  });

  it('answers 404 with a JSON error saying how to build it, for /ui/ and app routes', async () => {
    for (const path of ['/ui/', '/ui/wallet']) {
      const r = await fetch(`${t.node.url}${path}`);
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await r.json()) as { error: string };
      expect(body).toEqual({ error: UI_NOT_BUILT_MESSAGE });
      expect(body.error).toContain('npm run build:renderer');
    }
    expect(t.node.uiUrl).toBeUndefined();
  });

  it('serves the GUI as soon as it is built, without a restart', async () => {
    fakeBuild(join(uiDir, 'dist'));
    const r = await fetch(`${t.node.url}/ui/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe(INDEX_HTML);
    expect(t.node.uiUrl).toBe(`${t.node.url}/ui/`);
  });
});

describe('a node without a GUI', () => {
  it('has no /ui routes with uiDir false', async () => {
    const t = await startTestNode({ uiDir: false });
    try {
      const r = await fetch(`${t.node.url}/ui/`);
      expect(r.status).toBe(404);
      expect(await r.json()).toEqual({ error: 'not found' });
      expect(t.node.uiUrl).toBeUndefined();
    } finally {
      await t.stop();
    }
  });

  it('refuses a --ui-dir that is a file', async () => {
    const dir = tempDir();
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    const t = startTestNode({ uiDir: file });
    await expect(t).rejects.toThrow(/GUI folder .* is not a directory/);
  });

  it('defaults to renderer/dist of the checkout', () => {
    expect(DEFAULT_UI_DIR).toBe(fileURLToPath(new URL('../../renderer/dist', import.meta.url)));
    expect(new LedgerNode({ dataDir: tempDir() }).uiDir).toBe(DEFAULT_UI_DIR);
  });
});

describe('the /ui routes behind the server protections', () => {
  it('applies the Host check and the rate limits', async () => {
    const uiDir = tempDir('ledger-ui-');
    fakeBuild(uiDir);
    const app = createApiServer({
      routes: defineRoutes([]),
      rateLimit: { rates: { read: { perSecond: 0.001, burst: 2 } } },
      security: { bindAddress: '127.0.0.1' },
    });
    registerUi(app, uiDir);
    try {
      const evil = await app.inject({ url: '/ui/', headers: { host: 'evil.example:8080' } });
      expect(evil.statusCode).toBe(403);
      expect(evil.json()).toEqual({ error: 'host not allowed' });
      const codes = [];
      for (let i = 0; i < 3; i++) {
        codes.push((await app.inject({ url: '/ui/', headers: { host: '127.0.0.1:8080' } })).statusCode);
      }
      // Burst of 2 (the request refused by the Host check spent none), then the limit.
      expect(codes).toEqual([200, 200, 429]);
    } finally {
      await app.close();
      rmSync(uiDir, { recursive: true, force: true });
    }
  });
});

/**
 * The app icon (issue #14 item 10): the real GUI, built by Vite from renderer/ into a temp folder,
 * links its icon, every icon link resolves, and the origin's `/favicon.ico` is the same icon.
 */
describe('the app icon', () => {
  const repo = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
  let t: TestNode;
  let outDir: string;

  beforeAll(async () => {
    outDir = tempDir('ledger-ui-vite-');
    execFileSync(
      process.execPath,
      [
        repo('node_modules/vite/bin/vite.js'),
        'build',
        '--config',
        repo('renderer/vite.config.ts'),
        '--outDir',
        outDir,
        '--emptyOutDir',
        '--logLevel',
        'error',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 },
    );
    t = await startTestNode({ uiDir: outDir });
  }, 150_000);
  afterAll(async () => {
    await t?.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  /** The ICO's images: each a PNG of build/icons, the app icon drawn by electron/icon.ts. */
  function icoImages(ico: Buffer): { size: number; png: Buffer }[] {
    expect([...ico.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    return Array.from({ length: ico.readUInt16LE(4) }, (_, i) => {
      const e = 6 + 16 * i;
      const size = ico[e] === 0 ? 256 : ico[e]!;
      const png = ico.subarray(ico.readUInt32LE(e + 12), ico.readUInt32LE(e + 12) + ico.readUInt32LE(e + 8));
      return { size, png };
    });
  }

  it('GET /favicon.ico answers 200 with the app icon as an image', async () => {
    const r = await fetch(`${t.node.url}/favicon.ico`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^image\//);
    const ico = Buffer.from(await r.arrayBuffer());
    expect(ico.equals(readFileSync(repo('renderer/public/favicon.ico')))).toBe(true);
    const images = icoImages(ico);
    expect(images.map((i) => i.size)).toEqual([16, 32, 48]);
    for (const { size, png } of images)
      expect(png.equals(readFileSync(repo(`build/icons/${size}x${size}.png`))), `${size}`).toBe(true);
    const head = await fetch(`${t.node.url}/favicon.ico`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(ico.length));
  });

  it('the built index page links the icon, and every icon link resolves to an image', async () => {
    const page = await fetch(`${t.node.url}/ui/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const links = [...html.matchAll(/<link\b[^>]*>/g)]
      .map((m) => m[0])
      .filter((tag) => /\brel="(?:icon|shortcut icon|apple-touch-icon)"/.test(tag))
      .map((tag) => /\bhref="([^"]+)"/.exec(tag)![1]!);
    expect(links).toContain('/ui/favicon.ico');
    for (const href of links) {
      const url = new URL(href, `${t.node.url}/ui/`);
      expect(url.origin, href).toBe(t.node.url); // the CSP's img-src is 'self'
      const r = await fetch(url);
      expect(r.status, href).toBe(200);
      expect(r.headers.get('content-type'), href).toMatch(/^image\//);
      expect((await r.arrayBuffer()).byteLength, href).toBeGreaterThan(0);
    }
    const png = Buffer.from(await (await fetch(`${t.node.url}/ui/icon.png`)).arrayBuffer());
    expect(png.equals(readFileSync(repo('build/icons/icon.png')))).toBe(true);
  });

  it('answers /favicon.ico with the JSON 404 while the GUI is not built', async () => {
    const dir = tempDir('ledger-ui-none-');
    const bare = await startTestNode({ uiDir: join(dir, 'dist') });
    try {
      const r = await fetch(`${bare.node.url}/favicon.ico`);
      expect(r.status).toBe(404);
      expect(await r.json()).toEqual({ error: UI_NOT_BUILT_MESSAGE });
    } finally {
      await bare.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ui path helpers and flags', () => {
  it('maps request URLs to safe relative paths', () => {
    expect(uiRelativePath('/ui/')).toBe('');
    expect(uiRelativePath('/ui/assets/a.js?v=1')).toBe('assets/a.js');
    expect(uiRelativePath('/ui/wallet/')).toBe('wallet');
    expect(uiRelativePath('/ui/a%20b')).toBe('a b');
    for (const bad of [
      '/ui//x',
      '/ui/./x',
      '/ui/../x',
      '/ui/%2e%2e/x',
      '/ui/a%2fb',
      '/ui/.git/config',
      '/ui/%ZZ',
      '/api',
    ]) {
      expect(uiRelativePath(bad), bad).toBeUndefined();
    }
  });

  it('tells app routes from missing files', () => {
    expect(isAppRoute('wallet')).toBe(true);
    expect(isAppRoute('accounts/xe_1/chain')).toBe(true);
    expect(isAppRoute('logo.png')).toBe(false);
    expect(isAppRoute('assets')).toBe(false);
    expect(isAppRoute('assets/chunk')).toBe(false);
  });

  it('parses --ui-dir and --no-ui', () => {
    expect(parseArgs([]).uiDir).toBeUndefined();
    expect(parseArgs(['--ui-dir', '/srv/gui']).uiDir).toBe('/srv/gui');
    expect(parseArgs(['--no-ui']).uiDir).toBe(false);
    expect(() => parseArgs(['--ui-dir'])).toThrow(/--ui-dir needs a value/);
    expect(() => parseArgs(['--ui-dir='])).toThrow(/must not be empty/);
  });
});
