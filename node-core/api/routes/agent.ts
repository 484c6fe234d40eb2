import type { LedgerNode } from '../../node.ts';
import {
  type CheckpointInfo,
  CheckpointNotFoundError,
  type Checkpoints,
  CHECKPOINT_ID_PATTERN,
  DEFAULT_MAX_CHECKPOINTS,
  MAX_CHECKPOINT_NAME,
  type StateDiff,
} from '../../agent/checkpoints.ts';
import { DEFAULT_AUDIT_MAX_ENTRIES, listAudit } from '../audit-log.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { digitsParam, errorSchema, limitParam, queryLimit, querySince, objectBody } from './common.ts';

/**
 * Agent verbs (contract, Announced agent verbs; decisions D13): the audit log of every call made with
 * `X-Source: agent`, newest first (api/audit-log.ts; written by the hooks of api/idempotency.ts), and
 * checkpoints of the node's local, non-consensus state with their diff and rollback (issue #14;
 * agent/checkpoints.ts). All of them need the admin token: they read and rewrite a user's local state.
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

const checkpointSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: CHECKPOINT_ID_PATTERN.source },
    name: { type: 'string' },
    created_at: { type: 'integer', description: 'Unix ns' },
    counts: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'entries captured per area (chat, directory, lease_holds)',
    },
    automatic: { type: 'boolean', description: 'made by a rollback before it applied: its undo' },
  },
  required: ['id', 'name', 'created_at', 'counts', 'automatic'],
};

const notCoveredSchema: JsonSchema = {
  type: 'array',
  description: 'local state no checkpoint covers yet, and why',
  items: {
    type: 'object',
    properties: { area: { type: 'string' }, reason: { type: 'string' } },
    required: ['area', 'reason'],
  },
};

const diffSchema: JsonSchema = {
  type: 'object',
  description: 'by area (chat, directory, lease_holds): entries added, removed and changed, by key',
  additionalProperties: {
    type: 'object',
    properties: {
      added: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: {} } } },
      removed: {
        type: 'array',
        items: { type: 'object', properties: { key: { type: 'string' }, value: {} } },
      },
      changed: {
        type: 'array',
        items: { type: 'object', properties: { key: { type: 'string' }, from: {}, to: {} } },
      },
    },
    required: ['added', 'removed', 'changed'],
  },
};

const touched = {
  ledger_touched: { type: 'boolean', const: false, description: 'the ledger is never touched' },
  statechain_touched: { type: 'boolean', const: false, description: 'the state chain is never touched' },
};

type Fields = Readonly<Record<string, unknown>>;

/** The checkpoint's name from a request body, or a 400. */
function checkpointName(body: unknown, now: bigint): string {
  const b = objectBody(body, ['name']);
  if (b.name === undefined) return `checkpoint ${new Date(Number(now / 1_000_000n)).toISOString()}`;
  if (typeof b.name !== 'string' || b.name.trim() === '' || [...b.name].length > MAX_CHECKPOINT_NAME)
    throw ApiError.badRequest(
      `invalid name: expected a non-empty string of at most ${MAX_CHECKPOINT_NAME} characters`,
    );
  if ([...b.name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw ApiError.badRequest('invalid name: control characters');
  return b.name;
}

function rollbackBody(body: unknown): { checkpoint: string; dryRun: boolean } {
  const b = objectBody(body, ['checkpoint', 'dry_run']);
  if (b.checkpoint === undefined || b.checkpoint === null) throw ApiError.badRequest('missing checkpoint');
  if (typeof b.checkpoint !== 'string' || !CHECKPOINT_ID_PATTERN.test(b.checkpoint))
    throw ApiError.badRequest('invalid checkpoint: expected a checkpoint id');
  if (b.dry_run !== undefined && typeof b.dry_run !== 'boolean')
    throw ApiError.badRequest('invalid dry_run: expected true or false');
  return { checkpoint: b.checkpoint, dryRun: b.dry_run === true };
}

function notFound(e: unknown): never {
  if (e instanceof CheckpointNotFoundError) throw ApiError.notFound(e.message);
  throw e;
}

const plural = (n: number, noun: readonly [string, string]) => `${n} ${n === 1 ? noun[0] : noun[1]}`;

/** "12 chat messages, 3 directory entries, 1 lease hold" (empty areas left out), or "nothing yet". */
export function countsText(checkpoints: Checkpoints, counts: Fields): string {
  const said = checkpoints.areas
    .map((a) => [Number(counts[a.name] ?? 0), a] as const)
    .filter(([n]) => n > 0)
    .map(([n, a]) => plural(n, a.noun));
  return said.length === 0 ? 'nothing yet' : said.join(', ');
}

/** "2 chat messages removed, 1 restored; 1 directory entry removed" (a rollback's diff), or "nothing to change". */
export function changesText(checkpoints: Checkpoints, diff: Fields): string {
  const parts: string[] = [];
  for (const area of checkpoints.areas) {
    const d = diff[area.name] as { added?: unknown[]; removed?: unknown[]; changed?: unknown[] } | undefined;
    const counts = [
      [d?.removed?.length ?? 0, 'removed'],
      [d?.added?.length ?? 0, 'restored'],
      [d?.changed?.length ?? 0, 'changed back'],
    ] as const;
    const said = counts
      .filter(([n]) => n > 0)
      .map(([n, what], i) => (i === 0 ? `${plural(n, area.noun)} ${what}` : `${n} ${what}`));
    if (said.length > 0) parts.push(said.join(', '));
  }
  return parts.length === 0 ? 'nothing to change' : parts.join('; ');
}

function checkpointTellUser(checkpoints: Checkpoints) {
  return (answer: Fields): string =>
    `Checkpoint '${String(answer.name)}' saved: ${countsText(checkpoints, (answer.counts ?? {}) as Fields)}`;
}

function rollbackTellUser(checkpoints: Checkpoints) {
  return (answer: Fields): string => {
    const cp = (answer.checkpoint ?? {}) as Fields;
    const target = `checkpoint ${String(cp.id)} ('${String(cp.name)}')`;
    const changes = changesText(checkpoints, (answer.diff ?? {}) as Fields);
    if (answer.applied !== true) return `Would roll back to ${target}: ${changes}; nothing changed yet`;
    const undo = (answer.undo_checkpoint ?? {}) as Fields;
    return `Rolled back to ${target}: ${changes}; undo with checkpoint ${String(undo.id)}`;
  };
}

const totals = (diff: StateDiff) => {
  let added = 0;
  let removed = 0;
  let changed = 0;
  for (const d of Object.values(diff)) {
    added += d.added.length;
    removed += d.removed.length;
    changed += d.changed.length;
  }
  return { added, removed, changed };
};

const totalsSchema: JsonSchema = {
  type: 'object',
  properties: { added: { type: 'integer' }, removed: { type: 'integer' }, changed: { type: 'integer' } },
};

export function agentRoutes(node: LedgerNode): RouteDef[] {
  const info = (c: CheckpointInfo) => ({ ...c });
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
        const since = querySince(req.query.since);
        return { entries: listAudit(node.store.agentAudit, { limit, since }) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/agent/checkpoints',
      description: `capture the node's local state (chat store, directory cache, lease holds), named; the last ${DEFAULT_MAX_CHECKPOINTS} are kept (admin)`,
      auth: 'admin',
      schema: {
        body: {
          type: 'object',
          properties: {
            name: {
              type: 'string',
              maxLength: MAX_CHECKPOINT_NAME,
              description: 'default: "checkpoint <time>"',
            },
          },
        },
        response: {
          201: {
            type: 'object',
            properties: { ...(checkpointSchema.properties as object), not_covered: notCoveredSchema },
            required: [...(checkpointSchema.required as string[]), 'not_covered'],
          },
          400: errorSchema,
        },
      },
      tellUser: (answer) => checkpointTellUser(node.checkpoints)(answer),
      async handler(req, reply) {
        const name = checkpointName(req.body, node.now());
        const created = await node.checkpoints.create(name);
        reply.code(201);
        return { ...info(created), not_covered: node.checkpoints.notCovered };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/agent/checkpoints',
      description: 'checkpoints of the local state, newest first, without their contents (admin)',
      auth: 'admin',
      noStore: true,
      schema: {
        response: {
          200: {
            type: 'object',
            properties: {
              checkpoints: { type: 'array', items: checkpointSchema },
              not_covered: notCoveredSchema,
            },
          },
        },
      },
      async handler() {
        return { checkpoints: node.checkpoints.list().map(info), not_covered: node.checkpoints.notCovered };
      },
    }),
    defineRoute<{ params: { id: string } }>({
      method: 'GET',
      path: '/agent/checkpoints/:id/diff',
      description:
        'what changed in the local state since a checkpoint: added, removed, changed, by area and key (admin)',
      auth: 'admin',
      noStore: true,
      schema: {
        params: {
          type: 'object',
          properties: { id: { type: 'string', pattern: CHECKPOINT_ID_PATTERN.source } },
          required: ['id'],
        },
        response: {
          200: {
            type: 'object',
            properties: {
              checkpoint: checkpointSchema,
              now: { type: 'integer', description: 'Unix ns: the diff runs from the checkpoint to this' },
              diff: diffSchema,
              totals: totalsSchema,
              not_covered: notCoveredSchema,
            },
          },
          404: errorSchema,
        },
      },
      async handler(req) {
        let out;
        try {
          out = node.checkpoints.diff(req.params.id);
        } catch (e) {
          notFound(e);
        }
        return {
          checkpoint: info(out.checkpoint),
          now: node.now(),
          diff: out.diff,
          totals: totals(out.diff),
          not_covered: node.checkpoints.notCovered,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/agent/rollbacks',
      description:
        "make the local state a checkpoint's again (dry_run: only the diff it would apply); undoable; never the ledger or the state chain (admin)",
      auth: 'admin',
      schema: {
        body: {
          type: 'object',
          properties: {
            checkpoint: { type: 'string', pattern: CHECKPOINT_ID_PATTERN.source, description: 'its id' },
            dry_run: { type: 'boolean', default: false },
          },
          required: ['checkpoint'],
        },
        response: {
          200: {
            type: 'object',
            properties: {
              applied: { type: 'boolean' },
              checkpoint: checkpointSchema,
              diff: {
                ...diffSchema,
                description:
                  "from the state before the rollback to the checkpoint's: what it did (or would do)",
              },
              totals: totalsSchema,
              undo_checkpoint: {
                ...checkpointSchema,
                description:
                  'the state before the rollback, kept as a checkpoint: roll back to it to undo (applied only)',
              },
              ...touched,
              not_covered: notCoveredSchema,
            },
            required: [
              'applied',
              'checkpoint',
              'diff',
              'ledger_touched',
              'statechain_touched',
              'not_covered',
            ],
          },
          400: errorSchema,
          404: errorSchema,
        },
      },
      tellUser: (answer) => rollbackTellUser(node.checkpoints)(answer),
      async handler(req) {
        const { checkpoint, dryRun } = rollbackBody(req.body);
        let r;
        try {
          r = await node.checkpoints.rollback(checkpoint, { dryRun });
        } catch (e) {
          notFound(e);
        }
        return {
          applied: r.applied,
          checkpoint: info(r.checkpoint),
          diff: r.diff,
          totals: totals(r.diff),
          ...(r.undo_checkpoint ? { undo_checkpoint: info(r.undo_checkpoint) } : {}),
          ledger_touched: false,
          statechain_touched: false,
          not_covered: node.checkpoints.notCovered,
        };
      },
    }),
  ];
}
