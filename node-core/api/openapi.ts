import { STATUS_CODES } from '../cjs-packages.ts';
import { IDEMPOTENCY_KEY_PARAMETER, takesIdempotencyKey } from './idempotency.ts';
import { API_VERSION, PROXY_BASE, PROXY_ERROR_CODES } from './proxy.ts';
import { pathParamNames, toContractPath } from './route-table.ts';
import { TELL_USER_FIELD, TELL_USER_SCHEMA, tellsUser } from './tell-user.ts';
import type { JsonSchema, RouteDef } from './route-table.ts';

/**
 * The OpenAPI 3.1 documents of the API, generated from the route table so that client generators and
 * humans see exactly the routes the server registers: the node form at `GET /openapi.json`, the proxy
 * form (decisions D11; its own error schema and headers, server `/api/v1`) at `GET /api/v1/openapi.json`.
 */
export type ApiForm = 'node' | 'proxy';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  /** Deprecated routes (RouteDef.deprecated); their answers carry Deprecation, Sunset and Link. */
  deprecated?: true;
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: OpenApiInfo;
  /** Proxy form only: the base the paths are relative to. */
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
    /** Proxy form only: the headers every proxy response carries. */
    headers?: Record<string, unknown>;
  };
}

export const BEARER_SCHEME = 'bearer';

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', description: 'what went wrong, for humans' },
    retryable: { type: 'boolean', description: 'block rejections only: whether a retry may succeed' },
  },
};

/**
 * A refused block in the proxy form: the node's own answer, passed through unchanged (contract,
 * proxy form: errors the node returns as JSON pass through), so clients branch on `retryable`.
 */
const BLOCK_REFUSAL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error', 'retryable'],
  properties: {
    error: { type: 'string', description: 'why the block was refused' },
    retryable: {
      type: 'boolean',
      description: 'false: the block will never be taken; true (503): retry later',
    },
  },
};

/** The contract's proxy error body (Errors, proxy form). */
export const PROXY_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'status', 'message', 'hint', 'docs', 'openapi'],
      properties: {
        code: { type: 'string', enum: [...PROXY_ERROR_CODES], description: 'snake_case machine code' },
        status: { type: 'integer', description: 'the HTTP status' },
        message: { type: 'string', description: 'what happened' },
        hint: { type: 'string', description: 'what to do next' },
        docs: { type: 'string', description: 'link to the discovery document' },
        openapi: { type: 'string', description: 'link to this document' },
        retryable: {
          type: 'boolean',
          description: 'whether a retry may succeed, where the node says (a connection over its caps)',
        },
        upstream: { type: 'object', description: 'present when the node answered with a non-JSON error' },
      },
    },
  },
};

const integerHeader = (description: string): unknown => ({ description, schema: { type: 'integer' } });

/**
 * Headers of proxy responses (Retry-After: 429 only; the rate-limit ones only while rate limits are
 * on). `RateLimit-Policy` and `RateLimit` follow draft-ietf-httpapi-ratelimit-headers-11.
 */
const PROXY_HEADERS: Record<string, unknown> = {
  'X-API-Version': {
    description: 'major version of the API',
    schema: { type: 'string', const: String(API_VERSION) },
  },
  'RateLimit-Policy': {
    description:
      'the quota policy of this request\'s class, named "read", "write" or "probe": \'"<name>";q=<requests>;w=<window seconds>\' (a Structured Field List; absent when the node runs with rate limits off)',
    schema: { type: 'string', examples: ['"read";q=1000;w=5'] },
  },
  RateLimit: {
    description:
      "this client's standing under that policy: '\"<name>\";r=<requests left>;t=<seconds until full; on a 429, until the next request is allowed>'",
    schema: { type: 'string', examples: ['"read";r=997;t=1'] },
  },
  'RateLimit-Limit': integerHeader('requests per window (legacy form)'),
  'RateLimit-Remaining': integerHeader('requests left (legacy form)'),
  'RateLimit-Reset': integerHeader('seconds until the quota is full again (legacy form)'),
  'Retry-After': integerHeader('seconds to wait before retrying (429 only)'),
};
const PROXY_RESPONSE_HEADERS = Object.fromEntries(
  Object.keys(PROXY_HEADERS)
    .filter((h) => h !== 'Retry-After')
    .map((h) => [h, { $ref: `#/components/headers/${h}` }]),
);

