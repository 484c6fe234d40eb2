#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=8
// Entry point of the `ledger-node` command. The flag caps V8's young generation at 8 MB a semi-space
// (the default is 16): a node serving many requests otherwise grows it to the maximum and keeps it,
// which put resident memory past 300 MB with 100,000 accounts; ingest and reads measured the same
// either way. V8 reads it only at start, so it sits here and in package.json's scripts.
// MALLOC_ARENA_MAX=1 keeps glibc's malloc to one arena for every thread. By default each thread that
// allocates (libuv's LMDB writers, V8's compiler and GC helpers, the verify workers) gets an arena of
// its own, which keeps what was freed in it: 10-14 MB of the node's anonymous memory after start-up
// and /supply with 100,000 accounts, ~30 MB under a steady ingest; ingest CPU per block measured the
// same either way (bench startup, soak, node). Other C libraries ignore it; a value set by the caller
// is replaced (`env -S` applies its own). In a checkout it runs the TypeScript sources directly
// (Node 22.18+ strips types); an installed package (under node_modules, where Node does not strip
// types) runs the compiled CLI from `npm run build`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../node-core/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/node-core/cli/main.js', import.meta.url);
const installed = fileURLToPath(import.meta.url)
  .split(/[\\/]/)
  .includes('node_modules');
const entry = !installed && existsSync(source) ? source : compiled;
// The sources are stripped of their types on every start unless cached (source-cache.js).
if (entry === source) (await import('./source-cache.js')).enableSourceCache(new URL('..', import.meta.url));
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
