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

export const pageQuery: JsonSchema = {
  type: 'object',
  properties: {
    offset: { type: 'integer', minimum: 0, default: 0, description: 'entries to skip' },
    limit: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_LIMIT,
      description: `entries to return (at most ${MAX_LIMIT})`,
    },
  },
};

export interface Page {
  offset?: number;
  limit?: number;
}

/** Offset and limit with the contract's defaults; limits above the maximum are clamped to it. */
export function page(q: Page | undefined): { offset: number; limit: number } {
  return { offset: q?.offset ?? 0, limit: Math.min(q?.limit ?? DEFAULT_LIMIT, MAX_LIMIT) };
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
