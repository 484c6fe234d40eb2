import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * Precompression of the built GUI: next to every text-like file of renderer/dist it writes `<file>.br`
 * (Brotli, best quality) and `<file>.gz` (gzip -9), which the node sends to browsers that accept them
 * (node-core/api/ui-send.ts: it honours Accept-Encoding and adds `Vary: Accept-Encoding`). Done once per build, so serving costs no CPU; run as a Vite plugin
 * (precompressPlugin, renderer/vite.config.ts) after the bundle is written.
 */

/** Types that compress: text and wasm. Images (PNG) are compressed already. */
export const COMPRESSIBLE = new Set([
  '.html',
  '.js',
  '.mjs',
  '.css',
  '.svg',
  '.json',
  '.wasm',
  '.ico',
  '.txt',
]);
/** Below this a compressed copy saves less than its headers cost. */
export const MIN_BYTES = 512;

export interface PrecompressResult {
  files: number;
  rawBytes: number;
  brBytes: number;
  gzBytes: number;
}

/** Writes .br and .gz siblings for the compressible files under `dir`; returns what it did. */
export function precompressDir(dir: string): PrecompressResult {
  const out: PrecompressResult = { files: 0, rawBytes: 0, brBytes: 0, gzBytes: 0 };
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        continue;
      }
      if (!COMPRESSIBLE.has(extname(entry.name).toLowerCase()) || statSync(path).size < MIN_BYTES) continue;
      const raw = readFileSync(path);
      const br = brotliCompressSync(raw, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
          [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
        },
      });
      const gz = gzipSync(raw, { level: 9 });
      // A copy that saves little is not worth a second file (and a stale-copy risk).
      if (gz.length > raw.length * 0.9) continue;
      writeFileSync(`${path}.br`, br);
      writeFileSync(`${path}.gz`, gz);
      out.files++;
      out.rawBytes += raw.length;
      out.brBytes += br.length;
      out.gzBytes += gz.length;
    }
  };
  walk(dir);
  return out;
}

/**
 * The Vite plugin: precompresses the output folder once the build is closed (after the workers'
 * chunks and the public files are written too). Build only; the dev server compresses nothing.
 */
export function precompressPlugin(): {
  name: string;
  apply: 'build';
  configResolved(config: { root: string; build: { outDir: string } }): void;
  closeBundle(): void;
} {
  let outDir: string | undefined;
  return {
    name: 'ledger-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      if (outDir !== undefined) precompressDir(outDir);
    },
  };
}
