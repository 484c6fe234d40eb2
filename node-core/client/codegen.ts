/**
 * Writes the client's route types (api-routes.generated.ts) from the node's two OpenAPI documents,
 * which the node builds from its route table: so the client's types, the OpenAPI document and the
 * routes the server registers come from one table. `npm run gen:client-routes` runs it against a
 * fresh node; test/integration/client-route-types.test.ts fails when the committed file and a fresh node's
 * documents disagree. Pure (string in, string out): no Node built-ins.
 */

type Schema = Readonly<Record<string, unknown>>;

export interface OpenApiLike {
  paths: Record<string, Record<string, OperationLike>>;
  components?: { schemas?: Record<string, Schema> };
}

interface OperationLike {
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, unknown>;
  security?: unknown[];
  deprecated?: boolean;
}

/** A TypeScript type for a JSON Schema, as our lossless parser reads JSON (big integers as bigint). */
export function schemaToType(schema: unknown, refs: Record<string, Schema> = {}, depth = 0): string {
  if (typeof schema !== 'object' || schema === null) return 'JsonValue';
  const s = schema as Schema;
  if (depth > 12) return 'JsonValue';
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace(/^#\/components\/schemas\//, '');
    return refs[name] ? schemaToType(refs[name], refs, depth + 1) : 'JsonValue';
  }
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return union(s.enum.map(literal));
  for (const k of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(s[k])) return union((s[k] as unknown[]).map((x) => schemaToType(x, refs, depth + 1)));
  }
  if (Array.isArray(s.allOf)) {
    return (s.allOf as unknown[]).map((x) => `(${schemaToType(x, refs, depth + 1)})`).join(' & ');
  }
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : s.type === undefined ? [] : [s.type];
  if (types.length === 0) {
    if (s.properties !== undefined || s.additionalProperties !== undefined) return objectType(s, refs, depth);
    if (s.items !== undefined) return arrayType(s, refs, depth);
    return 'JsonValue';
  }
  return union(
    types.map((t) => {
      switch (t) {
        case 'string':
          return 'string';
        case 'integer':
          return 'number | bigint';
        case 'number':
          return 'number';
        case 'boolean':
          return 'boolean';
        case 'null':
          return 'null';
        case 'array':
          return arrayType(s, refs, depth);
        case 'object':
          return objectType(s, refs, depth);
        default:
          return 'JsonValue';
      }
    }),
  );
}

function arrayType(s: Schema, refs: Record<string, Schema>, depth: number): string {
  return `Array<${s.items === undefined ? 'JsonValue' : schemaToType(s.items, refs, depth + 1)}>`;
}

function objectType(s: Schema, refs: Record<string, Schema>, depth: number): string {
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const fields = Object.keys(props).map(
    (k) => `${propName(k)}${required.has(k) ? '' : '?'}: ${schemaToType(props[k], refs, depth + 1)}`,
  );
  const extra = s.additionalProperties;
  if (extra === undefined || extra === true) fields.push('[key: string]: unknown');
  else if (typeof extra === 'object' && extra !== null)
    fields.push(`[key: string]: ${schemaToType(extra, refs, depth + 1)}`);
  return fields.length === 0 ? 'Record<string, never>' : `{ ${fields.join('; ')} }`;
}

function propName(k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k);
}

function literal(v: unknown): string {
  return v === null ? 'null' : JSON.stringify(v);
}

function union(parts: string[]): string {
  const uniq = [...new Set(parts)];
  return uniq.length === 1 ? uniq[0]! : uniq.map((p) => (p.includes('=>') ? `(${p})` : p)).join(' | ');
}

export interface RouteInfo {
  method: 'GET' | 'POST';
  /** Contract path: `/accounts/{address}/balance`. */
  path: string;
  /** The admin token (or an app session) is needed. */
  admin: boolean;
  /** The route takes an Idempotency-Key. */
  idempotent: boolean;
}

function operations(doc: OpenApiLike): [string, OperationLike, RouteInfo][] {
  const out: [string, OperationLike, RouteInfo][] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      const method = m.toUpperCase() as 'GET' | 'POST';
      out.push([
        `${method} ${path}`,
        op,
        {
          method,
          path,
          admin: Array.isArray(op.security) && op.security.length > 0,
          idempotent: (op.parameters ?? []).some(
            (p) => p.in === 'header' && /^idempotency-key$/i.test(p.name),
          ),
        },
      ]);
    }
  }
  return out;
}

function routeType(op: OperationLike, refs: Record<string, Schema>): string {
  const params = (op.parameters ?? []).filter((p) => p.in === 'path');
  const query = (op.parameters ?? []).filter((p) => p.in === 'query');
  const fields = (ps: typeof params): string =>
    ps.length === 0
      ? 'Record<string, never>'
      : `{ ${ps.map((p) => `${propName(p.name)}${p.required ? '' : '?'}: ${schemaToType(p.schema, refs)}`).join('; ')} }`;
  const body = op.requestBody?.content?.['application/json']?.schema;
  const ok = Object.entries(op.responses ?? {})
    .filter(([status]) => /^2[0-9][0-9]$/.test(status))
    .map(([, r]) => {
      const content = (r as { content?: Record<string, { schema?: Schema }> }).content;
      const json = content?.['application/json'];
      return json === undefined ? 'undefined' : schemaToType(json.schema, refs);
    });
  return [
    `    params: ${fields(params)};`,
    `    query: ${fields(query)};`,
    `    body: ${body === undefined ? 'undefined' : schemaToType(body, refs)};`,
    `    response: ${ok.length === 0 ? 'undefined' : union(ok)};`,
  ].join('\n');
}

function routesInterface(name: string, doc: OpenApiLike): string {
  const refs = doc.components?.schemas ?? {};
  const entries = operations(doc).map(
    ([key, op]) => `  ${JSON.stringify(key)}: {\n${routeType(op, refs)}\n  };`,
  );
  return `export interface ${name} {\n${entries.join('\n')}\n}\n`;
}

/** The whole generated module for the node form and the proxy form documents. */
export function generateRouteTypes(nodeDoc: OpenApiLike, proxyDoc: OpenApiLike): string {
  const info = operations(nodeDoc).map(([, , r]) => r);
  const proxyKeys = operations(proxyDoc).map(([k]) => k);
  return [
    "// Generated by `npm run gen:client-routes` from the node's OpenAPI documents (node-core/client/codegen.ts).",
    '// Do not edit: test/integration/client-route-types.test.ts fails when this file and the route table disagree.',
    "import type { JsonValue } from '../protocol/json.ts';",
    '',
    '/** Every route of the node form, by `METHOD /contract/path`. */',
    routesInterface('NodeRoutes', nodeDoc),
    '/** Every route of the proxy form (served under /api/v1), by `METHOD /contract/path`. */',
    routesInterface('ProxyRoutes', proxyDoc),
    '/** What the client needs to know of each route at run time. */',
    `export const ROUTES = ${JSON.stringify(info, null, 2)} as const;`,
    '',
    '/** The proxy form serves these routes (under /api/v1). */',
    `export const PROXY_ROUTE_KEYS = ${JSON.stringify(proxyKeys, null, 2)} as const;`,
    '',
  ].join('\n');
}
