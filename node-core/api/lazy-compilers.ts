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
  /**
   * Works `most` steps ahead of need (all by default) and returns how many validators remain: before
   * the first validator, loading the compiler's package, loading what its build requires and building
   * the compiler are a step each, then each validator not compiled yet is one.
   */
  warm(most?: number): number;
  /** Validators compiled so far, and in all (tests). */
  readonly compiled: number;
  readonly total: number;
}

export function lazyCompilers(): LazyCompilers {
  const pending = new Set<() => void>();
  /**
   * Ahead of a compiler's first validator, its package's load, the load of the packages its build
   * requires, and its build, each a step of `warm` (true when it had work to do): in one turn with the
   * first validator (which compiles JSON Schema's meta-schema too), they held the thread 90-136 ms
   * after an idle start, 98-110 ms during a catch-up.
   */
  const preparing: (() => boolean)[] = [];
  let compiled = 0;
  let total = 0;
  /**
   * A compiler whose real counterpart (from `pkg`, built with fastify's arguments) comes on first use.
   * `buildRequires`: packages `pkg` requires only as it builds a compiler (loaded a step ahead).
   */
  const lazy = (pkg: string, counted: boolean, buildRequires: readonly string[] = []): Builder => {
    // One selector per server, as fastify makes it (it pools compilers by their options).
    let selector: Builder | undefined;
    let required = buildRequires.length === 0;
    const requireForBuild = () => {
      required = true;
      const pkgRequire = createRequire(fastifyRequire.resolve(pkg));
      // Only a head start: the build requires them itself, and fails there if it must.
      for (const name of buildRequires) {
        try {
          pkgRequire(name);
        } catch {
          // left to the build
        }
      }
    };
    return (externalSchemas, options) => {
      let real: Compile | undefined;
      const load = () => (selector ??= (fastifyRequire(pkg) as () => Builder)());
      const compiler = () => (real ??= load()(externalSchemas, options));
      if (counted)
        preparing.push(
          () => selector === undefined && (load(), true),
          () => real === undefined && !required && (requireForBuild(), true),
          () => real === undefined && (compiler(), true),
        );
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
      // Its build adds ajv-formats, which loads a copy of Ajv of its own (23-30 ms of the build).
      buildValidator: lazy('@fastify/ajv-compiler', true, ['ajv-formats']),
      // Routes give fastify no response schemas (answers are serialized by the route table), so this
      // is never expected to load; it is here so fastify does not load it at start either.
      buildSerializer: lazy('@fastify/fast-json-stringify-compiler', false),
    } as unknown as Factory,
    warm(most = Infinity) {
      let steps = most;
      while (steps > 0 && pending.size > 0 && preparing.length > 0) if (preparing.shift()!()) steps--;
      for (const compile of [...pending].slice(0, steps)) compile();
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
