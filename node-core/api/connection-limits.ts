import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { InboundLimiter } from '../net/inbound-limits.ts';
import { CLIENT_IPV6_PREFIX_BITS } from './rate-limit.ts';

/**
 * Time limits and connection caps of the HTTP API (issue #15): without them, a client trickling a
 * body one byte at a time, or opening thousands of connections, holds the node's sockets for ever
 * (fastify turns Node's request timeout off by default).
 *
 * The time limits cover receiving a request only, never sending its response, so a long-lived
 * response (an event stream) is not cut. Node checks them every `checkIntervalMs`.
 */
export interface ConnectionLimitOptions {
  /** Most time to receive a whole request, headers and body (default 30 s). */
  requestTimeoutMs?: number;
  /** Most time to receive a request's headers, counted from the connection for its first (default 10 s). */
  headersTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept between requests (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** How often the time limits are checked (default 1 s; Node's own 30 s would let them overrun). */
  checkIntervalMs?: number;
  /** Open connections from one client, an IPv4 address or IPv6 /64 (default 128). */
  maxPerClient?: number;
  /** Open connections in all (default 1024). */
  maxTotal?: number;
}

export type ConnectionLimits = Readonly<Required<ConnectionLimitOptions>>;

/**
 * Loose enough for the GUI, a benchmark's 16 keep-alive clients and a script's parallel requests,
 * all from loopback; tight enough that one client cannot take every socket the node can open.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  checkIntervalMs: 1_000,
  maxPerClient: 128,
  maxTotal: 1024,
};

/** How long a connection over a cap may take to send the request its 503 answers. */
const REFUSED_GRACE_MS = 1_000;

/** The limits with defaults filled in; a RangeError for values Node would refuse or misread. */
export function resolveConnectionLimits(opts: ConnectionLimitOptions = {}): ConnectionLimits {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...withoutUndefined(opts) };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`connection limit ${name} must be a whole number of at least 1`);
  }
  // Node refuses a headers time-out beyond the request time-out.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new RangeError('headersTimeoutMs must not exceed requestTimeoutMs');
  return limits;
}

function withoutUndefined(o: ConnectionLimitOptions): ConnectionLimitOptions {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/**
 * Counts the server's open connections per client and in all. A connection over a cap is still
 * read, so that its request can be answered with a retryable 503 (isRefused) rather than a bare
 * reset; it is dropped if that request does not come within a second, so a flood of idle
 * connections over the caps holds no socket for long.
 */
export class ConnectionCaps {
  private readonly limiter: InboundLimiter;
  private readonly refused = new WeakSet<Socket>();
  private readonly graceMs: number;

  constructor(limits: ConnectionLimits) {
    this.limiter = new InboundLimiter({
      perIp: limits.maxPerClient,
      total: limits.maxTotal,
      ipv6PrefixBits: CLIENT_IPV6_PREFIX_BITS,
    });
    this.graceMs = Math.min(REFUSED_GRACE_MS, limits.headersTimeoutMs);
  }

  /** Counts every connection `server` accepts from now on. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.admit(socket));
  }

  /** True when `socket` was opened over a cap: its request gets a 503 and the connection closes. */
  isRefused(socket: Socket): boolean {
    return this.refused.has(socket);
  }

  private admit(socket: Socket): void {
    const release = this.limiter.admit(socket.remoteAddress);
    if (release !== undefined) {
      socket.once('close', release);
      return;
    }
    this.refused.add(socket);
    const timer = setTimeout(() => socket.destroy(), this.graceMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }
}

/** The options of Node's HTTP server that enforce the time limits (fastify passes them on). */
export function serverTimeouts(limits: ConnectionLimits): {
  requestTimeout: number;
  keepAliveTimeout: number;
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: limits.checkIntervalMs },
  };
}
