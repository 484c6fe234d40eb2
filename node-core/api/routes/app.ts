import type { LedgerNode } from '../../node.ts';
import { AppStoreError } from '../../app-store/errors.ts';
import { APP_DOCUMENT_KEYS, type AppDocumentKey } from '../../app-store/documents.ts';
import type { JsonValue } from '../../protocol/json.ts';
import { APP_HEADER } from '../app-session.ts';
import { ApiError } from '../errors.ts';
import { isLoopback } from '../rate-limit.ts';
import { defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { createSecurity } from '../security.ts';
import { errorSchema, objectBody } from './common.ts';

/**
 * The window's own routes (issue #16): its session with the node (app-session.ts) and its documents
 * in the node's app store (app-store/app-store.ts). Reading and writing documents needs the admin
 * token or the session: they hold the encrypted wallet and a person's contacts.
 */

const keyParam: JsonSchema = {
  type: 'object',
  properties: { key: { type: 'string', enum: [...APP_DOCUMENT_KEYS] } },
  required: ['key'],
};

const documentSchema: JsonSchema = {
  type: 'object',
  properties: {
    key: { type: 'string', enum: [...APP_DOCUMENT_KEYS] },
    value: { description: 'the document (vault: the keystore file as text)' },
    version: { type: 'integer', description: 'the store revision of its last write' },
  },
  required: ['key', 'value', 'version'],
};

const sessionSchema: JsonSchema = {
  type: 'object',
  properties: {
    authenticated: {
      type: 'boolean',
      description: 'whether this request carries the admin token or a session',
    },
    admin_token_file: {
      type: ['string', 'null'],
      description: 'where the admin token is kept (null: given on the command line or by the environment)',
    },
  },
  required: ['authenticated', 'admin_token_file'],
};

/**
 * The window's routes answer only on this computer: the wallet and the session are a local user's,
 * even on a node whose API is open to the network (`--api-bind 0.0.0.0`) for scripts.
 */
function loopbackOnly(req: { socket: { remoteAddress?: string | undefined } }): void {
  if (!isLoopback(req.socket.remoteAddress ?? ''))
    throw new ApiError('forbidden', "the window's routes answer only on this computer (loopback)");
}

function storeError(e: unknown): never {
  if (e instanceof AppStoreError) {
    if (e.code === 'version_conflict') throw ApiError.conflict(e.message);
    if (e.code === 'unknown_key') throw ApiError.notFound(e.message);
    throw ApiError.badRequest(e.message);
  }
  throw e;
}

const NOUN: Record<AppDocumentKey, string> = {
  vault: 'the encrypted wallet',
  settings: 'the settings',
  address_book: 'the address book',
  wallet_labels: 'the account labels',
  lease_holds: "the window's lease holds",
  chat_read: 'the chat read marks',
};

export function appRoutes(node: LedgerNode): RouteDef[] {
  const security = createSecurity({ bindAddress: '127.0.0.1', adminToken: node.adminToken });
  const session = security.appSession;
  return [
    defineRoute({
      method: 'GET',
      path: '/app/session',
      description: "whether this browser holds the window's session with the node (or the admin token)",
      auth: 'none',
      noStore: true,
      schema: { response: { 200: sessionSchema } },
      async handler(req) {
        loopbackOnly(req);
        const h = req.headers;
        return {
          authenticated: security.checkAdmin(h.authorization, h.cookie, h[APP_HEADER]) === undefined,
          admin_token_file: node.adminTokenFile ?? null,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/app/session',
      description:
        'trades the admin token for the window session cookie, which lasts across restarts and port changes',
      auth: 'none',
      noStore: true,
      schema: {
        body: {
          type: 'object',
          properties: { token: { type: 'string', description: 'the admin token' } },
          required: ['token'],
        },
        response: { 200: sessionSchema, 401: errorSchema, 403: errorSchema },
      },
      tellUser: () => 'This browser can now open the wallet kept by this node',
      async handler(req, reply) {
        loopbackOnly(req);
        const b = objectBody(req.body, ['token']);
        if (typeof b.token !== 'string') throw ApiError.badRequest('missing token: expected the admin token');
        if (session === undefined) throw ApiError.forbidden();
        const problem = security.checkAdmin(`Bearer ${b.token.trim()}`);
        if (problem !== undefined) throw problem;
        reply.header('set-cookie', session.setCookie());
        return { authenticated: true, admin_token_file: node.adminTokenFile ?? null };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/app/session/end',
      description: "ends this browser's window session (the wallet stays in the node)",
      auth: 'none',
      noBody: true,
      noStore: true,
      schema: { response: { 200: sessionSchema } },
      tellUser: () => 'This browser is signed out of the node',
      async handler(req, reply) {
        loopbackOnly(req);
        // Nothing to say but "end it": anything more is a mistake the caller should hear of.
        const b = req.body as unknown;
        if (b !== undefined && (typeof b !== 'object' || b === null || Object.keys(b).length > 0))
          throw ApiError.badRequest('this route takes no body (or {})');
        if (session !== undefined) reply.header('set-cookie', session.clearCookie());
        return { authenticated: false, admin_token_file: node.adminTokenFile ?? null };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/app/store',
      description:
        "the window's documents (wallet, settings, address book, labels) with their versions (admin or session; ETag)",
      auth: 'admin',
      noStore: true,
      schema: {
        response: {
          200: {
            type: 'object',
            properties: {
              revision: { type: 'integer', description: 'the store revision: any write raises it' },
              documents: { type: 'array', items: documentSchema },
            },
            required: ['revision', 'documents'],
          },
        },
      },
      async handler(req, reply) {
        loopbackOnly(req);
        const revision = node.appStore.revision();
        const etag = `"app-${revision}"`;
        reply.header('etag', etag);
        if (req.headers['if-none-match'] === etag) {
          reply.code(304);
          return undefined;
        }
        return { revision, documents: node.appStore.list() };
      },
    }),
    defineRoute<{ params: { key: string } }>({
      method: 'GET',
      path: '/app/store/:key',
      description: "one of the window's documents (admin or session)",
      auth: 'admin',
      noStore: true,
      schema: { params: keyParam, response: { 200: documentSchema, 404: errorSchema } },
      async handler(req) {
        loopbackOnly(req);
        const key = req.params.key as AppDocumentKey;
        const doc = node.appStore.get(key);
        if (doc === undefined) throw ApiError.notFound(`nothing stored as ${key} yet`);
        return doc;
      },
    }),
    defineRoute<{ params: { key: string } }>({
      method: 'POST',
      path: '/app/store/:key',
      description:
        "writes one of the window's documents (value null removes it; if_version refuses a stale write with 409)",
      auth: 'admin',
      noStore: true,
      schema: {
        params: keyParam,
        body: {
          type: 'object',
          properties: {
            value: { description: 'the new document, or null to remove it' },
            if_version: {
              type: 'integer',
              description: 'the version this write builds on (0: the document must not exist)',
            },
          },
          required: ['value'],
        },
        response: {
          200: {
            type: 'object',
            properties: {
              key: { type: 'string' },
              version: { type: ['integer', 'null'], description: 'null: removed' },
              revision: { type: 'integer' },
            },
            required: ['key', 'version', 'revision'],
          },
          400: errorSchema,
          409: errorSchema,
        },
      },
      tellUser: (answer) =>
        `${answer.version === null ? 'Removed' : 'Saved'} ${NOUN[answer.key as AppDocumentKey] ?? String(answer.key)}`,
      async handler(req) {
        loopbackOnly(req);
        const b = objectBody(req.body, ['value', 'if_version']);
        if (!('value' in b)) throw ApiError.badRequest('missing value (null removes the document)');
        const ifVersion = b.if_version;
        if (
          ifVersion !== undefined &&
          (typeof ifVersion !== 'number' || !Number.isInteger(ifVersion) || ifVersion < 0)
        )
          throw ApiError.badRequest('invalid if_version: expected a whole number (0: must not exist yet)');
        try {
          return await node.appStore.put(req.params.key, b.value as JsonValue | null, ifVersion);
        } catch (e) {
          storeError(e);
        }
      },
    }),
  ];
}
