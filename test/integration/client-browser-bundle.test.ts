import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Rollup } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/node.ts';

/**
 * The browser path of the package: the client, protocol and proof-of-work entries bundled by Vite for
 * a browser target must need no Node built-in (Vite would stub one as `__vite-browser-external`),
 * and the package's `./pow` export must send a browser to the WebAssembly engine.
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const out = tempDir('client-browser-');
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the client in a browser bundle', () => {
  it('bundles client, protocol and pow for the browser with no node: imports', async () => {
    const warnings: string[] = [];
    await build({
      configFile: false,
      root: ROOT,
      logLevel: 'silent',
      resolve: { conditions: ['browser', 'import', 'default'] },
      build: {
        outDir: out,
        emptyOutDir: true,
        minify: false,
        target: 'es2022',
        lib: {
          entry: {
            client: join(ROOT, 'node-core/client/index.ts'),
            protocol: join(ROOT, 'node-core/protocol/index.ts'),
            pow: join(ROOT, 'node-core/client/pow-browser.ts'),
          },
          formats: ['es'],
        },
        rollupOptions: {
          onwarn(w: Rollup.RollupLog) {
            warnings.push(w.message);
          },
        },
      },
    });
    const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) {
      const code = readFileSync(join(out, f), 'utf8');
      // What the output's statements import: its own chunks and the isomorphic @noble packages.
      const specifiers = [
        ...code.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']/gm),
        ...code.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
        ...code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
      ].map((m) => m[1]);
      expect(
        // Packages stay imports in library mode: only the audited, isomorphic @noble ones may remain.
        specifiers.filter(
          (s) => !s!.startsWith('./') && !/^@noble\/(ed25519|hashes|curves|ciphers)(\/|$)/.test(s!),
        ),
        f,
      ).toEqual([]);
      expect(code, f).not.toMatch(/\brequire\(/);
      expect(code, f).not.toContain('__vite-browser-external');
    }
    expect(warnings.filter((w) => /externalized|browser compatibility/i.test(w))).toEqual([]);
    const pow = readFileSync(join(out, 'pow.js'), 'utf8');
    expect(pow).toContain('WebAssembly');
  }, 120_000);

  it("the package's ./pow export sends a browser to the WebAssembly engine and Node to the workers", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, Record<string, string>>;
    };
    expect(pkg.exports['./pow']?.node).toMatch(/client\/pow-node\.js$/);
    expect(pkg.exports['./pow']?.default).toMatch(/client\/pow-browser\.js$/);
    expect(pkg.exports['./client']?.default).toMatch(/client\/index\.js$/);
  });
});
