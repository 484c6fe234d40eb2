/**
 * Renderer benchmarks (issue "The desktop app"): the initial JavaScript of the built GUI (gzip, what
 * index.html loads before any lazy chunk), the time from navigation to an interactive wallet page in
 * Debian's Chromium, and the time to solve proof of work for one block in the browser's Web Worker
 * at the network difficulty. Needs /usr/bin/chromium; builds renderer/dist when it is stale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { BLOCK_POW_DIFFICULTY, expectedAttempts, formatDifficulty } from '../node-core/protocol/pow.ts';
import { createWallet, DIST, ensureRendererBuilt, launchChromium, startUiNode } from '../test/e2e/browser.ts';

const NAV_RUNS = 5;
const POW_SOLVES = 10;
const PASSWORD = 'benchmark password';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The JS index.html loads up front: its entry script, modulepreloads, and their static imports. */
export function initialJs(dist = DIST): { files: string[]; rawBytes: number; gzipBytes: number } {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const queue = [
    ...html.matchAll(/<script[^>]+type="module"[^>]+src="([^"]+)"/g),
    ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g),
  ].map((m) => m[1]!.replace(/^\/ui\//, ''));
  const seen = new Set<string>();
  let rawBytes = 0;
  let gzipBytes = 0;
  while (queue.length > 0) {
    const rel = queue.shift()!;
    if (seen.has(rel)) continue;
    seen.add(rel);
    const buf = readFileSync(join(dist, rel));
    rawBytes += buf.length;
    gzipBytes += gzipSync(buf, { level: 9 }).length;
    const dir = rel.slice(0, rel.lastIndexOf('/') + 1);
    // Static imports only (`import ... from "./x.js"`, `import "./x.js"`); `import("./x.js")` is lazy.
    for (const m of buf.toString('utf8').matchAll(/(?:\bfrom|\bimport)\s*["'](\.\/[^"']+\.js)["']/g)) {
      queue.push(dir + m[1]!.slice(2));
    }
  }
  return { files: [...seen], rawBytes, gzipBytes };
}

/** Solves `n` random targets with the built proof-of-work worker, in the page; ms and attempts each. */
async function solveInWorker(page: Page, workerUrl: string, difficulty: string, n: number) {
  return page.evaluate(
    async ({ workerUrl, difficulty, n }) => {
      const w = new Worker(workerUrl, { type: 'module' });
      await new Promise<void>((resolve) => {
        w.onmessage = (ev: MessageEvent<{ type: string }>) => {
          if (ev.data.type === 'ready') resolve();
        };
      });
      const out: { ms: number; attempts: number }[] = [];
      for (let i = 0; i < n; i++) {
        const target = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) =>
          b.toString(16).padStart(2, '0'),
        ).join('');
        const start = new DataView(crypto.getRandomValues(new Uint8Array(8)).buffer).getBigUint64(0);
        const t0 = performance.now();
        const done = await new Promise<{ attempts: string }>((resolve, reject) => {
          w.onmessage = (
            ev: MessageEvent<{ type: string; id: number; attempts: string; message?: string }>,
          ) => {
            if (ev.data.type === 'done' && ev.data.id === i) resolve(ev.data);
            if (ev.data.type === 'failed') reject(new Error(ev.data.message));
          };
          w.postMessage({
            type: 'solve',
            id: i,
            target,
            difficulty: BigInt('0x' + difficulty).toString(),
            startNonce: start.toString(),
          });
        });
        out.push({ ms: performance.now() - t0, attempts: Number(done.attempts) });
      }
      w.terminate();
      return out;
    },
    { workerUrl, difficulty, n },
  );
}