const errorRef = (description: string): unknown => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** The node form's document by default; `form: 'proxy'` gives the proxy form's (same routes, relative to `/api/v1`). */
export function buildOpenApi(
  routes: readonly RouteDef[],
  info: OpenApiInfo,
  form: ApiForm = 'node',
  /** The server honours Idempotency-Key (idempotency.ts): document it on the routes that take it. */
  idempotencyKeys = false,
): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const path = toContractPath(route.path, route.wildcardName);
    const ops = (paths[path] ??= {});
    ops[route.method.toLowerCase()] = operationOf(route, form, idempotencyKeys);
  }
  if (form === 'node') {
    return {
      openapi: '3.1.0',
      info,
      paths,
      components: {
        schemas: { Error: ERROR_SCHEMA },
        responses: { Error: errorRef('error (node form)') },
        securitySchemes: { [BEARER_SCHEME]: { type: 'http', scheme: 'bearer' } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: PROXY_BASE, description: `proxy form, API version ${API_VERSION}` }],
    paths,
    components: {
      schemas: { Error: PROXY_ERROR_SCHEMA, BlockRefusal: BLOCK_REFUSAL_SCHEMA },
      responses: { Error: errorResponse('proxy', 'error (proxy form)') },
      securitySchemes: { [BEARER_SCHEME]: { type: 'http', scheme: 'bearer' } },
      headers: PROXY_HEADERS,
    },
  };
}

function operationOf(route: RouteDef, form: ApiForm, idempotencyKeys: boolean): OpenApiOperation {
  const op: OpenApiOperation = {
    operationId: operationId(route),
    summary: route.description,
    responses: responsesOf(route, form),
  };
  const parameters = [...pathParameters(route), ...queryParameters(route.schema?.querystring)];
  // Idempotency-Key (idempotency.ts): 409 while the key's first request runs, 422 for another request.
  if (idempotencyKeys && takesIdempotencyKey(route.method, route.path)) {
    parameters.push({ ...IDEMPOTENCY_KEY_PARAMETER });
    op.responses['409'] ??= errorResponse(form, 'the first request with this Idempotency-Key still runs');
    op.responses['422'] ??= errorResponse(form, 'Idempotency-Key already used for a different request');
  }
  if (parameters.length > 0) op.parameters = parameters;
  const body = route.schema?.body;
  if (body !== undefined)
    op.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  if (route.auth === 'admin') op.security = [{ [BEARER_SCHEME]: [] }];
  if (route.deprecated !== undefined) op.deprecated = true;
  return op;
}

/** `GET /accounts/:address/balance` to `get_accounts_address_balance`: stable and unique per route. */
function operationId(route: RouteDef): string {
  const words = toContractPath(route.path, route.wildcardName)
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
  return [route.method.toLowerCase(), ...words].join('_');
}

function propertiesOf(schema: JsonSchema | undefined): Record<string, JsonSchema> {
  const props = schema?.properties;
  return typeof props === 'object' && props !== null ? (props as Record<string, JsonSchema>) : {};
}

function requiredOf(schema: JsonSchema | undefined): ReadonlySet<string> {
  const req = schema?.required;
  return new Set(Array.isArray(req) ? req.filter((x): x is string => typeof x === 'string') : []);
}

/** A parameter object, lifting the schema's description to the parameter where OpenAPI expects it. */
function parameter(
  name: string,
  where: 'path' | 'query',
  required: boolean,
  schema: JsonSchema,
): OpenApiParameter {
  const p: OpenApiParameter = { name, in: where, required, schema };
  if (typeof schema.description === 'string') p.description = schema.description;
  return p;
}

