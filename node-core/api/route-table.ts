import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JsonValue } from '../protocol/json.ts';
import type { RateClass } from './rate-limit.ts';

/**
 * The route table: one list of route definitions drives the fastify routes, the `GET /` manifest and
 * the OpenAPI document, so the three can never disagree. Paths are written in fastify syntax
 * (`/accounts/:address`, trailing `*` for a rest-of-path parameter); the manifest and OpenAPI show
 * them contract style (`/accounts/{address}`).
 */
export type HttpMethod = 'GET' | 'POST';
export type AuthMode = 'none' | 'admin';
export type { RateClass };

/** A JSON Schema object (draft 2020-12 / OpenAPI 3.1 compatible subset is the safe choice). */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface RouteSchema {
  /** Path parameters; validated by fastify. A trailing `*` parameter is the property `'*'`. */
  readonly params?: JsonSchema;
  /** Query string; validated (and coerced, e.g. "10" to 10 for integer fields) by fastify. */
  readonly querystring?: JsonSchema;
  /**
   * Request body, for the OpenAPI document only: bodies are parsed by our lossless parser (bigint,
   * null-prototype objects), which a schema validator would coerce or reject; handlers validate them.
   */
  readonly body?: JsonSchema;
  /** Response body by status code (e.g. `{ 200: {...} }`), for the OpenAPI document. */
  readonly response?: Readonly<Record<number | string, JsonSchema>>;
}