export default async function benchRenderer(log: (line: string) => void): Promise<Record<string, number>> {
  await ensureRendererBuilt(log);
  const js = initialJs();
  log(
    `initial JS: ${(js.gzipBytes / 1024).toFixed(1)} KB gzip (${(js.rawBytes / 1024).toFixed(1)} KB raw) in ${js.files.length} files (target < 350 KB)`,
  );

  const ui = await startUiNode({ powDifficulty: 0x0fff000000000000n });
  log(
    ui.mode === 'node'
      ? `UI served by the node at ${ui.appUrl}`
      : `UI from the static fallback: ${ui.appUrl}`,
  );
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const setup = await context.newPage();
    await setup.goto(ui.appUrl);
    await createWallet(setup, PASSWORD);
    await setup.getByTestId('claim-button').click();
    await setup.getByTestId('claim-success').waitFor();
    await setup.close();

    // Each run: a fresh page from navigation to (a) the lock screen ready for input, and (b) the
    // unlocked wallet showing its balance. The vault is the node's; the page opens the plain address,
    // as a returning user does (the session cookie from the setup's connect link is the context's).
    const plainUrl = ui.appUrl.split('#')[0]!;
    const toUnlock: number[] = [];
    const toWallet: number[] = [];
    const kdf: number[] = [];
    for (let i = 0; i < NAV_RUNS; i++) {
      const page = await context.newPage();
      const t0 = performance.now();
      await page.goto(plainUrl);
      await page.getByTestId('unlock-password').waitFor();
      toUnlock.push(performance.now() - t0);
      await page.getByTestId('unlock-password').fill(PASSWORD);
      await page.getByTestId('unlock-submit').click();
      await page.waitForFunction(
        () =>
          document.querySelector('[data-testid="balance-total-XE"]')?.getAttribute('data-micro') ===
          '1000000000',
      );
      toWallet.push(performance.now() - t0);
      await page.getByTestId('nav-settings').click();
      kdf.push(Number(await page.getByTestId('kdf-ms').innerText()));
      await page.close();
    }
    log(
      `navigation -> lock screen ready: median ${median(toUnlock).toFixed(0)} ms (${toUnlock.map((x) => x.toFixed(0)).join(', ')})`,
    );
    log(
      `navigation -> unlocked wallet with balance (password typed, scrypt included): median ${median(toWallet).toFixed(0)} ms (${toWallet.map((x) => x.toFixed(0)).join(', ')}) (target < 1000 ms)`,
    );
    log(`scrypt N=2^15 r=8 p=1 in the keystore worker: median ${median(kdf).toFixed(0)} ms`);

    const workerFile = readdirSync(join(DIST, 'assets')).find((f) => /^pow\.worker-.*\.js$/.test(f));
    if (!workerFile) throw new Error('no pow.worker chunk in renderer/dist/assets');
    const page = await context.newPage();
    await page.goto(ui.appUrl);
    const diff = formatDifficulty(BLOCK_POW_DIFFICULTY);
    const solves = await solveInWorker(page, `/ui/assets/${workerFile}`, diff, POW_SOLVES);
    const totalMs = solves.reduce((s, x) => s + x.ms, 0);
    const totalAttempts = solves.reduce((s, x) => s + x.attempts, 0);
    const rate = totalAttempts / (totalMs / 1000);
    const expected = expectedAttempts(BLOCK_POW_DIFFICULTY);
    log(
      `proof of work in one Web Worker at ${diff}: mean ${(totalMs / POW_SOLVES).toFixed(0)} ms per block over ${POW_SOLVES} solves ` +
        `(${solves.map((s) => s.ms.toFixed(0)).join(', ')}); ${(rate / 1e6).toFixed(2)} M attempts/s, ` +
        `so ${((expected / rate) * 1000).toFixed(0)} ms expected for ${(expected / 1e6).toFixed(2)} M attempts`,
    );
    return {
      initial_js_gzip_kb: js.gzipBytes / 1024,
      nav_to_lock_screen_ms: median(toUnlock),
      nav_to_unlocked_wallet_ms: median(toWallet),
      scrypt_unlock_ms: median(kdf),
      pow_block_worker_ms: totalMs / POW_SOLVES,
      pow_block_worker_expected_ms: (expected / rate) * 1000,
      pow_worker_mhash_s: rate / 1e6,
    };
  } finally {
    await browser.close();
    await ui.stop();
  }
}
