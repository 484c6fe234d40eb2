import type { Socket } from 'node:net';
import { fastifyPackage, STATUS_CODES } from '../cjs-packages.ts';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseJson, stringifyJson } from '../protocol/json.ts';
import type { JsonValue } from '../protocol/json.ts';
import { ConnectionCaps, resolveConnectionLimits, serverTimeouts } from './connection-limits.ts';
import type { ConnectionLimitOptions } from './connection-limits.ts';
import { ErrorLog } from './error-log.ts';
import { type CompilerOptions, lazyCompilers } from './lazy-compilers.ts';
import { VALIDATORS } from './validators.generated.ts';
import { ApiError, toApiError } from './errors.ts';
import { installAgentHooks, withIdempotencyKeys } from './idempotency.ts';
import type { AgentApiOptions } from './idempotency.ts';
import { buildOpenApi, type OpenApiDocument } from './openapi.ts';
import {
  aliasToBase,
  API_VERSION_HEADER,
  discoveryDocument,
  discoveryEndpoints,
  isProxyPath,
  PROXY_ALIAS,
  proxyErrorBody,
  proxyMounts,
  proxyRouteOf,
} from './proxy.ts';
import { clientIp, RateLimiter, rateLimitFields } from './rate-limit.ts';
import type { RateLimitOptions } from './rate-limit.ts';
import {
  buildManifest,
  createMethodIndex,
  defineRoutes,
  deprecationHeaders,
  rateClassOf,
} from './route-table.ts';
import type { ApiRequest, AuthMode, RateClass, RouteDef } from './route-table.ts';
import { APP_HEADER } from './app-session.ts';
import { absoluteFormAuthority, createSecurity } from './security.ts';
import type { SecurityOptions } from './security.ts';

const { fastify: Fastify, LogController } = fastifyPackage;

/**
 * The node's HTTP server: fastify driven by the route table, with our lossless JSON on both sides,
 * and the D10 protections (Host check, CORS, admin token) plus rate limits applied before any route
 * code runs. Every table route is served twice (decisions D11): in the node form at its path, and in
 * the proxy form under `/api/v1` and `/api` (see proxy.ts), each with its own error shape, chosen by
 * the request's path in sendError. Knows nothing about the ledger.
 */
