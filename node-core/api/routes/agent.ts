import type { LedgerNode } from '../../node.ts';
import { DEFAULT_AUDIT_MAX_ENTRIES, listAudit } from '../audit-log.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { digitsParam, I64_MAX, limitParam, queryBigInt, queryLimit } from './common.ts';

/**
 * Agent verbs (contract, Announced agent verbs; decisions D13). For now the audit log: every call made
 * with `X-Source: agent`, newest first (api/audit-log.ts; written by the hooks of api/idempotency.ts).
 */

const entrySchema: JsonSchema = {
  type: 'object',
  properties: {
    time_ns: { type: 'integer', description: 'when the call was answered, Unix ns (unique in the log)' },
    source: { type: 'string', const: 'agent' },
    method: { type: 'string' },
    route: { type: ['string', 'null'], description: 'the route pattern that served the call; null if none' },
    path: { type: 'string', description: 'the request path, without its query string' },
    idempotency_key: { type: 'string', description: 'the Idempotency-Key sent, if any' },
    status: { type: 'integer', description: 'the status answered' },
    error: { type: 'string', description: 'the error message answered, if any' },
    replayed: {
      type: 'boolean',
      const: true,
      description: 'an Idempotency-Key replay: the call did not run again',
    },
  },
  required: ['time_ns', 'source', 'method', 'route', 'path', 'status'],
};

export function agentRoutes(node: LedgerNode): RouteDef[] {
  return [
    defineRoute<{ query: { limit?: string; since?: string } }>({
      method: 'GET',
      path: '/agent/audit',
      description: `calls made with X-Source: agent, newest first (admin; since, limit; the last ${DEFAULT_AUDIT_MAX_ENTRIES} are kept)`,
      auth: 'admin',
      noStore: true,
      schema: {
        querystring: {
          type: 'object',
          properties: {
            limit: limitParam(),
            since: digitsParam('Unix ns: only entries answered after it'),
          },
        },
        response: { 200: { type: 'object', properties: { entries: { type: 'array', items: entrySchema } } } },
      },
      async handler(req) {
        const limit = queryLimit(req.query.limit);
        const since =
          req.query.since === undefined
            ? undefined
            : queryBigInt(req.query.since, 'since', { default: 0n, max: I64_MAX });
        return { entries: listAudit(node.store.agentAudit, { limit, since }) };
      },
    }),
  ];
}
