import type { LedgerNode } from '../../node.ts';
import { parseJson, RawJson } from '../../protocol/json.ts';
import { ProtocolError } from '../../protocol/errors.ts';
import { parseStateBlock, type StateBlock, stateBlockToJson } from '../../protocol/statechain.ts';
import { StateChainError } from '../../statechain/statechain.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type RouteDef, type JsonSchema } from '../route-table.ts';
import { statechainBlockTellUser } from '../tell-user.ts';
import {
  digitsParam,
  errorSchema,
  limitParam,
  page,
  type Page,
  pageQuery,
  queryBigInt,
  queryLimit,
  U64_MAX,
} from './common.ts';

/** The contract's State chain table. */

const stateBlockSchema: JsonSchema = {
  type: 'object',
  required: ['index', 'prev_hash', 'ops', 'timestamp'],
  properties: {
    index: { type: 'integer' },
    prev_hash: { type: 'string' },
    ops: {
      type: 'array',
      items: {
        type: 'object',
        properties: { type: { enum: ['set', 'delete'] }, key: { type: 'string' }, value: {} },
        required: ['key'],
      },
    },
    signatures: {
      type: 'array',
      items: {
        type: 'object',
        properties: { public_key: { type: 'string' }, signature: { type: 'string' } },
      },
    },
    timestamp: { type: 'integer' },
    hash: { type: 'string' },
  },
};

/**
 * A KV entry reads back as {key, value}, value being the stored JSON value itself, its text spliced
 * into the answer byte for byte (D14 as amended by issue #14): an object stays an object, as the
 * protocol's own client reads `sys.timekeepers` or `epoch.N`; the text hashed is the text served.
 */
function kvEntry(key: string, text: string) {
  return { key, value: new RawJson(text, parseJson(text)) };
}

function stateJson(b: StateBlock) {
  return stateBlockToJson(b);
}

/** The request's body text, kept by the server's body parser (values are hashed byte for byte). */
function bodyText(req: unknown): string | undefined {
  return (req as { rawBodyText?: string }).rawBodyText;
}

export function statechainRoutes(node: LedgerNode): RouteDef[] {
  const sc = () => node.statechain;
  return [
    defineRoute({
      method: 'GET',
      path: '/statechain/tip',
      description: 'the latest state-chain block',
      auth: 'none',
      schema: { response: { 200: stateBlockSchema, 404: errorSchema } },
      async handler() {
        const tip = sc().tip;
        const b = tip && sc().getBlock(tip.index);
        if (!b) throw ApiError.notFound('no tip');
        return stateJson(b);
      },
    }),
    defineRoute<{ query: { start?: string; limit?: string } }>({
      method: 'GET',
      path: '/statechain/blocks',
      description: 'state-chain blocks ordered by index from start (default 0), limit default 20',
      auth: 'none',
      schema: {
        querystring: {
          type: 'object',
          properties: {
            start: digitsParam('index of the first block', 0),
            limit: limitParam(20),
          },
        },
      },
      async handler(req) {
        const start = queryBigInt(req.query.start, 'start', { default: 0n, max: U64_MAX });
        const limit = queryLimit(req.query.limit, 20);
        return sc().listBlocks(start, limit).map(stateJson);
      },
    }),
    defineRoute<{ params: { index: string } }>({
      method: 'GET',
      path: '/statechain/blocks/:index',
      description: 'a state-chain block by zero-based index',
      auth: 'none',
      schema: { params: { type: 'object', properties: { index: { type: 'string' } }, required: ['index'] } },
      async handler(req) {
        if (!/^(0|[1-9][0-9]{0,18})$/.test(req.params.index)) throw ApiError.badRequest('invalid index');
        const b = sc().getBlock(BigInt(req.params.index));
        if (!b) throw ApiError.notFound('block not found');
        return stateJson(b);
      },
    }),
    defineRoute<{ query: Page & { prefix?: string } }>({
      method: 'GET',
      path: '/statechain/kv',
      description: 'state key/value entries sorted by key; prefix= filters',
      auth: 'none',
      schema: {
        querystring: {
          ...pageQuery,
          properties: { ...(pageQuery.properties as object), prefix: { type: 'string' } },
        },
      },
      async handler(req) {
        const { offset, limit } = page(req.query);
        return sc()
          .kvList({ offset, limit, prefix: req.query.prefix })
          .map(({ key, value }) => kvEntry(key, value));
      },
    }),
    defineRoute<{ params: { '*': string } }>({
      method: 'GET',
      path: '/statechain/kv/*',
      description: 'one state key (keys may contain /) and its value, the stored JSON as it was submitted',
      auth: 'none',
      wildcardName: 'key',
      async handler(req) {
        const key = req.params['*'];
        const text = sc().kvGet(key);
        if (text === undefined) throw ApiError.notFound('key not found');
        return kvEntry(key, text);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/statechain/keyset',
      description: 'the DAO keyset that signs state-chain blocks',
      auth: 'none',
      async handler() {
        const k = sc().daoKeyset;
        if (!k) throw ApiError.notFound('keyset not found');
        return { keys: k.keys, threshold: k.threshold };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/statechain/blocks',
      description: 'submit a state-chain block signed by a threshold of the DAO keyset',
      auth: 'none',
      schema: { body: stateBlockSchema, response: { 201: { type: 'object' }, 400: errorSchema } },
      tellUser: statechainBlockTellUser,
      async handler(req, reply) {
        const text = bodyText(req);
        if (text === undefined) throw ApiError.badRequest('invalid request body');
        let block: StateBlock;
        try {
          block = parseStateBlock(text);
        } catch (e) {
          if (e instanceof ProtocolError) throw ApiError.badRequest(`invalid request body: ${e.message}`);
          throw e;
        }
        try {
          const r = await sc().submit(block);
          reply.code(201);
          return { hash: r.hash, index: r.index };
        } catch (e) {
          if (e instanceof StateChainError) {
            if (e.retryable) throw ApiError.unavailable(`block rejected: ${e.message}`);
            throw ApiError.badRequest(`block rejected: ${e.message}`);
          }
          throw e;
        }
      },
    }),
  ];
}
