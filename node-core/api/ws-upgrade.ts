import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type * as Ws from 'ws';
import { ServerResponse } from '../cjs-packages.ts';

/**
 * WebSocket upgrades routed through fastify, with `ws` loaded on the first one. An upgrade request
 * goes through the server's routing like any request, so its onRequest checks (connection caps,
 * Host, rate limits, the route's own Origin check) run before anything is upgraded; a route that
 * takes upgrades calls `acceptUpgrade` from its handler. Any other answer to an upgrade request is
 * written in plain HTTP on its socket, which is then closed: Node's HTTP server no longer manages a
 * socket it handed over as an upgrade, and it would otherwise stay open and hold up the close.
 *
 * Why not @fastify/websocket: it loads `ws` and duplexify (~30 files, 16-24 ms) before the API
 * listens, for a console few nodes ever open (the start-up target is 0.6 s), and it wraps the handler
 * of every route (~400) to look for an upgrade on each request.
 */

const require = createRequire(import.meta.url);

const UPGRADE = Symbol('websocket upgrade');

interface Upgrade {
  socket: Socket;
  head: Buffer;
}

type UpgradeRequest = IncomingMessage & { [UPGRADE]?: Upgrade };

/** An upgraded socket's errors before `ws` owns it: the socket goes, nothing throws. */
function destroyOnError(this: Socket): void {
  this.destroy();
}

export interface UpgradeOptions {
  /** Largest message a client may send, bytes. */
  maxPayload: number;
}

/**
 * Upgrades a request that `isUpgrade` says is one to a WebSocket; `onOpen` gets it once the
 * handshake is done. The reply is hijacked: nothing else is sent on it.
 */
export type AcceptUpgrade = (
  request: FastifyRequest,
  reply: FastifyReply,
  onOpen: (ws: Ws.WebSocket) => void,
) => void;

/** Servers whose upgrades are routed: a second router would route every upgrade twice. */
const routed = new WeakSet<FastifyInstance['server']>();

/**
 * Routes upgrade requests of `app`'s server through fastify (before the server listens). Once per
 * server: every WebSocket route of it accepts upgrades with the one function returned.
 */
export function routeUpgrades(app: FastifyInstance, opts: UpgradeOptions): AcceptUpgrade {
  if (routed.has(app.server)) {
    throw new Error(
      'routeUpgrades: this server routes its upgrades already; share the AcceptUpgrade it returned',
    );
  }
  routed.add(app.server);
  let server: Ws.WebSocketServer | undefined;
  // Node's HTTP server hands over the request's own TCP socket (typed as a Duplex on the event).
  const onUpgrade = (req: UpgradeRequest, socket: Socket, head: Buffer) => {
    // Node removes its own error listener from the socket before it emits 'upgrade'.
    socket.on('error', destroyOnError);
    req[UPGRADE] = { socket, head };
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    app.routing(req, res);
  };
  app.server.on('upgrade', onUpgrade);
  app.addHook('onResponse', (request, _reply, done) => {
    upgradeOf(request)?.socket.destroy();
    done();
  });
  app.addHook('preClose', (done) => {
    app.server.off('upgrade', onUpgrade);
    for (const ws of server?.clients ?? []) ws.close();
    done();
  });
  return (request, reply, onOpen) => {
    const upgrade = upgradeOf(request)!;
    reply.hijack();
    if (server === undefined) {
      const { WebSocketServer } = require('ws') as typeof Ws;
      server = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayload });
    }
    // ws puts its own error listener on the socket as it takes it over.
    upgrade.socket.removeListener('error', destroyOnError);
    server.handleUpgrade(request.raw, upgrade.socket, upgrade.head, onOpen);
  };
}

function upgradeOf(request: FastifyRequest): Upgrade | undefined {
  return (request.raw as UpgradeRequest)[UPGRADE];
}

/** Whether `request` asks for an upgrade (and came through routeUpgrades). */
export function isUpgrade(request: FastifyRequest): boolean {
  return upgradeOf(request) !== undefined;
}
