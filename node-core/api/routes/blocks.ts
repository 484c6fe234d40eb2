import type { LedgerNode } from '../../node.ts';
import { blockToJson, decodeBlock } from '../../protocol/block-json.ts';
import { type BlockType } from '../../protocol/block.ts';
import { ProtocolError } from '../../protocol/errors.ts';
import { LedgerError } from '../../ledger/errors.ts';
import { StoreUnavailableError } from '../../store/errors.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { blockTellUser } from '../tell-user.ts';
import { digitsParam, errorSchema, hex64, limitParam, lower, queryLimit, querySince } from './common.ts';
import { storedBlockJson } from './accounts.ts';

/** The contract's Blocks table: submission of every block type, lookup, recent blocks. */

export const SUBMITTABLE: readonly BlockType[] = [
  'claim',
  'send',
  'receive',
  'lease',
  'lease_accept',
  'lease_renew',
  'lease_settle',
  'lease_cancel',
  'lease_force_settle',
  'multisig_open',
  'multisig_update',
  'burn',
  'mint',
];

const int64 = { oneOf: [{ type: 'integer' }, { type: 'string', pattern: '^(0|-?[1-9][0-9]*)$' }] };
const hex = { type: 'string', pattern: '^[0-9a-fA-F]*$' };

/** The block body (protocol.md section 5.1); 64-bit integers as digits, bare or quoted (decisions D3). */
export const blockSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'account', 'previous', 'balance', 'timestamp', 'asset', 'hash'],
  properties: {
    type: { type: 'string' },
    account: hex,
    previous: { type: 'string', description: '"0" (or 64 zeros) for an opening block' },
    balance: int64,
    timestamp: int64,
    asset: { type: 'string', enum: ['XE', 'XUSD'] },
    representative: hex,
    destination: hex,
    amount: int64,
    source: hex,
    memo: { type: 'string', description: 'send and burn only; at most 64 UTF-8 bytes' },
    keyset: {
      type: 'object',
      properties: { keys: { type: 'array', items: hex }, threshold: { type: 'integer' } },
    },
    signatures: { type: 'array', items: { type: 'object', properties: { public_key: hex, signature: hex } } },
    pub_key: hex,
    signature: hex,
    hash: hex,
    pow_nonce: int64,
  },
};

function submitRoute(node: LedgerNode, type: BlockType): RouteDef {
  return defineRoute({
    method: 'POST',
    path: `/blocks/${type}`,
    description:
      type === 'lease_renew'
        ? 'submit a signed lease_renew block: an extension of this node (decisions D7), not in the reference node'
        : `submit a signed ${type} block with its proof of work`,
    auth: 'none',
    blockSubmission: true,
    schema: { body: blockSchema, response: { 201: blockSchema, 400: errorSchema, 503: errorSchema } },
    tellUser: blockTellUser(node.ledger),
    async handler(req, reply) {
      const body = req.body;
      // Every deterministic refusal of a block says so (contract: 400 with retryable false, issue
      // #14), whichever check finds it; a transient one is 503 with retryable true.
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw ApiError.blockRefused('invalid request body: a block must be a JSON object');
      const declared = (body as Record<string, unknown>).type;
      if (declared !== undefined && declared !== type) throw ApiError.blockRefused('block type mismatch');
      let block;
      try {
        block = decodeBlock({ ...(body as Record<string, unknown>), type });
      } catch (e) {
        // A malformed field is deterministic: the same body will never be accepted (contract: 400
        // with retryable false).
        if (e instanceof ProtocolError) throw ApiError.blockRefused(`invalid request body: ${e.message}`);
        throw e;
      }
      try {
        const result = await node.ledger.submit(block, { live: true });
        if (result.status === 'conflict') {
          // Staged, not applied: the representatives' votes decide between the siblings (D8).
          reply.code(202);
          return { status: 'conflict', hash: result.block.hash };
        }
        // A duplicate is re-announced: the client may be retrying because peers never got it (N-11).
        if (result.status === 'duplicate') void node.p2p?.publishBlock(result.block);
        reply.code(201);
        return blockToJson(result.block, 'node');
      } catch (e) {
        if (e instanceof LedgerError) throw ApiError.blockRejected(e.reason, e.retryable);
        if (e instanceof ProtocolError) throw ApiError.blockRejected(e.message, false);
        if (e instanceof StoreUnavailableError) throw ApiError.blockRejected(e.message, true);
        throw e;
      }
    },
  });
}

export function blockRoutes(node: LedgerNode): RouteDef[] {
  return [
    defineRoute<{ query: { limit?: string; since?: string } }>({
      method: 'GET',
      path: '/blocks/recent',
      description: 'most recent blocks, newest first; since= keeps blocks after a nanosecond timestamp',
      auth: 'none',
      schema: {
        querystring: {
          type: 'object',
          properties: {
            limit: limitParam(),
            since: digitsParam('only blocks with a later timestamp, Unix nanoseconds'),
          },
        },
      },
      async handler(req) {
        const limit = queryLimit(req.query.limit);
        const since = querySince(req.query.since);
        return node.ledger.recentBlocks(limit, since).map(storedBlockJson);
      },
    }),
    defineRoute<{ params: { hash: string } }>({
      method: 'GET',
      path: '/blocks/:hash',
      description: 'a block by hash, with its finalized flag',
      auth: 'none',
      schema: {
        params: { type: 'object', properties: { hash: hex64 }, required: ['hash'] },
        response: { 200: blockSchema, 404: errorSchema },
      },
      async handler(req) {
        const b = node.ledger.getBlock(lower(req.params.hash));
        if (!b) throw ApiError.notFound('block not found');
        return storedBlockJson(b);
      },
    }),
    ...SUBMITTABLE.map((t) => submitRoute(node, t)),
  ];
}
