#!/usr/bin/env node
// Entry point of the `ledger-node` command. Runs the compiled CLI when present (an installed
// package), else the TypeScript sources directly (a checkout, on Node 22.18+ with type stripping).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/node-core/cli/main.js', import.meta.url);
const entry = existsSync(compiled) ? compiled : new URL('../node-core/cli/main.ts', import.meta.url);
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
