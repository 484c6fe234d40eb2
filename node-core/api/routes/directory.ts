import type { LedgerNode } from '../../node.ts';
import { isHex } from '../../protocol/hex.ts';
import { ProtocolError } from '../../protocol/errors.ts';
import { toBigIntField } from '../../protocol/int.ts';
import type { Registration } from '../../protocol/registration.ts';
import {
  DIRECTORY_TTL_NS,
  MAX_FUTURE_NS,
  PEER_ID_PATTERN,
  type RegistrationOutcome,
  registrationJson,
} from '../../net/directory.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { directoryRegisterTellUser } from '../tell-user.ts';
import { errorSchema, hex64, type Page, page, pageQuery } from './common.ts';

/**
 * The contract's Directory table: which node serves an account, as signed registrations that live
 * 30 minutes after their timestamp (reference-behavior.md 1.9). Registrations posted here are
 * gossiped to peers like those the node learns from them.
 */

const FIELDS = ['account', 'node_peer', 'timestamp', 'signature'] as const;

const entrySchema: JsonSchema = {
  type: 'object',
  properties: {
    account: { ...hex64, description: "the account's public key" },
    pub_key: { ...hex64, description: 'the same key again (reference form); optional in requests' },
    node_peer: { type: 'string', description: 'libp2p peer id of the node serving the account' },
    timestamp: { type: 'integer', description: 'Unix nanoseconds' },
    signature: {
      type: 'string',
      pattern: '^[0-9a-fA-F]{128}$',
      description: 'Ed25519 over the 32 key bytes followed by the timestamp as i64 big-endian',
    },
  },
  required: ['account', 'node_peer', 'timestamp', 'signature'],
};

/** A registration from a request body, or a 400 naming the field that is missing or malformed. */
function registrationOf(body: unknown): Registration {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw ApiError.badRequest('invalid request body: a registration must be a JSON object');
  const b = body as Record<string, unknown>;
  for (const f of FIELDS) if (b[f] === undefined || b[f] === null) throw ApiError.badRequest(`missing ${f}`);
  // Hex fields are taken in either case, like path parameters, and kept lowercase.
  const account = typeof b.account === 'string' ? b.account.toLowerCase() : undefined;
  if (!isHex(account, 32)) throw ApiError.badRequest('invalid account: expected a 64-hex public key');
  if (b.pub_key !== undefined && (typeof b.pub_key !== 'string' || b.pub_key.toLowerCase() !== account))
    throw ApiError.badRequest('pub_key must equal account (an account is named by its public key)');
  if (typeof b.node_peer !== 'string' || !PEER_ID_PATTERN.test(b.node_peer))
    throw ApiError.badRequest('invalid node_peer: expected a libp2p peer id');
  const signature = typeof b.signature === 'string' ? b.signature.toLowerCase() : undefined;
  if (!isHex(signature, 64)) throw ApiError.badRequest('invalid signature: expected 128 hex characters');
  let timestamp: bigint;
  try {
    timestamp = toBigIntField(b.timestamp, 'i64', 'timestamp');
  } catch (e) {
    if (e instanceof ProtocolError) throw ApiError.badRequest(`invalid timestamp: ${e.message}`);
    throw e;
  }
  return { account, node_peer: b.node_peer, timestamp, signature };
}

const minutes = (ns: bigint) => ns / 60_000_000_000n;

/** The answer to each outcome: stored and stale ones succeed (a stale one is silently ignored). */
const REFUSALS: Partial<Record<RegistrationOutcome, () => ApiError>> = {
  bad_signature: () => ApiError.badRequest('invalid signature'),
  expired: () =>
    ApiError.badRequest(
      `registration expired: timestamp is more than ${minutes(DIRECTORY_TTL_NS)} minutes old`,
    ),
  // The reference keeps such entries for ever (H-08); this node refuses them.
  future: () =>
    ApiError.badRequest(`timestamp is more than ${minutes(MAX_FUTURE_NS)} minutes ahead of the node clock`),
  full: () => ApiError.unavailable('the directory is full; retry later'),
};

export function directoryRoutes(node: LedgerNode): RouteDef[] {
  return [
    defineRoute<{ query: Page }>({
      method: 'GET',
      path: '/directory',
      description: 'live directory registrations (within the 30-minute TTL), sorted by account',
      auth: 'none',
      schema: { querystring: pageQuery, response: { 200: { type: 'array', items: entrySchema } } },
      async handler(req) {
        const { offset, limit } = page(req.query);
        return node.directory.page(offset, limit).map(registrationJson);
      },
    }),
    defineRoute<{ params: { account: string } }>({
      method: 'GET',
      path: '/directory/:account',
      description: "an account's live registration, by public key or address",
      auth: 'none',
      schema: {
        params: {
          type: 'object',
          properties: { account: { ...hex64, description: 'public key or account address' } },
          required: ['account'],
        },
        response: { 200: entrySchema, 404: errorSchema },
      },
      async handler(req) {
        const entry = node.directory.lookup(req.params.account.toLowerCase());
        if (!entry) throw ApiError.notFound('account not found in directory');
        return registrationJson(entry);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/directory/register',
      description: 'register which node serves an account (signed by the account key; 30-minute TTL)',
      auth: 'none',
      schema: {
        body: entrySchema,
        response: {
          200: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          400: errorSchema,
          503: errorSchema,
        },
      },
      tellUser: directoryRegisterTellUser,
      async handler(req) {
        const registration = registrationOf(req.body);
        const outcome = node.directory.register(registration);
        const refusal = REFUSALS[outcome];
        if (refusal) throw refusal();
        if (outcome === 'stored') void node.p2p?.publishRegistration(registration);
        return { ok: true };
      },
    }),
  ];
}
