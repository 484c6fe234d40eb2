import type { LedgerNode } from '../../node.ts';
import { LOG_LEVEL_NAMES, type LogLevelName, logFilter, MAX_FILTER_CHARS } from '../../metrics/log-ring.ts';
import { LogStream } from '../../metrics/log-stream.ts';
import type { ActivitySeries } from '../../metrics/activity.ts';
import { P2PSwitchError } from '../../net/p2p-switch.ts';
import { ApiError } from '../errors.ts';
import { type ApiRequest, defineRoute, type JsonSchema, type RouteDef } from '../route-table.ts';
import { digitsParam, errorSchema, queryInt } from './common.ts';

/**
 * What the Node page shows beyond `/node`: the peers with their round trips, the activity history
 * for its chart, the node's recent log (admin: lines name peers' addresses) with a live stream, and
 * the operator's switch for peer-to-peer networking.
 */

const LOG_DEFAULT_LIMIT = 200;
const LAST_EVENT_ID = /^[0-9]{1,15}$/;

const logQuery: Record<string, JsonSchema> = {
  level: {
    type: 'string',
    enum: LOG_LEVEL_NAMES,
    description: 'lowest level shown: trace, debug, info, warn, error or fatal (default: all)',
  },
  q: {
    type: 'string',
    maxLength: MAX_FILTER_CHARS,
    description: 'text the message or a field must contain (case-insensitive)',
  },
};

interface LogQueryString {
  level?: LogLevelName;
  q?: string;
  after?: string;
  limit?: string;
  last_event_id?: string;
}

const sampleSchema: JsonSchema = {
  type: 'object',
  properties: {
    at: { type: 'integer', description: 'Unix ns' },
    blocks: { type: 'integer', description: 'blocks in the ledger then' },
    new_blocks: { type: 'integer', description: 'blocks committed since the previous sample' },
    peers: { type: 'integer' },
  },
};
const seriesSchema: JsonSchema = {
  type: 'object',
  properties: {
    interval_ms: { type: 'integer' },
    capacity: { type: 'integer' },
    samples: { type: 'array', items: sampleSchema },
  },
};

const p2pSchema: JsonSchema = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: ['off', 'running', 'stopping', 'stopped', 'starting'] },
    since: { type: 'integer', description: 'when this state began, Unix ms' },
    listen_addrs: { type: 'array', items: { type: 'string' } },
  },
};

