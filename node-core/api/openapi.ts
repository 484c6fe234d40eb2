import { STATUS_CODES } from 'node:http';
import { pathParamNames, toContractPath } from './route-table.ts';
import type { JsonSchema, RouteDef } from './route-table.ts';

/**
 * The OpenAPI 3.1 document of the API, generated from the route table (served at `GET /openapi.json`)
 * so that client generators and humans see exactly the routes the server registers.
 */
export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: OpenApiInfo;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
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

const errorRef = (description: string): unknown => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

export function buildOpenApi(routes: readonly RouteDef[], info: OpenApiInfo): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const path = toContractPath(route.path, route.wildcardName);
    const ops = (paths[path] ??= {});
    ops[route.method.toLowerCase()] = operationOf(route);
  }
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

function operationOf(route: RouteDef): OpenApiOperation {
  const op: OpenApiOperation = {
    operationId: operationId(route),
    summary: route.description,
    responses: responsesOf(route),
  };
  const parameters = [...pathParameters(route), ...queryParameters(route.schema?.querystring)];
  if (parameters.length > 0) op.parameters = parameters;
  const body = route.schema?.body;
  if (body !== undefined)
    op.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  if (route.auth === 'admin') op.security = [{ [BEARER_SCHEME]: [] }];
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

function responsesOf(route: RouteDef): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const declared = route.schema?.response ?? {};
  for (const [status, schema] of Object.entries(declared)) {
    responses[status] = {
      description: STATUS_CODES[Number(status)] ?? 'response',
      content: { 'application/json': { schema } },
    };
  }
  if (Object.keys(responses).length === 0) {
    responses['200'] = { description: 'OK', content: { 'application/json': { schema: {} } } };
  }
  if (route.auth === 'admin') {
    responses['401'] ??= errorRef('invalid or missing admin token');
    responses['403'] ??= errorRef('operator endpoint disabled: no admin token configured');
  }
  responses['429'] ??= errorRef('rate limit exceeded');
  responses['4XX'] ??= { $ref: '#/components/responses/Error' };
  responses['5XX'] ??= { $ref: '#/components/responses/Error' };
  return responses;
}
