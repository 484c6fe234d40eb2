#!/usr/bin/env node
// Entry point of the `ledger-node` command. In a checkout it runs the TypeScript sources directly
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
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
