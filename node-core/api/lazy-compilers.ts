import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's schema compilers, loaded on first use instead of when the server is built. Fastify
 * requires Ajv (and fast-json-stringify) as it constructs a server and compiles every route's
 * params and query schemas before it listens: about 85 ms of a node's start-up, spent before
 * `/health` could answer. Here each route's validator is compiled by the very same compiler
 * (@fastify/ajv-compiler with the server's options, so coercion and error messages are unchanged)
 * the first time a request to that route needs it; `warm()` compiles them all ahead of need.
 */

/** Fastify's own packages, resolved from fastify (whose dependencies they are). */
const fastifyRequire = createRequire(import.meta.resolve('fastify'));

type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type Compile = (route: unknown) => Validate;
type Builder = (externalSchemas: unknown, options: unknown) => Compile;
type Factory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

export interface LazyCompilers {
  /** For fastify's `schemaController.compilersFactory`. */
  compilersFactory: Factory;
  /** Compiles up to `most` validators not compiled yet (all by default); how many remain. */
  warm(most?: number): number;
  /** Validators compiled so far, and in all (tests). */
  readonly compiled: number;
  readonly total: number;
}

export function lazyCompilers(): LazyCompilers {
  const pending = new Set<() => void>();
  let compiled = 0;
  let total = 0;
  /** A compiler whose real counterpart (from `pkg`, built with fastify's arguments) comes on first use. */
  const lazy = (pkg: string, counted: boolean): Builder => {
    // One selector per server, as fastify makes it (it pools compilers by their options).
    let selector: Builder | undefined;
    return (externalSchemas, options) => {
      let real: Compile | undefined;
      const compiler = () =>
        (real ??= (selector ??= (fastifyRequire(pkg) as () => Builder)())(externalSchemas, options));
      return (route) => {
        let fn: Validate | undefined;
        const compile = () => {
          if (fn !== undefined) return fn;
          fn = compiler()(route);
          pending.delete(compile);
          if (counted) compiled++;
          return fn;
        };
        if (counted) {
          total++;
          pending.add(compile);
        }
        // Fastify reads `errors` off the validator it was given after a failed validation.
        const validate: Validate = (data) => {
          const f = compile();
          const result = f(data);
          validate.errors = f.errors;
          return result;
        };
        return validate;
      };
    };
  };
  return {
    // Fastify's types want Ajv's function types; these wrap exactly those.
    compilersFactory: {
      buildValidator: lazy('@fastify/ajv-compiler', true),
      // Routes give fastify no response schemas (answers are serialized by the route table), so this
      // is never expected to load; it is here so fastify does not load it at start either.
      buildSerializer: lazy('@fastify/fast-json-stringify-compiler', false),
    } as unknown as Factory,
    warm(most = Infinity) {
      for (const compile of [...pending].slice(0, most)) compile();
      return pending.size;
    },
    get compiled() {
      return compiled;
    },
    get total() {
      return total;
    },
  };
}