/** Every path parameter, documented even when the route gave no schema for it (OpenAPI requires it). */
function pathParameters(route: RouteDef): OpenApiParameter[] {
  const props = propertiesOf(route.schema?.params);
  const wildcard = route.wildcardName ?? 'key';
  return pathParamNames(route.path).map((name) => {
    if (name !== '*') return parameter(name, 'path', true, props[name] ?? { type: 'string' });
    const schema = props['*'] ?? props[wildcard] ?? { type: 'string' };
    const p = parameter(wildcard, 'path', true, schema);
    p.description ??= 'rest of the path; may contain "/"';
    return p;
  });
}

function queryParameters(schema: JsonSchema | undefined): OpenApiParameter[] {
  const required = requiredOf(schema);
  return Object.entries(propertiesOf(schema)).map(([name, s]) =>
    parameter(name, 'query', required.has(name), s),
  );
}

/**
 * A successful answer's schema in the proxy form of a mutating route: with `tell_user` (tell-user.ts),
 * added to an object schema, else alongside it (the field is added to JSON object answers only).
 */
function withTellUser(schema: JsonSchema): JsonSchema {
  if (schema.type === 'object') {
    const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
    return {
      ...schema,
      properties: { ...(schema.properties as JsonSchema | undefined), [TELL_USER_FIELD]: TELL_USER_SCHEMA },
      required: [...required, TELL_USER_FIELD],
    };
  }
  return {
    anyOf: [
      {
        allOf: [
          schema,
          {
            type: 'object',
            properties: { [TELL_USER_FIELD]: TELL_USER_SCHEMA },
            required: [TELL_USER_FIELD],
          },
        ],
      },
      { ...schema, not: { type: 'object' } },
    ],
  };
}

function responsesOf(route: RouteDef, form: ApiForm): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const declared = route.schema?.response ?? {};
  const tells = form === 'proxy' && tellsUser(route);
  for (const [status, declaredSchema] of Object.entries(declared)) {
    const description = STATUS_CODES[Number(status)] ?? 'response';
    const ok = Number(status) >= 200 && Number(status) < 300;
    const schema = tells && ok ? withTellUser(declaredSchema) : declaredSchema;
    // Routes declare their errors in the node form; the proxy form wraps every error its own way,
    // but for a refused block, which passes through as the node answers it.
    const refusal =
      form === 'proxy' && route.blockSubmission === true && (status === '400' || status === '503');
    responses[status] = refusal
      ? withHeaders(form, {
          description,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/BlockRefusal' } } },
        })
      : form === 'proxy' && Number(status) >= 400
        ? { $ref: '#/components/responses/Error' }
        : withHeaders(form, { description, content: { 'application/json': { schema } } });
  }
  if (Object.keys(responses).length === 0) {
    responses['200'] = withHeaders(form, {
      description: 'OK',
      content: { 'application/json': { schema: tells ? withTellUser({}) : {} } },
    });
  }
  if (route.auth === 'admin') {
    responses['401'] ??= errorResponse(form, 'invalid or missing admin token');
    responses['403'] ??= errorResponse(form, 'operator endpoint disabled: no admin token configured');
  }
  responses['429'] ??= errorResponse(form, 'rate limit exceeded', { 'Retry-After': RETRY_AFTER_REF });
  responses['4XX'] ??= { $ref: '#/components/responses/Error' };
  responses['5XX'] ??= { $ref: '#/components/responses/Error' };
  return responses;
}

const RETRY_AFTER_REF = { $ref: '#/components/headers/Retry-After' };

/** An error response; the proxy form's carries its headers (and `extra` ones). */
function errorResponse(form: ApiForm, description: string, extra: Record<string, unknown> = {}): unknown {
  const response = errorRef(description) as Record<string, unknown>;
  return form === 'proxy' ? { ...response, headers: { ...PROXY_RESPONSE_HEADERS, ...extra } } : response;
}

function withHeaders(form: ApiForm, response: Record<string, unknown>): Record<string, unknown> {
  return form === 'proxy' ? { ...response, headers: PROXY_RESPONSE_HEADERS } : response;
}
