import type * as Http from 'node:http';
import { createRequire, Module } from 'node:module';
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

/**
 * A module's stand-in: the module itself is required when the stand-in is first used (a property
 * read, `in`, or its keys listed).
 */
function deferredModule(load: () => object): object {
  let real: object | undefined;
  const target = () => (real ??= load());
  return new Proxy(
    {},
    {
      get: (_, key) => Reflect.get(target(), key) as unknown,
      has: (_, key) => Reflect.has(target(), key),
      ownKeys: () => Reflect.ownKeys(target()),
      getOwnPropertyDescriptor: (_, key) => {
        const d = Reflect.getOwnPropertyDescriptor(target(), key);
        // A proxy may not report a property its (empty) target lacks as non-configurable.
        return d === undefined ? undefined : { ...d, configurable: true };
      },
    },
  );
}

/**
 * Requires the package `id` with some of what its files require deferred: a require of one of
 * `deferred` made while the package loads gets a stand-in (deferredModule), resolved as the file
 * asked for it. Everything else, and every require after this returns, is as Node does it.
 */
function requireDeferring(id: string, deferred: ReadonlySet<string>): unknown {
  const proto = Module.prototype;
  const own = proto.require;
  proto.require = function (this: Module, request: string): unknown {
    if (!deferred.has(request)) return own.call(this, request) as unknown;
    return deferredModule(() => own.call(this, request) as object);
  } as typeof own;
  try {
    return require(id);
  } finally {
    proto.require = own;
  }
}

/**
 * fastify requires, as it loads, node:https and node:http2 for the servers it can make (this node
 * makes a plain HTTP one) and semver to check a plugin's declared fastify version (no plugin of ours
 * declares one). Required only when used, requiring fastify took 66 against 103 ms (medians of 10
 * fresh processes, each after node:http); everything they serve still works (test fastify-deferred).
 */
export const fastifyPackage = requireDeferring(
  'fastify',
  new Set(['node:https', 'node:http2', 'semver']),
) as typeof Fastify;
export const pinoPackage = require('pino') as typeof Pino;

/**
 * node:http's status texts and response class, required for the same reason: an ES import of
 * node:http reads each of its exports, and its lazy fetch-related ones load undici (~15 ms at start)
 * for nothing.
 */
export const { STATUS_CODES, ServerResponse } = require('node:http') as typeof Http;
