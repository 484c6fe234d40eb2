import type { LedgerNode } from '../../node.ts';
import { blockToJson } from '../../protocol/block-json.ts';
import type { StoredBlock } from '../../ledger/ledger.ts';
import { reputationJson } from '../../leasing/reputation.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import {
  addressParams,
  balanceMap,
  balancesSchema,
  errorSchema,
  lower,
  page,
  type Page,
  pageQuery,
} from './common.ts';

/**
 * The contract's Accounts table. Node form, plus the proxy form (decisions D5, D11) of balance and
 * chain: the reference's shapes, and 200 with nothing in it for an unknown account.
 */

export function storedBlockJson(b: StoredBlock): Record<string, unknown> {
  return { ...blockToJson(b.block, 'node'), finalized: b.finalized };
}

const proxyBalanceSchema: JsonSchema = {
  type: 'object',
  required: ['address', 'balances', 'spendable', 'final_height'],
  properties: {
    address: { type: 'string' },
    balances: { ...balancesSchema, description: 'raw balances, unfinalized inflows included' },
    spendable: {
      ...balancesSchema,
      description: 'finalized funds less unfinalized outflows: the settlement figure',
    },
    final_height: {
      type: 'integer',
      minimum: 0,
      description: 'blocks finalized from the start of the chain',
    },
  },
};

const proxyChainSchema: JsonSchema = {
  type: 'object',
  required: ['address', 'blocks', 'total'],
  properties: {
    address: { type: 'string' },
    blocks: {
      type: 'array',
      description: 'a page of the chain, oldest first',
      items: {
        type: 'object',
        description: 'a block as GET /blocks/{hash} shows it',
        required: ['type', 'account', 'hash', 'finalized'],
        properties: { finalized: { type: 'boolean' } },
      },
    },
    total: { type: 'integer', minimum: 0, description: 'length of the whole chain' },
  },
};

export function accountRoutes(node: LedgerNode): RouteDef[] {
  return [
    defineRoute<{ query: Page }>({
      method: 'GET',
      path: '/accounts',
      description: 'accounts sorted by address, with balances, block count and frontier',
      auth: 'none',
      schema: { querystring: pageQuery },
      async handler(req) {
        const { offset, limit } = page(req.query);
        return node.ledger.listAccounts(offset, limit).map(({ address, account }) => ({
          address,
          balances: balanceMap(account.balances),
          block_count: account.height,
          frontier: account.frontier,
          representative: account.representative,
          last_block_timestamp: account.last_timestamp,
        }));
      },
    }),
    defineRoute<{ params: { address: string } }>({
      method: 'GET',
      path: '/accounts/:address/balance',
      description: 'balances of an account: non-zero assets, as decimal strings of micro-units',
      auth: 'none',
      schema: { params: addressParams, response: { 200: balancesSchema, 404: errorSchema } },
      async handler(req) {
        const acct = node.ledger.getAccount(lower(req.params.address));
        if (!acct) throw ApiError.notFound('account not found');
        return balanceMap(acct.balances);
      },
      proxy: {
        description: 'balances, spendable funds and finalized height of an account (empty when unknown)',
        schema: { response: { 200: proxyBalanceSchema } },
        async handler(req) {
          const address = lower(req.params.address);
          const acct = node.ledger.getAccount(address);
          return {
            address,
            balances: balanceMap(acct?.balances ?? {}),
            spendable: balanceMap(acct === undefined ? {} : node.ledger.spendable(address)),
            final_height: acct?.final_height ?? 0,
          };
        },
      },
    }),
    defineRoute<{ params: { address: string }; query: Page }>({
      method: 'GET',
      path: '/accounts/:address/chain',
      description: 'blocks of an account, oldest first; X-Total-Count gives the chain length',
      auth: 'none',
      schema: { params: addressParams, querystring: pageQuery },
      async handler(req, reply) {
        const { offset, limit } = page(req.query);
        const chain = node.ledger.getChain(lower(req.params.address), offset, limit);
        if (!chain) throw ApiError.notFound('account not found');
        reply.header('x-total-count', String(chain.total));
        return chain.blocks.map(storedBlockJson);
      },
      proxy: {
        description: 'blocks of an account, oldest first, paginated: {address, blocks, total}',
        schema: { response: { 200: proxyChainSchema } },
        async handler(req) {
          const { offset, limit } = page(req.query);
          const address = lower(req.params.address);
          const chain = node.ledger.getChain(address, offset, limit);
          return { address, blocks: chain?.blocks.map(storedBlockJson) ?? [], total: chain?.total ?? 0 };
        },
      },
    }),
    defineRoute<{ params: { address: string } }>({
      method: 'GET',
      path: '/accounts/:address/keyset',
      description: 'multisig keyset of an account',
      auth: 'none',
      schema: { params: addressParams },
      async handler(req) {
        const acct = node.ledger.getAccount(lower(req.params.address));
        if (!acct?.keyset) throw ApiError.notFound('not a multisig account');
        return { keys: acct.keyset.keys, threshold: acct.keyset.threshold };
      },
    }),
    defineRoute<{ params: { address: string } }>({
      method: 'GET',
      path: '/accounts/:address/reputation',
      description: 'lease reputation of an account (derived from its leases)',
      auth: 'none',
      schema: { params: addressParams },
      async handler(req) {
        const r = node.ledger.reputation.get(lower(req.params.address));
        if (!r) throw ApiError.notFound('no reputation activity');
        return reputationJson(r);
      },
    }),
    defineRoute<{ query: Page }>({
      method: 'GET',
      path: '/reputation',
      description: 'lease reputations of all accounts, by address',
      auth: 'none',
      schema: { querystring: pageQuery },
      async handler(req) {
        // A map by address, paged in address order (reference-behavior.md 1.3).
        const { offset, limit } = page(req.query);
        const { entries } = node.ledger.reputation.list(offset, limit);
        return Object.fromEntries(entries.map(([address, r]) => [address, reputationJson(r)]));
      },
    }),
  ];
}