/** Types a handler may declare for its request parts (see defineRoute). */
export interface RouteTypes {
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

type ParamsOf<T> = T extends { params: infer P } ? P : Record<string, string>;
type QueryOf<T> = T extends { query: infer Q } ? Q : Record<string, unknown>;
type BodyOf<T> = T extends { body: infer B } ? B : JsonValue | undefined;

/** The request a handler receives: `body` is the lossless JSON value (undefined on GET). */
export type ApiRequest<T extends RouteTypes = RouteTypes> = FastifyRequest<{
  Params: ParamsOf<T>;
  Querystring: QueryOf<T>;
  Body: BodyOf<T>;
}>;

export interface RouteDef<T extends RouteTypes = RouteTypes> {
  readonly method: HttpMethod;
  /** Fastify syntax: `/blocks/:hash`, `/statechain/kv/*`. */
  readonly path: string;
  /** One line; the manifest's description and the OpenAPI summary. */
  readonly description: string;
  readonly auth: AuthMode;
  /** Default: POST is write, /health and /ready are probe, everything else read. */
  readonly rateClass?: RateClass;
  readonly schema?: RouteSchema;
  /** Indent the JSON body (2 spaces), for humans reading it with curl. */
  readonly pretty?: boolean;
  /** A POST that takes no body (the tunnel): an absent body is no error. */
  readonly noBody?: boolean;
  /**
   * A block submission: every 400 it answers, from any layer (an unreadable body included), is a
   * deterministic refusal and says `retryable: false` (contract; issue #14).
   */
  readonly blockSubmission?: boolean;
  /** Send `Cache-Control: no-store` (liveness answers must never come from a cache). */
  readonly noStore?: boolean;
  /** Name of the trailing `*` parameter in the manifest and OpenAPI (default "key"). */
  readonly wildcardName?: string;
  /**
   * Marks the route deprecated (contract, Versioning 5): `deprecated: true` in the manifest, the
   * discovery document and the OpenAPI operation, and `Deprecation`, `Sunset` and `Link` headers on
   * every answer of the route, errors included. Checked when the table is built (defineRoutes).
   */
  readonly deprecated?: RouteDeprecation;
  /**
   * Returns the response body, serialized with stringifyJson (bigint stays exact). Set the status
   * with `reply.code()` (default 200). Throw ApiError for failures. Returning undefined sends no body.
   */
  handler(req: ApiRequest<T>, reply: FastifyReply): Promise<unknown>;
  /**
   * How the route differs in the proxy form (decisions D11), served under `/api/v1` and `/api`.
   * Without it the route is served there as is; the proxy's error wrapping and headers apply anyway.
   */
  readonly proxy?: ProxyForm<T>;
  /**
   * The one-line summary a person can read that the proxy form adds as `tell_user` to every JSON
   * object this mutating route answers with a 2xx (contract, Announced agent verbs; decisions D13).
   * A function, or an object when the summary needs the state from before the call. Without it, a
   * generic line from the description and the status (tell-user.ts). `false`: the route answers no
   * JSON (the tunnel's hijacked stream). Ignored on GET routes; never in the node form.
   */
  readonly tellUser?: TellUser<T> | TellUser<T>['text'] | false;
}

/** A mutating route's `tell_user` summary (RouteDef.tellUser). */
export interface TellUser<T extends RouteTypes = RouteTypes> {
  /**
   * Runs before the handler, on the parsed request: what the summary needs to know of the state
   * before the call (e.g. whether a block was already known). A throw here only loses `before`.
   */
  before?(req: ApiRequest<T>): unknown;
  /**
   * The summary of a 2xx JSON object answer (after the proxy adaptation): one line, at most
   * TELL_USER_MAX characters (longer ones are cut, newlines become spaces). A throw here gives the
   * generic line: the call itself succeeded.
   */
  text(
    answer: Readonly<Record<string, unknown>>,
    req: ApiRequest<T>,
    reply: FastifyReply,
    before: unknown,
  ): string;
}

/** A route's proxy-form adaptation: everything optional, anything left out is the node form's. */
export interface ProxyForm<T extends RouteTypes = RouteTypes> {
  /** Manifest, discovery and OpenAPI line of the proxy form, when its answer differs. */
  readonly description?: string;
  /**
   * Schema parts that replace the node form's, part by part (`response` as a whole): validation of
   * params and query, and the proxy OpenAPI document.
   */
  readonly schema?: RouteSchema;
  /** Answers instead of the node handler (e.g. 200 with an empty value where the node says 404). */
  handler?(req: ApiRequest<T>, reply: FastifyReply): Promise<unknown>;
  /**
   * Reshapes the body returned by `handler` if given, else by the node handler (thrown errors are
   * wrapped as proxy errors, never passed here; nor is an answer the handler sent itself).
   */
  transform?(body: unknown, req: ApiRequest<T>, reply: FastifyReply): unknown;
}

/** A deprecated route's dates and documentation. */
export interface RouteDeprecation {
  /** When the route was deprecated: a Date, or a date string (ISO 8601 or HTTP-date). */
  readonly since: Date | string;
  /** When it goes away: at least MIN_SUNSET_DAYS after `since`. */
  readonly sunset: Date | string;
  /** Where the deprecation is documented (what to use instead): an absolute URL or an absolute path. */
  readonly link: string;
}

/** The contract: the Sunset date is at least 90 days after the Deprecation date. */
export const MIN_SUNSET_DAYS = 90;
const DAY_MS = 86_400_000;

/**
 * The headers a deprecated route answers with: `Deprecation: @<unix seconds>` (RFC 9745, a
 * Structured Field Date), `Sunset: <IMF-fixdate>` (RFC 8594) and `Link: <url>; rel="deprecation"`
 * (RFC 9745). Throws when the dates are not dates, the sunset comes less than MIN_SUNSET_DAYS after
 * the deprecation, or the link is not a URL or an absolute path that fits in a header.
 */
export function deprecationHeaders(d: RouteDeprecation): Readonly<Record<string, string>> {
  const since = timeOf(d.since, 'deprecation date');
  const sunset = timeOf(d.sunset, 'sunset date');
  // Whole seconds, as both headers carry them.
  const sinceS = Math.floor(since / 1000);
  const sunsetS = Math.floor(sunset / 1000);
  if (sunsetS * 1000 < sinceS * 1000 + MIN_SUNSET_DAYS * DAY_MS) {
    throw new Error(
      `sunset ${new Date(sunset).toISOString()} is less than ${MIN_SUNSET_DAYS} days after the deprecation date ${new Date(since).toISOString()}`,
    );
  }
  if (typeof d.link !== 'string' || !isLinkTarget(d.link))
    throw new Error(`deprecation link ${JSON.stringify(d.link)} is not a URL or an absolute path`);
  return {
    deprecation: `@${sinceS}`,
    sunset: new Date(sunsetS * 1000).toUTCString(),
    link: `<${d.link}>; rel="deprecation"`,
  };
}

function timeOf(v: Date | string, what: string): number {
  const ms = v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw new Error(`${what} ${JSON.stringify(v)} is not a date`);
  return ms;
}

/** A URI reference a Link header can carry: http(s) URL or absolute path, no spaces, quotes or angle brackets. */
function isLinkTarget(link: string): boolean {
  if (!/^[\x21-\x7e]+$/.test(link) || /[<>"]/.test(link)) return false;
  if (link.startsWith('/')) return !link.startsWith('//');
  try {
    const u = new URL(link);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

export interface ManifestEntry {
  method: HttpMethod;
  path: string;
  description: string;
  /** Present (true) only on deprecated routes. */
  deprecated?: true;
}

/** Types a route's request parts for its handler, then erases them so routes fit in one table. */
export function defineRoute<T extends RouteTypes = RouteTypes>(def: RouteDef<T>): RouteDef {
  return def as unknown as RouteDef;
}

/**
 * Collects routes (single definitions or groups) into one table, in the given order, and checks it:
 * a duplicate route or a bad description is a programming error caught at start-up, not in production.
 */
export function defineRoutes(...items: readonly (RouteDef | readonly RouteDef[])[]): readonly RouteDef[] {
  const routes = items.flat() as RouteDef[];
  const seen = new Set<string>();
  for (const r of routes) {
    const where = `${String(r.method)} ${String(r.path)}`;
    if (r.method !== 'GET' && r.method !== 'POST')
      throw new Error(`route ${where}: method must be GET or POST`);
    if (!r.path.startsWith('/') || /[\s?#]/.test(r.path)) throw new Error(`route ${where}: bad path`);
    if (r.description.trim() === '' || /[\r\n]/.test(r.description)) {
      throw new Error(`route ${where}: description must be one non-empty line`);
    }
    if (r.auth !== 'none' && r.auth !== 'admin')
      throw new Error(`route ${where}: auth must be none or admin`);
    if (r.deprecated !== undefined) {
      try {
        deprecationHeaders(r.deprecated);
      } catch (e) {
        throw new Error(`route ${where}: ${(e as Error).message}`, { cause: e });
      }
    }
    // Two paths differing only in parameter names are the same route to the router.
    const shape = `${r.method} ${routeShape(r.path)}`;
    if (seen.has(shape)) throw new Error(`route ${where}: defined twice`);
    seen.add(shape);
  }
  return Object.freeze(routes);
}

/** The rate class of a request: the route's own, else POST is write, /health and /ready probe, else read. */
export function rateClassOf(method: string, path: string, explicit?: RateClass): RateClass {
  if (explicit !== undefined) return explicit;
  if (method !== 'GET' && method !== 'HEAD') return 'write';
  return path === '/health' || path === '/ready' ? 'probe' : 'read';
}

type PathToken =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'param'; readonly name: string }
  | { readonly kind: 'wildcard' };

/** Splits a fastify path into literal text, `:name` parameters (regex suffix dropped) and `*`. */
function tokenize(path: string): PathToken[] {
  const out: PathToken[] = [];
  let text = '';
  const flush = (): void => {
    if (text !== '') out.push({ kind: 'text', text });
    text = '';
  };
  let i = 0;
  while (i < path.length) {
    const c = path.charAt(i);
    if (c === ':' && path.charAt(i + 1) === ':') {
      text += ':'; // fastify's escape for a literal colon
      i += 2;
    } else if (c === ':') {
      let j = i + 1;
      while (j < path.length && /[A-Za-z0-9_$]/.test(path.charAt(j))) j++;
      flush();
      out.push({ kind: 'param', name: path.slice(i + 1, j) });
      if (path.charAt(j) === '(') j = skipRegex(path, j);
      i = j;
    } else if (c === '*') {
      flush();
      out.push({ kind: 'wildcard' });
      i++;
    } else {
      text += c;
      i++;
    }
  }
  flush();
  return out;
}

/** Index just past the parenthesized regex starting at `open`. */
function skipRegex(path: string, open: number): number {
  let depth = 0;
  for (let j = open; j < path.length; j++) {
    const c = path.charAt(j);
    if (c === '\\') j++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j + 1;
  }
  return path.length;
}

/** `/accounts/:address/balance` to `/accounts/{address}/balance`; `*` to `{<wildcardName>}`. */
export function toContractPath(path: string, wildcardName = 'key'): string {
  return tokenize(path)
    .map((t) => (t.kind === 'text' ? t.text : t.kind === 'param' ? `{${t.name}}` : `{${wildcardName}}`))
    .join('');
}

/** The path with parameter names erased: `/a/:x` and `/a/:y` are one route to the router. */
function routeShape(path: string): string {
  return tokenize(path)
    .map((t) => (t.kind === 'text' ? t.text : t.kind === 'param' ? ':' : '*'))
    .join('');
}

/** Parameter names in path order, as fastify names them in `req.params` (`'*'` for the wildcard). */
export function pathParamNames(path: string): string[] {
  return tokenize(path).flatMap((t) => (t.kind === 'param' ? [t.name] : t.kind === 'wildcard' ? ['*'] : []));
}

/** The manifest entries of `GET /`, in table order. */
export function buildManifest(routes: readonly RouteDef[]): ManifestEntry[] {
  return routes.map((r) => {
    const entry: ManifestEntry = {
      method: r.method,
      path: toContractPath(r.path, r.wildcardName),
      description: r.description,
    };
    if (r.deprecated !== undefined) entry.deprecated = true;
    return entry;
  });
}

function pathRegExp(path: string): RegExp {
  const body = tokenize(path)
    .map((t) =>
      t.kind === 'text' ? t.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : t.kind === 'param' ? '[^/]+' : '.*',
    )
    .join('');
  return new RegExp(`^${body}$`);
}

/**
 * Builds a lookup from a concrete URL path to the methods the table accepts there, so a request with
 * the wrong method can be told apart from one for a path that does not exist (405 vs 404).
 */
export function createMethodIndex(routes: readonly RouteDef[]): (urlPath: string) => HttpMethod[] {
  const compiled = routes.map((r) => ({ method: r.method, re: pathRegExp(r.path) }));
  return (urlPath) => {
    const methods = new Set<HttpMethod>();
    for (const c of compiled) if (c.re.test(urlPath)) methods.add(c.method);
    return [...methods].sort();
  };
}