export function nodeOpsRoutes(node: LedgerNode): RouteDef[] {
  const p2pStatus = () => ({
    // Networking starts after the API listens (node.ts start): until then it is 'starting'.
    state: node.networkStarting ? 'starting' : node.p2pSwitch.state,
    since: node.networkStarting ? node.startedAt : node.p2pSwitch.stateSince,
    listen_addrs: (node.p2p?.listenAddrs ?? []).map((a) =>
      a.includes('/p2p/') ? a : `${a}/p2p/${node.nodeId}`,
    ),
  });
  const series = (s: ActivitySeries | undefined) => s ?? { interval_ms: 0, capacity: 0, samples: [] };

  return [
    defineRoute({
      method: 'GET',
      path: '/node/peers',
      description:
        'connected peers with address, version, connection time and round trip, and the peer-to-peer state',
      auth: 'none',
      schema: {
        response: {
          200: {
            type: 'object',
            properties: {
              p2p: p2pSchema,
              peer_count: { type: 'integer' },
              peers: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'string', description: 'libp2p peer id' },
                    address: { type: 'string', description: 'multiaddr of the connection' },
                    version: { type: 'string', description: 'software version it announced' },
                    features: { type: 'array', items: { type: 'string' } },
                    connected_at: { type: 'integer', description: 'Unix ns' },
                    latency_ms: {
                      type: ['number', 'null'],
                      description:
                        'round trip of a request, ms; null until measured or when it did not answer',
                    },
                  },
                },
              },
            },
          },
        },
      },
      async handler() {
        const peers = (node.p2p?.peers() ?? [])
          .map((p) => ({ ...p, latency_ms: node.peerLatency?.latencyMs(p.id) ?? null }))
          .sort((a, b) => (a.connected_at < b.connected_at ? -1 : a.connected_at > b.connected_at ? 1 : 0));
        return { p2p: p2pStatus(), peer_count: peers.length, peers };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/node/activity',
      description:
        'blocks committed and peers over time, sampled by the node: every 5 s for 10 minutes and every minute for 24 hours',
      auth: 'none',
      schema: {
        response: {
          200: {
            type: 'object',
            properties: { now: { type: 'integer' }, fine: seriesSchema, minutes: seriesSchema },
          },
        },
      },
      async handler() {
        return {
          now: node.now(),
          fine: series(node.activity?.fine),
          minutes: series(node.activity?.minutes),
        };
      },
    }),
    defineRoute<{ query: LogQueryString }>({
      method: 'GET',
      path: '/node/log',
      description:
        "the node's recent log lines (oldest first; level= and q= filter, after= pages on from a seq, limit default 200)",
      auth: 'admin',
      noStore: true,
      schema: {
        querystring: {
          type: 'object',
          properties: {
            ...logQuery,
            after: digitsParam('only lines after this seq'),
            limit: digitsParam('lines to return, 1 to 1000', LOG_DEFAULT_LIMIT),
          },
        },
        response: { 400: errorSchema, 401: errorSchema },
      },
      async handler(req) {
        const ring = node.logRing;
        const after =
          req.query.after === undefined ? undefined : queryInt(req.query.after, 'after', { default: 0 });
        const limit = queryInt(req.query.limit, 'limit', { default: LOG_DEFAULT_LIMIT, min: 1, max: 1000 });
        return {
          lines: ring.query({ level: req.query.level, text: req.query.q, after, limit }),
          first_seq: ring.firstSeq,
          last_seq: ring.lastSeq,
          dropped: ring.dropped,
          capacity: ring.capacity,
        };
      },
    }),
    defineRoute<{ query: LogQueryString }>({
      method: 'GET',
      path: '/node/log/events',
      description:
        "Server-Sent Events: the node's log lines as they are written (`event: log`, id = seq), filtered by level= and q=; resume with Last-Event-ID (or last_event_id)",
      auth: 'admin',
      schema: {
        querystring: {
          type: 'object',
          properties: {
            ...logQuery,
            last_event_id: {
              type: 'string',
              pattern: LAST_EVENT_ID.source,
              description: 'resume after this seq (for clients that cannot set the Last-Event-ID header)',
            },
          },
        },
        response: { 400: errorSchema, 401: errorSchema },
      },
      async handler(req: ApiRequest<{ query: LogQueryString }>, reply) {
        const header = req.headers['last-event-id'];
        const given = (Array.isArray(header) ? header[0] : header) || req.query.last_event_id;
        if (given !== undefined && !LAST_EVENT_ID.test(given))
          throw ApiError.badRequest('Last-Event-ID must be a seq of this log (digits)');
        // Checked before the response turns into a stream; the stream outlives the handler.
        reply.hijack();
        const server = req.server.server;
        new LogStream({
          ring: node.logRing,
          res: reply.raw,
          headers: reply.getHeaders(),
          filter: logFilter({ level: req.query.level, text: req.query.q }),
          lastEventId: given === undefined ? undefined : Number(given),
          serverListening: () => server.listening,
        });
        return undefined;
      },
    }),
    defineRoute<{ body: unknown }>({
      method: 'POST',
      path: '/node/p2p',
      description:
        'stop or start peer-to-peer networking while the node runs: {"running": false} or {"running": true}',
      auth: 'admin',
      schema: {
        body: {
          type: 'object',
          required: ['running'],
          properties: { running: { type: 'boolean' } },
        },
        response: {
          200: {
            type: 'object',
            properties: { ...(p2pSchema.properties as object), peer_count: { type: 'integer' } },
          },
          400: errorSchema,
          401: errorSchema,
          409: errorSchema,
          503: errorSchema,
        },
      },
      tellUser: (answer) =>
        answer.state === 'running'
          ? 'Peer-to-peer networking is running: the node reconnects to its peers.'
          : 'Peer-to-peer networking is stopped: the node has no peers until it is started again.',
      async handler(req) {
        const body = req.body as { running?: unknown } | null | undefined;
        if (
          typeof body !== 'object' ||
          body === null ||
          Array.isArray(body) ||
          typeof body.running !== 'boolean' ||
          Object.keys(body).some((k) => k !== 'running')
        )
          throw ApiError.badRequest('body must be {"running": true} or {"running": false}');
        if (node.networkStarting)
          throw ApiError.unavailable('peer-to-peer networking is still starting: try again in a moment');
        try {
          await node.p2pSwitch.set(body.running);
        } catch (e) {
          if (e instanceof P2PSwitchError)
            throw e.code === 'p2p_off' ? ApiError.conflict(e.message) : ApiError.unavailable(e.message);
          throw e;
        }
        return { ...p2pStatus(), peer_count: node.p2p?.peers().length ?? 0 };
      },
    }),
  ];
}
