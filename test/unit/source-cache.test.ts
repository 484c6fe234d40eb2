import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * bin/source-cache.js: a checkout's TypeScript modules are stripped once and then read from
 * node_modules/.cache; a changed source is stripped afresh (never a stale module); a module Node
 * would refuse to strip is refused the same way; nothing is printed about it.
 */
const CACHE = pathToFileURL(join(import.meta.dirname, '../../bin/source-cache.js')).href;

/**
 * Runs `entry` (a .ts file under `root`) in a fresh Node with the cache on; its stdout and stderr.
 * With `spy`, a resolve hook registered first (so it runs after the cache's) prints, to stderr, each
 * specifier Node's own resolution is asked for from a .ts module.
 */
function run(root: string, entry: string, spy = false): { out: string; err: string; status: number | null } {
  const script =
    (spy
      ? "const { registerHooks } = await import('node:module');" +
        'registerHooks({ resolve(s, c, next) { if (c.parentURL?.endsWith(".ts")) ' +
        'process.stderr.write(`resolved by Node: ${s}\\n`); return next(s, c); } });'
      : '') +
    `const { enableSourceCache } = await import(${JSON.stringify(CACHE)});` +
    `enableSourceCache(${JSON.stringify(pathToFileURL(`${root}/`).href)});` +
    `const m = await import(${JSON.stringify(pathToFileURL(join(root, entry)).href)});` +
    'console.log(JSON.stringify(m.value));';
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return { out: r.stdout.trim(), err: r.stderr, status: r.status };
}

describe('the stripped-source cache of bin/ledger-node.js', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
  });

  it('runs the module as Node would, caches it, and strips a changed source afresh', () => {
    const root = mkdtempSync(join(tmpdir(), 'source-cache-'));
    roots.push(root);
    writeFileSync(join(root, 'package.json'), '{"type":"module"}');
    writeFileSync(join(root, 'dep.ts'), 'export const two: number = 2;\n');
    const source = (n: number) =>
      `import { two } from './dep.ts';\ninterface T { a: number }\nconst t: T = { a: ${n} };\n` +
      'export const value: number[] = [t.a, two];\n';
    writeFileSync(join(root, 'main.ts'), source(1));

    const first = run(root, 'main.ts');
    expect(first).toMatchObject({ out: '[1,2]', err: '', status: 0 });
    const dir = join(root, 'node_modules', '.cache', 'ledger-node', 'stripped');
    expect(readdirSync(dir).filter((f) => f.endsWith('.js'))).toHaveLength(2);
    expect(run(root, 'main.ts')).toMatchObject({ out: '[1,2]', err: '', status: 0 });

    writeFileSync(join(root, 'main.ts'), source(7));
    expect(run(root, 'main.ts')).toMatchObject({ out: '[7,2]', err: '', status: 0 });
    expect(readdirSync(dir).filter((f) => f.endsWith('.js'))).toHaveLength(3);
    expect(existsSync(join(root, 'node_modules', '.cache', 'ledger-node', 'v8'))).toBe(true);
  });

  it('resolves relative imports between its own .ts modules itself; a missing one is not found', () => {
    const root = mkdtempSync(join(tmpdir(), 'source-cache-'));
    roots.push(root);
    writeFileSync(join(root, 'package.json'), '{"type":"module"}');
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'dep.ts'), 'export const box: { n: number } = { n: 0 };\n');
    writeFileSync(
      join(root, 'sub', 'inc.ts'),
      "import { box } from '../dep.ts';\nimport { join } from 'node:path';\nbox.n += 1;\nexport const j = join;\n",
    );
    // The same module by two spellings is one module (run once); a package and a builtin go to Node.
    writeFileSync(
      join(root, 'main.ts'),
      "import { box } from './dep.ts';\nimport './sub/inc.ts';\nimport { box as again } from './sub/../dep.ts';\n" +
        'export const value = [box.n, box === again];\n',
    );
    const r = run(root, 'main.ts', true);
    expect(r).toMatchObject({ out: '[1,true]', status: 0 });
    expect(r.err).toBe('resolved by Node: node:path\n');

    writeFileSync(join(root, 'main.ts'), "import { x } from './gone.ts';\nexport const value = x;\n");
    const missing = run(root, 'main.ts', true);
    expect(missing.status).not.toBe(0);
    expect(missing.err).toContain('ERR_MODULE_NOT_FOUND');
    expect(missing.err).toContain(`Cannot find module '${join(root, 'gone.ts')}'`);
  });

  it('refuses what Node’s type stripping refuses (an enum), as Node does', () => {
    const root = mkdtempSync(join(tmpdir(), 'source-cache-'));
    roots.push(root);
    writeFileSync(join(root, 'package.json'), '{"type":"module"}');
    writeFileSync(join(root, 'main.ts'), 'enum E { A }\nexport const value = E.A;\n');
    const r = run(root, 'main.ts');
    expect(r.status).not.toBe(0);
    expect(r.err).toMatch(/TypeScript|enum|not supported/i);
  });
});
