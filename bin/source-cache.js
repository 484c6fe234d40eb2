// Start-up caches for running the TypeScript sources of a checkout (bin/ledger-node.js).
//
// Node strips the types of every .ts module it loads, on every start: with ~250 modules that took
// 150-275 ms of a node's start-up (the amaro WebAssembly stripper, and loading it). The load hook
// below keeps each module's stripped JavaScript in node_modules/.cache, named by a hash of the Node
// version and the source, so a changed file is stripped afresh and nothing stale is ever run. The
// folder belongs to whoever owns the checkout (not the shared temporary folder, where another user
// could plant code). Node's own compile cache (V8 code caches, checked against each source) is
// enabled beside it. Any failure to read or write a cache only means stripping as Node would.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Runs `f` without the warning that stripTypeScriptTypes is experimental (what Node runs anyway). */
function quietly(f) {
  const emit = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (!String(warning).includes('stripTypeScriptTypes')) emit.call(process, warning, ...rest);
  };
  try {
    return f();
  } finally {
    process.emitWarning = emit;
  }
}

/** Caches under `<root>/node_modules/.cache/ledger-node`; `root` is the checkout. */
export function enableSourceCache(root) {
  // A Node without these (before 22.15) runs without the caches, stripping as it always did.
  const { enableCompileCache, registerHooks, stripTypeScriptTypes } = nodeModule;
  if (typeof registerHooks !== 'function' || typeof stripTypeScriptTypes !== 'function') return;
  const base = join(fileURLToPath(root), 'node_modules', '.cache', 'ledger-node');
  const stripped = join(base, 'stripped');
  try {
    mkdirSync(stripped, { recursive: true, mode: 0o700 });
  } catch {
    return;
  }
  enableCompileCache?.(join(base, 'v8'));
  const ownHref = new URL('.', root).href;
  const own = (url) => url.startsWith(ownHref) && url.endsWith('.ts') && !url.includes('/node_modules/');
  registerHooks({
    resolve(specifier, context, nextResolve) {
      // A relative import from one of the checkout's .ts modules to another is the file it names.
      // Node's own resolution stats and realpaths it and looks up its package.json for its format,
      // for every import of every module: without it a start reached the node's start() 49 ms later
      // (median of 14 alternating runs, 362 against 313 ms). A file that is not there fails to load.
      const parent = context.parentURL;
      if (parent !== undefined && own(parent) && /^\.\.?\//.test(specifier)) {
        const url = new URL(specifier, parent).href;
        if (own(url)) return { url, format: 'module', shortCircuit: true };
      }
      return nextResolve(specifier, context);
    },
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/'))
        return nextLoad(url, context);
      let source;
      try {
        source = readFileSync(fileURLToPath(url), 'utf8');
      } catch (e) {
        if (e.code !== 'ENOENT') throw e;
        throw Object.assign(new Error(`Cannot find module '${fileURLToPath(url)}'`), {
          code: 'ERR_MODULE_NOT_FOUND',
          url,
        });
      }
      const key = createHash('sha256').update(`${process.version}\0`).update(source).digest('hex');
      const file = join(stripped, `${key.slice(0, 40)}.js`);
      let js;
      try {
        js = readFileSync(file, 'utf8');
      } catch {
        // The mode Node itself uses for .ts files: types become whitespace, lines and columns stay.
        js = quietly(() => stripTypeScriptTypes(source, { mode: 'strip' }));
        try {
          const tmp = `${file}.${process.pid}.tmp`;
          writeFileSync(tmp, js, { mode: 0o600 });
          renameSync(tmp, file);
        } catch {
          // No cache this time.
        }
      }
      return { format: 'module', source: js, shortCircuit: true };
    },
  });
}
