import type { ApiError, ApiErrorCode, ErrorBody } from './errors.ts';
import { rateClassOf, toContractPath } from './route-table.ts';
import type { ApiRequest, AuthMode, HttpMethod, RouteDef } from './route-table.ts';
import { genericTellUser, oneLine, TELL_USER_FIELD, tellsUser, tellUserOf } from './tell-user.ts';

/**
 * The proxy form of the API (decisions D11): the node's own route table served again under
 * `/api/v1` and its alias `/api`, with the contract's JSON error wrapping, `X-API-Version` and
 * `RateLimit*` headers, each route's proxy adaptation (`RouteDef.proxy`), a discovery document at the
 * base and an OpenAPI document of its own. The node form at the root is untouched by all of this.
 */

export const API_VERSION = 1;
/** The versioned base; paths in the discovery and OpenAPI documents are relative to it. */
export const PROXY_BASE = `/api/v${API_VERSION}`;
/** The unversioned alias, which follows the current major version. */
export const PROXY_ALIAS = '/api';
export const PROXY_OPENAPI_PATH = `${PROXY_BASE}/openapi.json`;
/** Where the `docs` links of errors and of the discovery document point: the discovery document. */
export const PROXY_DOCS_PATH = PROXY_BASE;

/** Whether a request path (no query string) is served in the proxy form: `/api` and below. */
export function isProxyPath(urlPath: string): boolean {
  return urlPath === PROXY_ALIAS || urlPath.startsWith(`${PROXY_ALIAS}/`);
}

// ---- errors ---------------------------------------------------------------------------------------

/** The contract's proxy error codes. */
export const PROXY_ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'rate_limited',
  'upstream_error',
  'upstream_unavailable',
  'upstream_timeout',
] as const;
export type ProxyErrorCode = (typeof PROXY_ERROR_CODES)[number];

/**
 * The proxy code of each registry code. Typed over the whole registry, so a new ApiError code does not
 * compile until it is given one here. The status is always the node form's (see proxyErrorCode).
 */
const PROXY_CODE: { readonly [K in ApiErrorCode]: ProxyErrorCode } = {
  bad_request: 'bad_request',
  invalid_body: 'bad_request',
  payload_too_large: 'bad_request',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  host_not_allowed: 'forbidden',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  // The client did not finish sending its request in time: its own doing, not the node's.
  request_timeout: 'bad_request',
  // The request is well formed, only not now (a chat retry of a message that has not failed).
  conflict: 'bad_request',
  // Idempotency-Key: 409 while the key's first request runs, 422 when reused for another request.
  idempotency_in_progress: 'bad_request',
  idempotency_mismatch: 'bad_request',
  rate_limited: 'rate_limited',
  headers_too_large: 'bad_request',
  // 400, or 503 when retryable (see proxyErrorCode), as ApiError chooses the status.
  block_rejected: 'bad_request',
  missing_signature: 'unauthorized',
  signature_failed: 'forbidden',
  vm_not_found: 'not_found',
  exec_timeout: 'upstream_timeout',
  lease_not_active: 'not_found',
  exec_failed: 'upstream_error',
  tunnel_error: 'upstream_unavailable',
  internal: 'upstream_error',
  unavailable: 'upstream_unavailable',
};

/** What to do next, one sentence per code. */
export const PROXY_HINTS: { readonly [K in ProxyErrorCode]: string } = {
  bad_request: 'Fix the request as the message says; the OpenAPI document gives every parameter and body.',
  unauthorized: 'Send the admin token as "Authorization: Bearer <token>" (the admin-token file of the node).',
  forbidden: 'Use a host name the node accepts, or start the node with an admin token for operator routes.',
  not_found: 'Check the path and identifiers against the endpoint list of the discovery document.',
  method_not_allowed: 'Use one of the methods listed in the Allow header.',
  rate_limited: 'Wait the seconds given by Retry-After, then send requests more slowly.',
  upstream_error: 'Retry later; if the error persists, report it with the node log.',
  upstream_unavailable: 'Retry after a short wait: the node cannot do this right now.',
  upstream_timeout: 'Retry later, with a smaller request if possible.',
};

export function proxyErrorCode(err: ApiError): ProxyErrorCode {
  return err.code === 'block_rejected' && err.retryable === true
    ? 'upstream_unavailable'
    : PROXY_CODE[err.code];
}

