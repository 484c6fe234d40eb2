import { execFile } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { NodeOptions } from '../../node-core/node.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Shared by the end-to-end tests and bench/renderer.ts: the renderer's build (rebuilt when stale),
 * Debian's Chromium through playwright-core, and a real node serving the built UI, or, while the node
 * cannot serve /ui/ yet, a tiny static server on another loopback port with `?api=` pointing at the node.
 */
export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const DIST = join(ROOT, 'renderer', 'dist');
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const SOURCES = [
  'renderer/index.html',
  'renderer/vite.config.ts',
  'renderer/src',
  'node-core/protocol',
  'node-core/client',
  'package-lock.json',
];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/** True when renderer/dist is missing or older than any of its sources. */
export function rendererStale(): boolean {
  const built = join(DIST, 'index.html');
  if (!existsSync(built)) return true;
  const builtAt = statSync(built).mtimeMs;
  return SOURCES.some((s) => newestMtime(join(ROOT, s)) > builtAt);
}

/** Builds the renderer with Vite (in a child process) when it is missing or stale; returns whether it built. */
export async function ensureRendererBuilt(log: (line: string) => void = () => {}): Promise<boolean> {
  if (!rendererStale()) return false;
  const started = performance.now();
  await promisify(execFile)(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      'renderer/vite.config.ts',
      '--logLevel',
      'warn',
    ],
    // Inside vitest NODE_ENV is 'test', which would give React's development build (bigger and
    // slower than what users get, and what bench/renderer.ts measures): build what ships.
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NODE_ENV: 'production' } },
  );
  log(`built renderer/dist in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return true;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

export interface StaticServer {
  origin: string;
  close(): Promise<void>;
}

/** Serves `dir` under /ui/ on loopback (the fallback while the node cannot serve the UI itself). */
export async function serveStatic(dir = DIST): Promise<StaticServer> {
  const root = resolve(dir);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.startsWith('/ui/')) {
      res.writeHead(404).end();
      return;
    }
    const rel = decodeURIComponent(url.pathname.slice('/ui/'.length)) || 'index.html';
    const file = normalize(join(root, rel));
    if (!file.startsWith(root + sep) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface UiNode {
  node: TestNode;
  /** The wallet's URL: the node's own /ui/ (or the static server's with ?api=), with the connect link. */
  appUrl: string;
  /** 'node' when the node serves the UI; 'static-fallback' otherwise. */
  mode: 'node' | 'static-fallback';
  /** The same build from the static server on another origin, with ?api= naming the node (development form). */
  crossOriginUrl: string;
  /** Stops the node and the static server; safe to call more than once. */
  stop(): Promise<void>;
}

/** Does this node serve the built UI at /ui/? */
async function nodeServesUi(nodeUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${nodeUrl}/ui/`);
    const text = await res.text();
    return (
      res.ok && (res.headers.get('content-type') ?? '').includes('text/html') && text.includes('id="root"')
    );
  } catch {
    return false;
  }
}

/**
 * A real node (temp dir, given PoW difficulty) with the UI: the node's own /ui/ when it serves it
 * (the `uiDir` option), else the static fallback, which the node lets read its API through CORS.
 */
export async function startUiNode(opts: Partial<NodeOptions> = {}): Promise<UiNode> {
  const statics = await serveStatic();
  // `uiDir` is the node's option for serving the renderer; a node without it ignores it.
  const node = await startTestNode({
    uiDir: DIST,
    ...opts,
    corsOrigins: [statics.origin],
  } as Partial<NodeOptions>);
  const own = await nodeServesUi(node.node.url);
  const crossOriginUrl = `${statics.origin}/ui/?api=${encodeURIComponent(node.node.url)}`;
  let stopped: Promise<void> | undefined;
  // The connect link `npm start` prints: it gives the browser its session with the node, which
  // keeps the wallet (the page takes the token out of the address at once).
  const connect = `#/connect/${encodeURIComponent(node.node.adminToken ?? '')}`;
  return {
    node,
    appUrl: own ? `${node.node.url}/ui/${connect}` : `${crossOriginUrl}${connect}`,
    mode: own ? 'node' : 'static-fallback',
    crossOriginUrl,
    stop() {
      stopped ??= (async () => {
        await node.stop();
        await statics.close();
      })();
      return stopped;
    },
  };
}

/**
 * Onboarding as a person does it on an open page of the app: a new wallet, its recovery phrase written
 * down and every word typed back, a password; resolves once the wallet page shows, with the first
 * account's address.
 */
export async function createWallet(page: Page, password: string): Promise<string> {
  await page.getByTestId('onboarding-create').click();
  await page.getByTestId('seed-backup').waitFor();
  const words: string[] = [];
  for (let i = 1; i <= 24; i++) words.push(await page.getByTestId(`phrase-shown-${i}`).innerText());
  await page.getByTestId('seed-written').check();
  await page.getByTestId('seed-continue').click();
  for (let i = 1; i <= 24; i++) await page.getByTestId(`phrase-word-${i}`).fill(words[i - 1]!);
  await page.getByTestId('seed-confirm-submit').click();
  await page.getByTestId('new-password').fill(password);
  await page.getByTestId('confirm-password').fill(password);
  await page.getByTestId('create-wallet').click();
  await page.getByTestId('wallet-page').waitFor();
  return page.getByTestId('account-address').innerText();
}

/**
 * "New account" on the wallet page: the wallet's recovery phrase already covers it, so only a label;
 * resolves with the new account's address once the wallet page shows it.
 */
export async function addAccount(page: Page, label: string): Promise<string> {
  await page.getByTestId('add-account').click();
  await page.getByTestId('new-account').waitFor();
  await page.getByTestId('account-label').fill(label);
  await page.getByTestId('add-account-save').click();
  await page.getByTestId('wallet-page').waitFor();
  return page.getByTestId('account-address').innerText();
}
