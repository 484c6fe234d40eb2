import type * as Http from 'node:http';
import { createRequire } from 'node:module';
import type * as Fastify from 'fastify';
import type * as Pino from 'pino';

/**
 * The CommonJS packages the node loads before its API listens, required rather than imported. An
 * ES `import` of a CommonJS package goes through the ES module loader for it and every file it
 * requires (and parses each for its export names): fastify, pino, @fastify/websocket (with ws) and
 * @fastify/static took ~200 ms of CPU that way against ~105 ms required, out of a start-up whose
 * target is 0.6 s. Types come from the packages' own declarations, as with an import. (The GUI's
 * files are now sent by @fastify/send, required with the first one: api/ui-send.ts; WebSockets are
 * made by ws, required with the first upgrade: api/ws-upgrade.ts.)
 */
const require = createRequire(import.meta.url);

export const fastifyPackage = require('fastify') as typeof Fastify;
export const pinoPackage = require('pino') as typeof Pino;

/**
 * node:http's status texts and response class, required for the same reason: an ES import of
 * node:http reads each of its exports, and its lazy fetch-related ones load undici (~15 ms at start)
 * for nothing.
 */
export const { STATUS_CODES, ServerResponse } = require('node:http') as typeof Http;