export interface ProxyErrorBody {
  error: {
    code: ProxyErrorCode;
    status: number;
    message: string;
    hint: string;
    docs: string;
    openapi: string;
    /** Whether trying again may succeed, where the node says (a connection over the caps). */
    retryable?: boolean;
  };
}

/**
 * The proxy form's error body. "Errors that the node itself returns as JSON pass through unchanged"
 * (contract, proxy form): a refused block reaches the client as the node's `{error, retryable}`
 * with the same status, so clients branch on `retryable` at the top level as the contract says
 * (issue #14). Every other error is wrapped: the node form's message and status, the contract's code.
 */
export function proxyErrorBody(err: ApiError): ProxyErrorBody | ErrorBody {
  if (err.isBlockRefusal) return err.toBody();
  const code = proxyErrorCode(err);
  const body: ProxyErrorBody = {
    error: {
      code,
      status: err.status,
      message: err.message,
      hint: PROXY_HINTS[code],
      docs: PROXY_DOCS_PATH,
      openapi: PROXY_OPENAPI_PATH,
    },
  };
  if (err.retryable !== undefined) body.error.retryable = err.retryable;
  return body;
}

// ---- headers --------------------------------------------------------------------------------------

export const API_VERSION_HEADER = { 'x-api-version': String(API_VERSION) } as const;

// ---- the proxy table ------------------------------------------------------------------------------

/**
 * A table route as the proxy form serves it: its adaptation applied, and its rate class fixed from its
 * own path (once mounted under the prefix, `/health` would no longer be recognised as a probe).
 * Paths stay relative to the base; see proxyMounts.
 */
export function proxyRouteOf(route: RouteDef): RouteDef {
  const { proxy, ...nodeForm } = route;
  const rateClass = rateClassOf(route.method, route.path, route.rateClass);
  const adapted: RouteDef =
    proxy === undefined
      ? { ...nodeForm, rateClass }
      : {
          ...nodeForm,
          rateClass,
          description: proxy.description ?? route.description,
          schema: { ...route.schema, ...proxy.schema },
          handler: proxyHandler(route),
        };
  return tellsUser(route) ? { ...adapted, handler: withTellUser(adapted) } : adapted;
}

/** The route's answer in the proxy form: its proxy handler or the node's, then its transform. */
function proxyHandler(route: RouteDef): RouteDef['handler'] {
  const proxy = route.proxy;
  const answer: RouteDef['handler'] = (req, reply) =>
    proxy?.handler === undefined ? route.handler(req, reply) : proxy.handler(req, reply);
  const transform = proxy?.transform;
  if (transform === undefined) return answer;
  return async (req, reply) => {
    const body = await answer(req, reply);
    return reply.sent ? body : transform(body, req, reply);
  };
}

function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/**
 * A mutating route's handler with `tell_user` (contract, Announced agent verbs; decisions D13): every
 * 2xx JSON object it answers gains the route's one-line summary (RouteDef.tellUser), or a generic one.
 * Errors are thrown, never summarised; an answer the handler sent itself (a stream) is left alone.
 * The call has happened by then: a summary that fails gives the generic line, never an error.
 */
function withTellUser(route: RouteDef): RouteDef['handler'] {
  const tell = tellUserOf(route);
  const generic = (status: number) => genericTellUser(route.description, status);
  return async (req, reply) => {
    let before: unknown;
    try {
      before = tell?.before?.(req);
    } catch (e) {
      req.log.warn({ err: e }, 'tell_user: state before the call not read');
    }
    const body = await route.handler(req, reply);
    const status = reply.statusCode;
    if (reply.sent || !isJsonObject(body) || status < 200 || status >= 300) return body;
    let line: string;
    try {
      line =
        tell === undefined ? generic(status) : oneLine(tell.text(body, req as ApiRequest, reply, before));
    } catch (e) {
      req.log.warn({ err: e }, 'tell_user: summary failed, generic line used');
      line = generic(status);
    }
    if (line === '') line = generic(status);
    return { ...body, [TELL_USER_FIELD]: line };
  };
}