export interface ApiServerOptions {
  routes: readonly RouteDef[];
  /** A pino (or pino-compatible) logger; false or absent logs nothing. */
  logger?: FastifyBaseLogger | false;
  /** Log every request at info level (default false: a busy node would drown its log). */
  logRequests?: boolean;
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Time limits on receiving requests and caps on open connections (see connection-limits.ts). */
  connections?: ConnectionLimitOptions;
  /** Rate limits: on with defaults (true or absent) or with settings, or off (false: `--rate-limit off`). */
  rateLimit?: boolean | RateLimitOptions;
  security: SecurityOptions;
  /** Name and version shown by `GET /` and in the OpenAPI document. */
  info?: { name: string; version: string };
  /** More fields for the `GET /` manifest (network id, address...), computed per request. */
  manifestExtra?: () => Record<string, unknown>;
  /** Where Idempotency-Key answers and the agent audit log are kept (idempotency.ts); none: neither. */
  agent?: AgentApiOptions;
  /**
   * The route validators' source (lazy-compilers.ts): by default the generated ones
   * (validators.generated.ts), any other compiled by Ajv on first use; `onSource` generates them.
   */
  validators?: CompilerOptions;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const DEFAULT_INFO = { name: 'ledger-node', version: '0.0.0' };
/** Long enough for state-chain keys and hex hashes; fastify's default (100) would 404 them. */
const MAX_PARAM_LENGTH = 1024;

/** What the hooks need to know about the matched route (kept in fastify's per-route config). */
interface RouteMeta {
  readonly auth: AuthMode;
  readonly rateClass: RateClass;
  readonly pretty: boolean;
  readonly noStore: boolean;
  /** Deprecation, Sunset and Link, on every answer of a deprecated route (see deprecationHeaders). */
  readonly deprecation: Readonly<Record<string, string>> | undefined;
  readonly blockSubmission: boolean;
}

function metaOf(request: FastifyRequest): RouteMeta | undefined {
  return (request.routeOptions.config as { api?: RouteMeta }).api;
}

/** The path of a request target, also of an absolute-form one (`http://127.0.0.1/api/v1/node`). */
function pathOf(url: string): string {
  const authority = absoluteFormAuthority(url);
  const start = authority === undefined ? 0 : url.indexOf('//') + 2 + authority.length;
  const q = url.indexOf('?', start);
  const path = url.slice(start, q < 0 ? url.length : q);
  return path === '' ? '/' : path;
}

/**
 * Re-indents compact JSON text with 2 spaces, exactly as `JSON.stringify(v, null, 2)` lays it out.
 * Working on the text (not the value) keeps bigint digits and RawJson text as stringifyJson wrote them.
 */
export function indentJson(compact: string): string {
  const out: string[] = [];
  let depth = 0;
  const newline = (): string => '\n' + '  '.repeat(depth);
  for (let i = 0; i < compact.length; i++) {
    const c = compact.charAt(i);
    if (c === '"') {
      let j = i + 1;
      while (j < compact.length && compact.charAt(j) !== '"') j += compact.charAt(j) === '\\' ? 2 : 1;
      out.push(compact.slice(i, j + 1));
      i = j;
    } else if (c === '{' || c === '[') {
      let j = i + 1;
      while (/\s/.test(compact.charAt(j))) j++;
      if (compact.charAt(j) === (c === '{' ? '}' : ']')) {
        out.push(c, compact.charAt(j)); // empty container stays "{}" / "[]"
        i = j;
      } else {
        depth++;
        out.push(c, newline());
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out.push(newline(), c);
    } else if (c === ',') out.push(',', newline());
    else if (c === ':') out.push(': ');
    else if (!/\s/.test(c)) out.push(c); // whitespace inside RawJson text is re-laid out
  }
  return out.join('');
}

/** The response text of a value: stringifyJson (bigint exact), optionally indented. */
export function serializeJson(value: unknown, pretty = false): string {
  const compact = stringifyJson(value);
  return pretty ? indentJson(compact) : compact;
}

/**
 * The one place an error becomes a response: in the proxy form (`/api/...`) or the node form,
 * according to the request's path, whatever noticed the error (router, hook, parser, handler).
 */
function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  err: ApiError,
  pretty: boolean,
): FastifyReply {
  reply.code(err.status);
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  const proxy = isProxyPath(pathOf(request.url));
  // Errors raised before the onRequest hook (a malformed URL) did not get the header there.
  if (proxy) reply.headers(API_VERSION_HEADER);
  const body = proxy ? proxyErrorBody(err) : err.toBody();
  return reply.type(JSON_CONTENT_TYPE).send(serializeJson(body, pretty));
}

// Rejects bytes that are not UTF-8 instead of turning them into U+FFFD (a signed payload would then
// verify against text the client never sent).
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A request body as lossless JSON; any unreadable body is the one "invalid request body" error.
 * Numbers the node cannot write back exactly (1e400 is Infinity; 1e21 is an integer beyond 2^53 that
 * is not a bigint) are refused too (the parser's `exactNumbers`): accepted, they would make any
 * later response that echoes or stores them fail to serialize, turning bad input into a 500.
 */
function parseBody(raw: Buffer): { text: string; value: JsonValue } {
  try {
    const text = utf8.decode(raw);
    return { text, value: parseJson(text, { exactNumbers: true }) };
  } catch (e) {
    throw ApiError.invalidBody(e);
  }
}

/**
 * Answers malformed HTTP (bad request line, oversized headers, timeouts) in the node's JSON form
 * rather than fastify's, and returns the error answered (undefined when the client is gone). The
 * socket is all there is at this point: no request object exists yet.
 */
function answerClientError(err: Error & { code?: string }, socket: Socket): ApiError | undefined {
  if (err.code === 'ECONNRESET' || socket.destroyed) return undefined;
  const e =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ApiError('request_timeout')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('headers_too_large')
        : ApiError.badRequest('malformed HTTP request');
  const body = serializeJson(e.toBody());
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? ''}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  } else socket.destroy();
  return e;
}

/** How long after listening the route validators are compiled (see lazy-compilers.ts). */
const VALIDATOR_WARM_MS = 1_000;
/**
 * One step per turn (lazy-compilers.ts: Ajv's load and build are steps of their own): eight validators
 * at once, with Ajv's load, held the thread 100-120 ms.
 */
const VALIDATORS_PER_TURN = 1;

