import type { JsonSchema } from '../route-table.ts';
import { ApiError } from '../errors.ts';

/** Schemas and helpers shared by the domain routes. */

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;

export const hex64 = { type: 'string', pattern: '^[0-9a-fA-F]{64}$' } as const;

export const addressParams: JsonSchema = {
  type: 'object',
  properties: { address: { ...hex64, description: 'account address, 64 hex' } },
  required: ['address'],
};

/** Bounds of 64-bit values in query parameters (a state-chain index; a nanosecond timestamp). */
export const U64_MAX = 2n ** 64n - 1n;
export const I64_MAX = 2n ** 63n - 1n;

/** What an integer query parameter must look like: ASCII digits and nothing else. */
export const DIGITS = '^[0-9]+$';

/**
 * An integer query parameter in the schema: exactly digits, no sign, point, exponent, `0x` or
 * whitespace. Declared as a string so fastify's validator never coerces it (as `integer` it would
 * take "1.0", "1e3", "-0", "0x10" or " 1" for numbers); the handler converts it with `queryInt`.
 */
export function digitsParam(description: string, defaultValue?: number | bigint): JsonSchema {
  return {
    type: 'string',
    pattern: DIGITS,
    ...(defaultValue === undefined ? {} : { default: String(defaultValue) }),
    description,
  };
}

/** An integer query parameter that `digitsParam` let through, as a bigint within [min, max]. */
export function queryBigInt(
  value: string | undefined,
  name: string,
  opts: { default: bigint; min?: bigint; max?: bigint },
): bigint {
  if (value === undefined) return opts.default;
  // The schema has checked it already; this holds the line for a route that forgot the schema.
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value))
    throw ApiError.badRequest(`invalid query parameter '${name}': must be digits only`);
  const v = BigInt(value);
  if (opts.min !== undefined && v < opts.min)
    throw ApiError.badRequest(`invalid query parameter '${name}': must be >= ${opts.min}`);
  if (opts.max !== undefined && v > opts.max)
    throw ApiError.badRequest(`invalid query parameter '${name}': must be <= ${opts.max}`);
  return v;
}

/** The same as a number (bounded by Number.MAX_SAFE_INTEGER at most, so exact). */
export function queryInt(
  value: string | undefined,
  name: string,
  opts: { default: number; min?: number; max?: number },
): number {
  return Number(
    queryBigInt(value, name, {
      default: BigInt(opts.default),
      min: opts.min === undefined ? undefined : BigInt(opts.min),
      max: BigInt(Math.min(opts.max ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)),
    }),
  );
}

/**
 * A `limit` query parameter: at least 1, `fallback` when absent, and clamped (not refused) above
 * MAX_LIMIT, as the contract says.
 */
export function queryLimit(value: string | undefined, fallback = DEFAULT_LIMIT): number {
  const v = queryBigInt(value, 'limit', { default: BigInt(fallback), min: 1n });
  return Number(v > BigInt(MAX_LIMIT) ? BigInt(MAX_LIMIT) : v);
}

export const limitParam = (fallback = DEFAULT_LIMIT): JsonSchema =>
  digitsParam(`entries to return, 1 or more (at most ${MAX_LIMIT} are returned)`, fallback);

export const pageQuery: JsonSchema = {
  type: 'object',
  properties: {
    offset: digitsParam('entries to skip', 0),
    limit: limitParam(),
  },
};

export interface Page {
  offset?: string;
  limit?: string;
}

/** Offset and limit with the contract's defaults; limits above the maximum are clamped to it. */
export function page(q: Page | undefined): { offset: number; limit: number } {
  return { offset: queryInt(q?.offset, 'offset', { default: 0 }), limit: queryLimit(q?.limit) };
}

/** The page `q` asks for of a list held in memory. */
export function paged<T>(items: readonly T[], q: Page | undefined): T[] {
  const { offset, limit } = page(q);
  return items.slice(offset, offset + limit);
}

export const errorSchema: JsonSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, retryable: { type: 'boolean' } },
  required: ['error'],
};

export const u64String = {
  type: 'string',
  pattern: '^[0-9]+$',
  description: 'integer as a decimal string',
} as const;
export const balancesSchema: JsonSchema = {
  type: 'object',
  additionalProperties: u64String,
  description: 'asset name to balance in micro-units',
};

/** Lowercased hex path parameter. */
export function lower(hex: string): string {
  return hex.toLowerCase();
}

/** Per-asset map of bigint balances as the contract's string-encoded, non-zero map. */
export function balanceMap(b: Record<string, bigint>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(b).sort(([a], [c]) => (a < c ? -1 : 1)))
    if (v !== 0n) out[k] = v.toString();
  return out;
}

export function notFound(what: string): ApiError {
  return ApiError.notFound(what);
}

/** An optional `since` query parameter (Unix ns, i64), as the routes that page by time read it. */
export function querySince(v: string | undefined): bigint | undefined {
  return v === undefined ? undefined : queryBigInt(v, 'since', { default: 0n, max: I64_MAX });
}

/** A request body that must be a JSON object of these fields only; a 400 otherwise. */
export function objectBody(body: unknown, fields: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw ApiError.badRequest('invalid request body: expected a JSON object');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !fields.includes(k));
  if (unknown.length > 0) throw ApiError.badRequest(`unknown field ${unknown[0]}`);
  return b;
}
