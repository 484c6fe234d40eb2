import { createRequire } from 'node:module';
import type * as Lmdb from 'lmdb';

/**
 * lmdb-js, required through its CommonJS build rather than imported. Its ES build is a dozen
 * modules, with msgpackr's and ordered-binary's, through the ES module loader, and it imports
 * node:fs as an ES module, whose facade reads every export of node:fs, loading its streams:
 * 63-87 ms from a fresh process against 39-50 ms required, before a node can answer (the start-up
 * target is 0.6 s). Types come from the package's own declarations, as with an import. Every value
 * of lmdb the node uses comes from here: the two builds in one process would be two copies.
 */
const require = createRequire(import.meta.url);

export const { open } = require('lmdb') as typeof Lmdb;