export function createApiServer(opts: ApiServerOptions): FastifyInstance {
  const info = opts.info ?? DEFAULT_INFO;
  const bodyLimit = opts.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const security = createSecurity(opts.security);
  const connectionLimits = resolveConnectionLimits(opts.connections);
  const timeouts = serverTimeouts(connectionLimits);

  const keyed = opts.agent !== undefined; // Idempotency-Key honoured: the documents say so
  const manifest = withIdempotencyKeys(buildManifest(opts.routes), keyed ? opts.routes : []);
  const builtins: RouteDef[] = [
    {
      method: 'GET',
      path: '/',
      description: 'this manifest: node identity and every endpoint',
      auth: 'none',
      pretty: true,
      handler: async () => ({
        name: info.name,
        version: info.version,
        ...opts.manifestExtra?.(),
        endpoints: manifest,
      }),
    },
    {
      method: 'GET',
      path: '/openapi.json',
      description: 'the OpenAPI 3.1 document of this API',
      auth: 'none',
      handler: async () => (openapi ??= buildOpenApi(nodeRoutes, docInfo, 'node', keyed)),
    },
  ];
  // Re-checked here even if the caller used defineRoutes: also catches a clash with the built-ins.
  const nodeRoutes = defineRoutes(builtins, opts.routes);
  // Both OpenAPI documents are built when first asked for, not before the server listens (6-13 ms
  // of start-up together); the route table they describe is fixed by then.
  const docInfo = { title: info.name, version: info.version };
  let openapi: OpenApiDocument | undefined;
  let proxyOpenapi: OpenApiDocument | undefined;

  // The proxy form: the same table with each route's proxy adaptation, paths relative to the base.
  const proxyBuiltins: RouteDef[] = [
    {
      method: 'GET',
      path: '/',
      description: 'discovery: identity, versioning policy and every endpoint with its auth class',
      auth: 'none',
      pretty: true,
      handler: async () => discoveryDocument(info, endpoints, opts.manifestExtra?.()),
    },
    {
      method: 'GET',
      path: '/openapi.json',
      description: 'the OpenAPI 3.1 document of the proxy form',
      auth: 'none',
      handler: async () => (proxyOpenapi ??= buildOpenApi(proxyRoutes, docInfo, 'proxy', keyed)),
    },
  ];
  const proxyRoutes = defineRoutes(proxyBuiltins, opts.routes.map(proxyRouteOf));
  // The discovery list flags deprecated routes as the manifest and the OpenAPI document do.
  const endpoints = withIdempotencyKeys(
    discoveryEndpoints(proxyRoutes).map((e, i) =>
      proxyRoutes[i]?.deprecated === undefined ? e : { ...e, deprecated: true },
    ),
    keyed ? proxyRoutes : [],
  );

  // /api and below are the proxy form's: a node route there would clash with it, or (under the
  // alias, which is rewritten to the base before routing) never be reached.
  const underProxy = nodeRoutes.find((r) => isProxyPath(r.path));
  if (underProxy !== undefined)
    throw new Error(`route ${underProxy.method} ${underProxy.path}: ${PROXY_ALIAS} is the proxy form's`);
  const allRoutes = defineRoutes(nodeRoutes, proxyRoutes.flatMap(proxyMounts));
  const methodsAt = createMethodIndex(allRoutes);
  // Created once the table is known good, so a rejected table leaves no sweep timer behind.
  const limiter =
    opts.rateLimit === false ? undefined : new RateLimiter(opts.rateLimit === true ? {} : opts.rateLimit);
  // Errors answered are logged, rate-limited: a client must not be able to flood the log.
  const errorLog = opts.logger === false || opts.logger === undefined ? undefined : new ErrorLog();

  const compilers = lazyCompilers({ precompiled: VALIDATORS, ...opts.validators });
  const app = Fastify({
    // Ajv loads and compiles on first use, not before the server listens (lazy-compilers.ts).
    schemaController: { compilersFactory: compilers.compilersFactory },
    loggerInstance: opts.logger === false ? undefined : opts.logger,
    logController: new LogController({ disableRequestLogging: opts.logRequests !== true }),
    bodyLimit,
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    // HEAD on every GET route, whoever registers it: the GET handler runs, its headers go out, its
    // body does not. The table's routes take HEAD themselves (registerRoute); this covers the GUI's
    // and the console's (fastify's HEAD routes share the GET route's config, so the hooks see the
    // same route and count it once, in its class).
    exposeHeadRoutes: true,
    // The alias is served as the versioned base (aliasToBase); request.originalUrl keeps the target
    // as sent, for the logs and for what an Idempotency-Key was first used with.
    rewriteUrl: (req) => aliasToBase(req.url ?? '/'),
    // Our Host check answers a missing Host in JSON; Node's own check would send a bare 400.
    http: { requireHostHeader: false, ...timeouts.http },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Errors the router raises before any hook runs (a bad %-escape, an overlong parameter).
    frameworkErrors: (err, request, reply) => {
      const e =
        err.code === 'FST_ERR_BAD_URL'
          ? ApiError.badRequest('malformed URL')
          : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? ApiError.badRequest('path parameter too long')
            : toApiError(err);
      errorLog?.answered(request.log, e, request);
      sendError(request as FastifyRequest, reply as FastifyReply, e, false);
    },
    clientErrorHandler: (err, socket) => {
      const e = answerClientError(err, socket);
      if (e !== undefined) errorLog?.answered(app.log, e);
    },
  });
  const caps = new ConnectionCaps(connectionLimits);
  caps.attach(app.server);

  // Every body, whatever its declared type (scripts often omit Content-Type), is read as bytes and
  // parsed as lossless JSON. fastify's own parsers would round big integers.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    // A body sent to an unknown path or with the wrong method is not worth parsing: answer 404/405.
    if (request.is404) {
      done(null, undefined);
      return;
    }
    try {
      const { text, value } = parseBody(body as Buffer);
      // Routes that hash the body byte for byte (state-chain op values) read the exact text here.
      (request as FastifyRequest & { rawBodyText?: string }).rawBodyText = text;
      done(null, value);
    } catch (e) {
      done(e as Error, undefined);
    }
  });

  // Runs for every request, matched or not, before the body is read. Order matters: a connection over
  // the caps is shed before any other work; the Host check comes next so a rebinding page learns
  // nothing (not even CORS headers); preflights are answered before rate limiting; the admin check
  // comes last so failed attempts still spend tokens.
  //
  // Proxy-form requests (`/api/...`) also get `X-API-Version` on every answer, and the `RateLimit*`
  // headers (rateLimitFields) on every answer that got past the Host check, a 429 included. With
  // limits off (`--rate-limit off`) there is no quota to report, so none are sent. Both forms spend
  // the same per-client buckets; the node form sends no rate-limit headers (the contract), only
  // Retry-After on a 429.
  // A callback hook, not an async one: it runs for every request, and a promise per request is
  // measurable at ingest rates.
  app.addHook('onRequest', (request, reply, done) => {
    const proxy = isProxyPath(pathOf(request.url));
    if (proxy) reply.headers(API_VERSION_HEADER);
    const meta = metaOf(request);
    // A deprecated route says so on every answer, whatever stops the request below.
    if (meta?.deprecation !== undefined) reply.headers(meta.deprecation);
    if (caps.isRefused(request.socket)) return done(ApiError.tooManyConnections());
    const hostError = security.checkRequestHost(request.raw);
    if (hostError !== undefined) return done(hostError);
    const cors = security.corsHeaders(request.headers.origin);
    if (cors !== undefined) reply.headers(cors);
    if (request.method === 'OPTIONS') {
      reply.code(204).send(); // answered: the request goes no further
      return undefined;
    }
    if (meta?.noStore === true) reply.header('cache-control', 'no-store');
    const rateClass = meta?.rateClass ?? rateClassOf(request.method, pathOf(request.url));
    if (limiter !== undefined) {
      const ip = clientIp(request.socket.remoteAddress, request.headers);
      const taken = limiter.take(ip, rateClass);
      if (proxy) reply.headers(rateLimitFields(rateClass, taken));
      if (!taken.ok) return done(ApiError.rateLimited(taken.retryAfterSeconds));
    }
    if (meta?.auth === 'admin') {
      const h = request.headers;
      const authError = security.checkAdmin(h.authorization, h.cookie, h[APP_HEADER]);
      if (authError !== undefined) return done(authError);
    }
    return done();
  });

  app.setErrorHandler((err, request, reply) => {
    let apiError = toApiError(err);
    // A block submission's body that could not even be read is refused for good like any other.
    if (metaOf(request)?.blockSubmission && apiError.status === 400 && apiError.retryable === undefined)
      apiError = ApiError.blockRefused(apiError.message);
    // The client sees only "internal error"; the cause goes to the log.
    errorLog?.answered(request.log, apiError, request);
    return sendError(request, reply, apiError, metaOf(request)?.pretty === true);
  });

  app.setNotFoundHandler(async (request) => {
    const allow = allowedMethods(methodsAt(pathOf(request.url)));
    throw allow.length > 0 ? ApiError.methodNotAllowed(allow) : ApiError.notFound();
  });

  // Idempotency-Key on mutating routes and the X-Source: agent audit log (preHandler and onSend hooks).
  if (opts.agent !== undefined)
    installAgentHooks(app, opts.agent, (auth) => security.checkAdmin(auth) === undefined);
  for (const route of allRoutes) registerRoute(app, route);

  // The validators are compiled a little after the server listens, a few per turn of the event
  // loop, so the first requests after a start wait neither for Ajv nor behind it; a request that
  // comes sooner compiles its own route's.
  let warming: NodeJS.Timeout | undefined;
  const warmSome = () => {
    warming = compilers.warm(VALIDATORS_PER_TURN) > 0 ? setTimeout(warmSome, 0).unref() : undefined;
  };
  app.addHook('onListen', async () => {
    // Generating (scripts/gen-validators.ts): every validator at once, its source wanted now.
    if (opts.validators?.onSource !== undefined) compilers.warm();
    else warming = setTimeout(warmSome, VALIDATOR_WARM_MS).unref();
  });
  app.addHook('onClose', async () => {
    clearTimeout(warming);
    limiter?.close();
    errorLog?.close();
  });
  return app;
}

