import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's schema compilers, loaded on first use instead of when the server is built. Fastify
 * requires Ajv (and fast-json-stringify) as it constructs a server and compiles every route's
 * params and query schemas before it listens: about 85 ms of a node's start-up, spent before
 * `/health` could answer. Here each route's validator is compiled by the very same compiler
 * (@fastify/ajv-compiler with the server's options, so coercion and error messages are unchanged)
 * the first time a request to that route needs it; `warm()` compiles them all ahead of need.
 *
 * Validators generated ahead of time (validators.generated.ts, `npm run gen:validators`: Ajv's own
 * standalone code for each route's schema, with the same options) are used as they are, and Ajv
 * is not loaded at all: after a start, loading Ajv and compiling JSON Schema's meta-schema were the
 * two largest turns of the node's thread (25-40 ms each after an idle start, 50-64 ms with the other
 * core busy), with a dozen more of 8-17 ms. A schema the generated file does not hold (changed since
 * it was generated: test/integration/route-validators.test.ts fails then) is compiled lazily, as
 * before.
 */

/** Fastify's own packages, resolved from fastify (whose dependencies they are). */
const fastifyRequire = createRequire(import.meta.resolve('fastify'));

type Validate = ((data: unknown) => unknown) & { errors?: unknown };
/** What fastify passes a validator compiler for each route and part of a request. */
interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart: string;
}
type Compile = (route: RouteSchema) => Validate;
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

/**
 * A generated validator: Ajv's standalone module source as a function of the CommonJS `require` it
 * resolves Ajv's small runtime helpers with (ajv/dist/runtime/...) and of its `module`.
 */
export type PrecompiledValidator = (require: (id: string) => unknown, module: { exports: unknown }) => void;

export interface CompilerOptions {
  /** Validators generated ahead of time, by key (keyWith; validators.generated.ts by default). */
  precompiled?: Readonly<Record<string, PrecompiledValidator>>;
  /**
   * Generation (scripts/gen-validators.ts): every validator is compiled by Ajv, none taken from
   * `precompiled`, and its standalone source is handed here with its key.
   */
  onSource?: (key: string, source: string) => void;
}

/** The JSON a builder's validators share in their keys' digests (computed once per builder). */
function builderJson(externalSchemas: unknown, options: unknown): string {
  return `${JSON.stringify(externalSchemas) ?? 'null'},${JSON.stringify(options) ?? 'null'}`;
}

/**
 * A validator's key: the route, the part of the request, and a digest of everything its code
 * depends on (the schema, and in `shared` the builder's shared schemas and compiler options: the
 * digest is of `[schema, externalSchemas, options]`), so a changed schema never meets a stale
 * generated validator.
 */
function keyWith(route: RouteSchema, shared: string): string {
  const digest = createHash('sha256')
    .update(`[${JSON.stringify(route.schema) ?? 'null'},${shared}]`)
    .digest('hex')
    .slice(0, 16);
  return `${route.method} ${route.url} ${route.httpPart} ${digest}`;
}

/** Requires from fastify's Ajv compiler package: Ajv's own copy, its runtime helpers, ajv-formats. */
let ajvCompilerRequire: NodeJS.Require | undefined;
function fromAjvCompiler(id: string): unknown {
  ajvCompilerRequire ??= createRequire(fastifyRequire.resolve('@fastify/ajv-compiler'));
  return ajvCompilerRequire(id);
}

/** Fastify's Ajv compiler keeps its Ajv instance under this symbol when asked for source code. */
const AJV_REFERENCE = Symbol.for('fastify.ajv-compiler.reference');

export function lazyCompilers(opts: CompilerOptions = {}): LazyCompilers {
  const onSource = opts.onSource;
  const precompiled = onSource === undefined ? opts.precompiled : undefined;
  // What generated validators require (Ajv's runtime helpers) comes from the compiler's own Ajv.
  const restore = (make: PrecompiledValidator): Validate => {
    const module = { exports: undefined as unknown };
    make(fromAjvCompiler, module);
    return module.exports as Validate;
  };
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
      // Generating: Ajv keeps each validator's source, and a `format` keyword's code requires the
      // formats from ajv-formats (Ajv's code options: neither changes what is valid).
      const buildOptions = counted && onSource !== undefined ? withSourceCode(options) : options;
      const compiler = () => (real ??= load()(externalSchemas, buildOptions));
      // Keys only where there is something to match them with or to hand them to.
      const shared = counted && (precompiled || onSource) ? builderJson(externalSchemas, options) : undefined;
      if (counted)
        preparing.push(
          () => selector === undefined && (load(), true),
          () => real === undefined && !required && (requireForBuild(), true),
          () => real === undefined && (compiler(), true),
        );
      return (route) => {
        const key = shared === undefined ? '' : keyWith(route, shared);
        const made = precompiled?.[key];
        if (made !== undefined) {
          // Made on first use as well: fastify asks for every route's as the server is built.
          let restored: Validate | undefined;
          return deferred(() => (restored ??= restore(made)));
        }
        let fn: Validate | undefined;
        const compile = () => {
          if (fn !== undefined) return fn;
          fn = compiler()(route);
          if (onSource !== undefined) sourceOf(real!, fn, key, onSource);
          pending.delete(compile);
          if (counted) compiled++;
          return fn;
        };
        if (counted) {
          total++;
          pending.add(compile);
        }
        return deferred(compile);
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

/**
 * A validator running the one `get` returns (made on first use), whose `errors` it passes on:
 * fastify reads them off the validator it was given after a failed validation.
 */
function deferred(get: () => Validate): Validate {
  const validate: Validate = (data) => {
    const f = get();
    const result = f(data);
    validate.errors = f.errors;
    return result;
  };
  return validate;
}

/** The compiler's options with Ajv's standalone code options added (generation only). */
function withSourceCode(options: unknown): unknown {
  const o = options as { customOptions?: { code?: object } };
  const { _ } = fromAjvCompiler('ajv') as { _: (s: TemplateStringsArray) => unknown };
  const formats = _`require("ajv-formats/dist/formats").fullFormats`;
  return {
    ...o,
    customOptions: { ...o.customOptions, code: { ...o.customOptions?.code, source: true, formats } },
  };
}

/** Hands `fn`'s standalone module source (Ajv's, from the Ajv that compiled it) to `onSource`. */
function sourceOf(
  compile: Compile,
  fn: Validate,
  key: string,
  onSource: (key: string, source: string) => void,
): void {
  const ajv = (compile as unknown as Record<symbol, { ajv: unknown } | undefined>)[AJV_REFERENCE]?.ajv;
  if (ajv === undefined) throw new Error('the validator compiler keeps no Ajv instance (code.source unset?)');
  const standalone = (
    fromAjvCompiler('ajv/dist/standalone') as { default: (ajv: unknown, fn: unknown) => string }
  ).default;
  onSource(key, standalone(ajv, fn));
}
