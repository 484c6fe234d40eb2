import { ChatAuthError, type ProofParams } from '../../chat/challenges.ts';
import { ChatEventStream } from '../../chat/chat-events.ts';
import { ChatSendError } from '../../chat/chat-service.ts';
import { chatEnvelopeJson, type Delivery, type StoredMessage } from '../../chat/chat-store.ts';
import type { LedgerNode } from '../../node.ts';
import { stringifyJson } from '../../protocol/json.ts';
import { ApiError } from '../errors.ts';
import { type ApiRequest, defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { createSecurity } from '../security.ts';
import { chatRetryTellUser, chatSendTellUser } from '../tell-user.ts';
import { errorSchema } from './common.ts';

/**
 * Chat (contract Chat and Authentication 3; reference-behavior.md 1.10; decisions D2, D15; issue
 * #13): sending (stored here, or handed to the recipient's node through the outbox), the
 * ownership-proof challenge, the reads, the event stream (chat/chat-events.ts), and a retry of a
 * message whose delivery failed.
 */

const envelopeSchema: JsonSchema = {
  type: 'object',
  required: ['from', 'to', 'message', 'timestamp', 'signature'],
  properties: {
    id: { type: 'string', description: 'SHA-256 of the canonical bytes (D15), hex' },
    from: { type: 'string', description: 'sender public key, hex' },
    to: { type: 'string', description: 'recipient public key, hex' },
    message: { type: 'string' },
    timestamp: { type: 'integer', description: 'Unix ns' },
    signature: { type: 'string', description: 'Ed25519 by `from` over the 32 id bytes' },
    pow_nonce: { type: 'integer', description: 'proof of work over the id at the chat difficulty' },
  },
};

const proofQuery = {
  account: { type: 'string', description: 'public key or address (D2)' },
  pub_key: { type: 'string' },
  challenge: { type: 'string', description: 'from GET /chat/auth/challenge' },
  sig: { type: 'string', description: 'Ed25519 over SHA-256("xe/chat-read-auth/v1" 0x00 challenge)' },
} as const;

const AUTH_STATUS: Record<ChatAuthError['code'], 'bad_request' | 'unauthorized' | 'forbidden'> = {
  missing_account: 'bad_request',
  missing_proof: 'unauthorized',
  malformed_challenge: 'forbidden',
  foreign_challenge: 'forbidden',
  challenge_expired: 'forbidden',
  wrong_key: 'forbidden',
  bad_signature: 'forbidden',
  challenge_used: 'forbidden',
};

const deliverySchema: JsonSchema = {
  type: 'object',
  description: "for a message this node forwards to the recipient's node: where its delivery stands",
  required: ['state', 'attempts', 'updated_at'],
  properties: {
    state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer' },
    updated_at: { type: 'integer', description: 'Unix ns' },
    next_at: { type: 'integer', description: 'Unix ns: the next attempt (pending)' },
    error: { type: 'string', description: 'why the last attempt failed' },
  },
};

const messageSchema: JsonSchema = {
  ...envelopeSchema,
  properties: { ...(envelopeSchema.properties as JsonSchema), delivery: deliverySchema },
};

const sendAnswerSchema: JsonSchema = {
  type: 'object',
  required: ['ok'],
  properties: {
    ok: { type: 'boolean' },
    id: { type: 'string' },
    delivery: {
      type: 'string',
      enum: ['local', 'delivered', 'queued', 'failed'],
      description:
        'local: the recipient is on this node; delivered: their node took it; queued: in the outbox, retried until taken',
    },
    error: { type: 'string', description: 'why the first delivery attempt failed' },
  },
};

function deliveryJson(d: Delivery) {
  return {
    state: d.state,
    attempts: d.attempts,
    updated_at: d.updated_at,
    ...(d.next_at !== undefined ? { next_at: d.next_at } : {}),
    ...(d.error !== undefined ? { error: d.error } : {}),
  };
}

/** A stream's resume point: digits only, as the ids it sent (u64 range); else a 400. */
const LAST_EVENT_ID = /^[0-9]{1,20}$/;

type EventsQuery = ProofParams & { last_event_id?: string };

export function chatRoutes(node: LedgerNode): RouteDef[] {
  /** A message as the reads and the event stream show it: the envelope, and its delivery if forwarded. */
  const messageJson = (m: StoredMessage) => {
    const d = node.chatStore.delivery(m.id);
    return { ...chatEnvelopeJson(m), ...(d ? { delivery: deliveryJson(d) } : {}) };
  };
  const security = createSecurity({ bindAddress: '127.0.0.1', adminToken: node.adminToken });
  /** The account's public key once its ownership proof holds. */
  const prove = (q: ProofParams): string => {
    try {
      return node.chatChallenges.prove(q);
    } catch (e) {
      if (e instanceof ChatAuthError) throw new ApiError(AUTH_STATUS[e.code], e.message);
      throw e;
    }
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/chat/send',
      description:
        "checks a signed chat envelope and stores it for a recipient registered on this node, or hands it to the recipient's node (kept in an outbox and retried until that node takes it)",
      auth: 'none',
      schema: {
        body: envelopeSchema,
        response: { 200: sendAnswerSchema, 400: errorSchema, 404: errorSchema },
      },
      tellUser: chatSendTellUser,
      async handler(req) {
        try {
          const r = await node.chat.send(req.body);
          return {
            ok: true,
            id: r.message.id,
            delivery: r.delivery,
            ...(r.record?.error !== undefined ? { error: r.record.error } : {}),
          };
        } catch (e) {
          if (!(e instanceof ChatSendError)) throw e;
          if (e.code === 'recipient_unknown') throw ApiError.notFound(e.message);
          throw ApiError.badRequest(e.message);
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/chat/auth/challenge',
      description: 'a challenge for the chat ownership proof: this node only, 120 s, single use',
      auth: 'none',
      noStore: true,
      schema: {
        response: {
          200: {
            type: 'object',
            required: ['challenge', 'expires_at'],
            properties: { challenge: { type: 'string' }, expires_at: { type: 'integer' } },
          },
        },
      },
      async handler() {
        return node.chatChallenges.issue();
      },
    }),
    defineRoute<{ query: ProofParams & { since?: string; offset?: string; limit?: string } }>({
      method: 'GET',
      path: '/chat/messages',
      description:
        "an account's messages, sent and received, newest first (ownership proof; since, offset, limit)",
      auth: 'none',
      schema: {
        querystring: {
          type: 'object',
          properties: {
            ...proofQuery,
            since: { type: 'string', pattern: '^[0-9]{1,19}$', description: 'Unix ns: only newer messages' },
            offset: { type: 'string', pattern: '^[0-9]{1,9}$' },
            limit: { type: 'string', pattern: '^[0-9]{1,4}$' },
          },
        },
        response: {
          200: { type: 'array', items: messageSchema },
          400: errorSchema,
          401: errorSchema,
          403: errorSchema,
        },
      },
      async handler(
        req: ApiRequest<{ query: ProofParams & { since?: string; offset?: string; limit?: string } }>,
        reply,
      ) {
        const key = prove(req.query);
        const limit = req.query.limit === undefined ? 100 : Math.min(Number(req.query.limit), 1000);
        const page = node.chatStore.list(key, {
          since: req.query.since === undefined ? undefined : BigInt(req.query.since),
          offset: req.query.offset === undefined ? 0 : Number(req.query.offset),
          limit,
        });
        reply.header('x-total-count', String(page.total));
        return page.messages.map(messageJson);
      },
    }),
    defineRoute<{ params: { id: string }; query: ProofParams }>({
      method: 'POST',
      path: '/chat/messages/:id/retry',
      description:
        'puts a message whose delivery failed back in the outbox and tries it at once (ownership proof of its sender)',
      auth: 'none',
      noBody: true,
      schema: {
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
        },
        querystring: { type: 'object', properties: { ...proofQuery } },
        response: {
          200: sendAnswerSchema,
          400: errorSchema,
          401: errorSchema,
          403: errorSchema,
          404: errorSchema,
          409: errorSchema,
        },
      },
      tellUser: chatRetryTellUser,
      async handler(req: ApiRequest<{ params: { id: string }; query: ProofParams }>) {
        const key = prove(req.query);
        const m = node.chatStore.get(req.params.id);
        if (!m || m.from !== key) throw ApiError.notFound('no message of this account with that id');
        const before = node.chatStore.delivery(m.id);
        if (before?.state !== 'failed')
          throw ApiError.conflict(
            before
              ? `the message's delivery is ${before.state}, not failed`
              : 'the message was never forwarded to another node',
          );
        const d = await node.chatOutbox.retry(m.id);
        if (!d) throw ApiError.conflict('the message is no longer waiting for a retry');
        return {
          ok: true,
          id: m.id,
          delivery: d.state === 'pending' ? 'queued' : d.state,
          ...(d.error !== undefined ? { error: d.error } : {}),
        };
      },
    }),
    defineRoute<{ query: ProofParams }>({
      method: 'GET',
      path: '/chat/contacts',
      description:
        'with account and its ownership proof: the keys it exchanged messages with, latest first; without: every account with stored messages (admin token)',
      auth: 'none',
      schema: {
        querystring: { type: 'object', properties: { ...proofQuery } },
        response: { 200: { type: 'array', items: { type: 'string' } }, 401: errorSchema, 403: errorSchema },
      },
      async handler(req) {
        if (req.query.account === undefined) {
          const denied = security.checkAdmin(req.headers.authorization);
          if (denied) throw denied;
          return node.chatStore.accounts();
        }
        return node.chatStore.contacts(prove(req.query)).map((c) => c.key);
      },
    }),
    defineRoute<{ query: EventsQuery }>({
      method: 'GET',
      path: '/chat/events',
      description:
        'Server-Sent Events: each stored message as `id: <seq>`, `event: message`; an account with its ownership proof, or all with the admin token; resume with Last-Event-ID (or last_event_id)',
      auth: 'none',
      schema: {
        querystring: {
          type: 'object',
          properties: {
            ...proofQuery,
            last_event_id: {
              type: 'string',
              pattern: LAST_EVENT_ID.source,
              description:
                'resume after this event id (for clients that cannot set the Last-Event-ID header)',
            },
          },
        },
        response: { 400: errorSchema, 401: errorSchema, 403: errorSchema },
      },
      async handler(req: ApiRequest<{ query: EventsQuery }>, reply) {
        // Every check answers as JSON before the response turns into a stream.
        let party: string | undefined;
        if (req.query.account === undefined) {
          const denied = security.checkAdmin(req.headers.authorization);
          if (denied) throw denied;
        } else {
          party = prove(req.query);
        }
        // The header wins: EventSource sends it on every reconnect with the latest id, while the
        // URL keeps the query parameter given on its first connect.
        const header = req.headers['last-event-id'];
        const given = (Array.isArray(header) ? header[0] : header) || req.query.last_event_id;
        if (given !== undefined && !LAST_EVENT_ID.test(given))
          throw ApiError.badRequest('Last-Event-ID must be an event id of this stream (digits)');
        // Hijacked: fastify sends no reply of its own, and the stream outlives the handler.
        reply.hijack();
        const server = req.server.server;
        new ChatEventStream({
          hub: node.chatEvents,
          store: node.chatStore,
          res: reply.raw,
          party,
          lastEventId: given === undefined ? undefined : BigInt(given),
          // With its delivery record, so a replay tells where each forwarded message stands.
          json: (m) => stringifyJson(messageJson(m)),
          serverListening: () => server.listening,
        });
        return undefined;
      },
    }),
  ];
}