/**
 * Where a proxy route is registered: under the base; `/` is the base itself, with or without a
 * trailing slash. The alias is not registered again: its requests are rewritten to the base before
 * routing (aliasToBase), so each proxy route is one route to the router, not two. Registered twice,
 * the alias was a third of the server's routes (435 against 296, HEAD routes included), and building
 * the server took 155 against 113 ms of a start (medians of 14 alternating starts).
 */
export function proxyMounts(route: RouteDef): RouteDef[] {
  const paths = route.path === '/' ? [PROXY_BASE, `${PROXY_BASE}/`] : [PROXY_BASE + route.path];
  return paths.map((path) => ({ ...route, path }));
}

/** Whether `url` continues with a path boundary at `at`: its end, `/` or the query. */
function boundaryAt(url: string, at: number): boolean {
  return at === url.length || url[at] === '/' || url[at] === '?';
}

/**
 * The request target the router sees: an alias target (`/api`, `/api/...`, `/api?...`) as the same
 * target under the versioned base; the base's own targets and every other one unchanged. `/api/v2/x`
 * becomes `/api/v1/v2/x`, which is not found, as it was before under the alias.
 */
export function aliasToBase(url: string): string {
  if (!url.startsWith(PROXY_ALIAS) || !boundaryAt(url, PROXY_ALIAS.length)) return url;
  if (url.startsWith(PROXY_BASE) && boundaryAt(url, PROXY_BASE.length)) return url;
  return PROXY_BASE + url.slice(PROXY_ALIAS.length);
}

// ---- discovery ------------------------------------------------------------------------------------

/** Who may call an endpoint: anyone, the operator (admin token), or the holder of a key (a signed proof). */
export type AuthClass = AuthMode | 'proof';

export interface DiscoveryEndpoint {
  method: HttpMethod;
  /** Relative to the base, contract style (`/accounts/{address}/balance`). */
  path: string;
  description: string;
  auth: AuthClass;
  /** Its successful answers carry `tell_user`, a one-line summary (mutating routes; tell-user.ts). */
  tell_user?: true;
}

export interface DiscoveryDocument {
  name: string;
  version: string;
  api_version: number;
  base: string;
  alias: string;
  openapi: string;
  docs: string;
  versioning: {
    scheme: string;
    policy: string;
    previous_major_supported_days: number;
    deprecation: string;
    deprecation_headers: string[];
  };
  endpoints: DiscoveryEndpoint[];
  [extra: string]: unknown;
}

/** The contract's versioning rules, published at the base. */
export const VERSIONING = {
  scheme: `URL path: the major version is the first segment after ${PROXY_ALIAS} (currently v${API_VERSION}); ${PROXY_ALIAS} alone follows the current major`,
  policy:
    'within a major version changes are additive only (new endpoints, new optional fields, new enum values) and clients ignore unknown fields; removing or renaming a field, changing a type or a meaning needs a new major, which keeps the previous one working for at least 180 days',
  previous_major_supported_days: 180,
  deprecation:
    'deprecated operations are flagged deprecated: true in the OpenAPI document; their responses carry Deprecation (@unix-seconds), Sunset (at least 90 days later) and Link (rel=deprecation)',
  deprecation_headers: ['Deprecation', 'Sunset', 'Link'],
};

export function discoveryEndpoints(routes: readonly RouteDef[]): DiscoveryEndpoint[] {
  return routes.map((r) => ({
    method: r.method,
    path: toContractPath(r.path, r.wildcardName),
    description: r.description,
    auth: r.auth,
    ...(tellsUser(r) ? { tell_user: true as const } : {}),
  }));
}

/**
 * The document at `GET /api/v1`: identity, links, versioning policy and every proxy endpoint with its
 * auth class. `extra` (network id, node address...) comes first so it can never mask a contract field.
 */
export function discoveryDocument(
  info: { name: string; version: string },
  endpoints: DiscoveryEndpoint[],
  extra: Record<string, unknown> = {},
): DiscoveryDocument {
  return {
    ...extra,
    name: info.name,
    version: info.version,
    api_version: API_VERSION,
    base: PROXY_BASE,
    alias: PROXY_ALIAS,
    openapi: PROXY_OPENAPI_PATH,
    docs: PROXY_DOCS_PATH,
    versioning: VERSIONING,
    endpoints,
  };
}