/** The Allow header's methods: the table's, and HEAD wherever GET is served. */
function allowedMethods(methods: readonly string[]): string[] {
  return methods.includes('GET') ? [...methods, 'HEAD'].sort() : [...methods];
}

/**
 * A HEAD request to a route that took over the response (the chat event stream, hijacked): the
 * stream wrote its status and headers, and would now stay open for events a HEAD answer never
 * carries. It is ended here, headers only, which also closes the stream (its 'close' handler). An
 * event the stream writes before that 'close' would be a write after the end, emitted as an error
 * with no listener (a crash): for a HEAD answer there is nothing to deliver, so it is dropped.
 */
function endHeadStream(res: FastifyReply['raw']): void {
  if (!res.headersSent || res.writableEnded) return;
  res.on('error', () => undefined);
  res.end();
}

function registerRoute(app: FastifyInstance, route: RouteDef): void {
  const meta: RouteMeta = {
    auth: route.auth,
    rateClass: rateClassOf(route.method, route.path, route.rateClass),
    pretty: route.pretty === true,
    noStore: route.noStore === true,
    deprecation: route.deprecated === undefined ? undefined : deprecationHeaders(route.deprecated),
    blockSubmission: route.blockSubmission === true,
  };
  // Only params and query go to fastify's validator; see RouteSchema.body for why bodies do not.
  const schema: Record<string, unknown> = {};
  if (route.schema?.params !== undefined) schema.params = route.schema.params;
  if (route.schema?.querystring !== undefined) schema.querystring = route.schema.querystring;

  app.route({
    // HEAD with GET in one route, one context for both. Left to exposeHeadRoutes, HEAD would be a
    // second route of its own, built and readied like any other: 117 of the server's 296 routes.
    // Node's response to a HEAD request sends no body, whatever the handler answers; the headers are
    // the GET answer's, its Content-Length included.
    method: route.method === 'GET' ? ['GET', 'HEAD'] : route.method,
    url: route.path,
    schema,
    config: { api: meta },
    handler: async (request, reply) => {
      // A POST without any body never reached the parser (nothing to parse): still a bad body.
      if (route.method === 'POST' && request.body === undefined && route.noBody !== true)
        throw ApiError.invalidBody();
      const result = await route.handler(request as ApiRequest, reply);
      if (reply.sent) {
        if (request.method === 'HEAD') endHeadStream(reply.raw);
        return reply;
      }
      reply.type(JSON_CONTENT_TYPE);
      return reply.send(result === undefined ? undefined : serializeJson(result, meta.pretty));
    },
  });
}
