import type { Connection, Stream } from '@libp2p/interface';
import type { Logger } from 'pino';
import { concatBytes } from '../protocol/hex.ts';
import { type JsonPath, parseJson, stringifyJson } from '../protocol/json.ts';
import type { BucketRate } from '../token-bucket.ts';
import { NetError } from './errors.ts';
import {
  DEFAULT_MESSENGER_DEADLINE_MS,
  type MessengerLimitOptions,
  RequestLimiter,
} from './request-limits.ts';
import { PeerSlots } from './peer-slots.ts';
import { RequestPacer } from './request-pacer.ts';

/**
 * Request/response between peers: the messenger (`/xe/msg/1.0.0`, spec 5.7) and sync
 * (`/xe/sync/1.0.0`), each with its own limits. One stream per request: the asker writes
 * `{type, payload}` and closes its side; the answer is `{type, payload}` or `{type, error}`. Limits
 * are checked before a request is read, and every exchange has a deadline on both sides.
 */
export const REQUEST_PROTOCOL = '/xe/msg/1.0.0';
/**
 * Account and state-chain sync: pages of chains, frontiers and votes, as many requests as a catch-up
 * needs. Not the messenger (spec 5.7 keeps sync on protocols of its own), so the messenger's 50/s
 * per peer never throttles a late join; it has limits of its own against floods.
 */
export const SYNC_PROTOCOL = '/xe/sync/1.0.0';

/** Which request/response protocol a request travels on. */
export type RequestChannel = 'messenger' | 'sync';

export interface SyncLimitOptions {
  perPeer?: BucketRate;
  global?: BucketRate;
  /** The rate this node keeps its own sync requests to one peer at. */
  outbound?: BucketRate;
}

export const DEFAULT_SYNC_LIMITS = {
  perPeer: { perSecond: 1000, burst: 2000 },
  global: { perSecond: 4000, burst: 8000 },
  outbound: { perSecond: 800, burst: 1600 },
} satisfies Required<SyncLimitOptions>;

/** A request/response protocol with its limits: what peers may ask, how fast this node asks. */
interface Channel {
  protocol: string;
  limiter: RequestLimiter;
  pacer: RequestPacer;
  slots: PeerSlots;
}
/**
 * The request streams of one channel a peer takes at once on a connection (host.ts registers each
 * channel's handler with it); libp2p resets any stream over it. This node keeps its own requests
 * to a peer within it (PeerSlots), so that asking many at once queues them instead of failing them.
 */
export const MAX_INBOUND_REQUEST_STREAMS = 8;
/** A request's cap (spec 5.7: 64 KiB per message). */
export const MAX_REQUEST_BYTES = 64 * 1024;
/** Answers carry pages of blocks for sync, far more than a request ever needs. */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** The messenger's answer form; `error` set when the request was refused or failed. */
interface MessengerAnswer {
  type: string;
  error?: string;
  payload?: unknown;
}

/** The messenger's counters and limits, as GET /node reports them. */
export interface MessengerStats {
  /** Requests refused by a rate limit, per peer and global together. */
  rate_limited: number;
  /** Of those, the ones refused by the global limit. */
  rate_limited_global: number;
  /** Requests refused for being over MAX_REQUEST_BYTES. */
  too_large: number;
  /** Exchanges cut off at the deadline. */
  timed_out: number;
  per_peer: { per_second: number; burst: number };
  global: { per_second: number; burst: number };
  deadline_ms: number;
}

/** Reads a stream to its end (the sender closes its side), refusing more than `limit` bytes. */
async function readAll(stream: Stream, limit: number): Promise<Uint8Array | undefined> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const part = chunk.subarray();
    size += part.length;
    if (size > limit) return undefined;
    parts.push(part);
  }
  return concatBytes(...parts);
}

/**
 * Lets a request that will be refused arrive in full, keeping none of it (up to `limit` bytes). The
 * refusal is sent after the request, as any answer is: a client that only starts reading once it
 * has sent its request would otherwise miss an answer that came first.
 */
async function discard(stream: Stream, limit: number): Promise<void> {
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.byteLength;
    if (size > limit) return;
  }
}

/** A messenger request's `{type, payload}`; anything else is a bad request. */
function decodeRequest(bytes: Uint8Array): { type: string; payload: unknown } {
  let req: unknown;
  try {
    req = parseJson(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw new NetError('ERR_BAD_REQUEST', `request is not UTF-8 JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const r = req as { type?: unknown; payload?: unknown } | null;
  if (typeof r !== 'object' || r === null || typeof r.type !== 'string')
    throw new NetError('ERR_BAD_REQUEST', 'request without a type');
  return { type: r.type, payload: r.payload };
}

export interface RequestServiceOptions {
  messenger?: MessengerLimitOptions;
  sync?: SyncLimitOptions;
  log?: Logger;
  /** Whether a peer passed netcheck: requests from any other are refused unread. */
  verified: (peer: string) => boolean;
  /** Answers a request; undefined means an unknown type. */
  onRequest?: (type: string, payload: unknown, from: string, channel: RequestChannel) => Promise<unknown>;
}

export class RequestService {
  private readonly opts: RequestServiceOptions;
  private readonly channels: Record<RequestChannel, Channel>;
  private readonly deadlineMs: number;
  private tooLarge = 0;
  private timedOut = 0;
  private lastRateWarning = 0;

  constructor(opts: RequestServiceOptions) {
    this.opts = opts;
    this.channels = {
      messenger: {
        protocol: REQUEST_PROTOCOL,
        limiter: new RequestLimiter(opts.messenger),
        pacer: new RequestPacer({ rate: opts.messenger?.outbound }),
        slots: new PeerSlots(MAX_INBOUND_REQUEST_STREAMS),
      },
      sync: {
        protocol: SYNC_PROTOCOL,
        limiter: new RequestLimiter({
          perPeer: opts.sync?.perPeer ?? DEFAULT_SYNC_LIMITS.perPeer,
          global: opts.sync?.global ?? DEFAULT_SYNC_LIMITS.global,
        }),
        pacer: new RequestPacer({ rate: opts.sync?.outbound ?? DEFAULT_SYNC_LIMITS.outbound }),
        slots: new PeerSlots(MAX_INBOUND_REQUEST_STREAMS),
      },
    };
    this.deadlineMs = opts.messenger?.deadlineMs ?? DEFAULT_MESSENGER_DEADLINE_MS;
    if (!(this.deadlineMs > 0))
      throw new NetError('ERR_BAD_OPTION', 'the messenger deadline must be positive');
  }

  /** The protocols to answer, by channel. */
  get protocols(): [RequestChannel, string][] {
    return Object.entries(this.channels).map(([c, ch]) => [c as RequestChannel, ch.protocol]);
  }

  /** Messenger requests refused by the limits so far, and the limits themselves (spec 5.7, N-09). */
  get messengerStats(): MessengerStats {
    const l = this.channels.messenger.limiter;
    return {
      rate_limited: l.refused,
      rate_limited_global: l.refusedGlobal,
      too_large: this.tooLarge,
      timed_out: this.timedOut,
      per_peer: { per_second: l.perPeer.perSecond, burst: l.perPeer.burst },
      global: { per_second: l.global.perSecond, burst: l.global.burst },
      deadline_ms: this.deadlineMs,
    };
  }

  /**
   * Sends a request to `peer` over the connection `connection()` finds once a slot to the peer and
   * pacing allow, and returns the answer's payload. Throws a NetError: the peer's error answer
   * (ERR_PEER_ANSWER), or a request that could not be made (ERR_NOT_CONNECTED, ERR_TOO_LARGE) or
   * finished (ERR_DEADLINE, ERR_STREAM).
   */
  async ask<T>(
    peer: string,
    type: string,
    payload: unknown,
    opts: { raw?: (path: JsonPath) => boolean; channel?: RequestChannel; timeoutMs?: number },
    connection: () => Connection | undefined,
  ): Promise<T> {
    const channel = this.channels[opts.channel ?? 'messenger'];
    const body = new TextEncoder().encode(stringifyJson({ type, payload }));
    // The peer would refuse it unread; saying so here names the request that was too big.
    if (body.length > MAX_REQUEST_BYTES)
      throw new NetError(
        'ERR_TOO_LARGE',
        `${type} request of ${body.length} bytes is over ${MAX_REQUEST_BYTES}`,
      );
    // Kept within the streams the peer takes at once, then within the rate it accepts: waiting
    // here is cheaper than a refusal and a retry.
    const release = await channel.slots.take(peer);
    try {
      const wait = channel.pacer.reserve(peer);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      return await this.exchange<T>(peer, type, body, opts, channel, connection);
    } finally {
      release();
    }
  }

  /** One request's exchange on a new stream, and its answer's payload (see ask). */
  private async exchange<T>(
    peer: string,
    type: string,
    body: Uint8Array,
    opts: { raw?: (path: JsonPath) => boolean; timeoutMs?: number },
    channel: Channel,
    connection: () => Connection | undefined,
  ): Promise<T> {
    const conn = connection();
    if (!conn) throw new NetError('ERR_NOT_CONNECTED', `not connected to ${peer}`);
    // One deadline for the whole exchange (opening, sending, the peer's work, the answer), so a peer
    // that never answers cannot hold a caller, such as a sync round, for ever. A caller may ask for
    // less (an attestation is worth waiting 10 s for, not 30).
    const deadlineMs = Math.min(opts.timeoutMs ?? this.deadlineMs, this.deadlineMs);
    const signal = AbortSignal.timeout(deadlineMs);
    let stream: Stream | undefined;
    const cutOff = () => stream?.abort(new NetError('ERR_DEADLINE', 'messenger deadline'));
    signal.addEventListener('abort', cutOff, { once: true });
    let bytes: Uint8Array | undefined;
    try {
      stream = await conn.newStream(channel.protocol, { signal });
      // Reading starts before the request is sent: a peer may answer at once, without reading the
      // request (a refusal), and an answer that arrives before anyone listens is never delivered
      // once both ends have closed.
      const answer = readAll(stream, MAX_RESPONSE_BYTES);
      answer.catch(() => {}); // awaited below; this only covers a failure of send or close first
      stream.send(body);
      await stream.close();
      bytes = await answer;
    } catch (err) {
      // Whatever failed, the read above must not stay pending on a half-used stream.
      stream?.abort(err instanceof Error ? err : new Error(String(err)));
      if (signal.aborted)
        throw new NetError('ERR_DEADLINE', `${peer} did not answer ${type} within ${deadlineMs} ms`, {
          cause: err,
        });
      if (err instanceof NetError) throw err;
      // A stream reset by the peer or a connection lost: one code for callers, the cause kept.
      throw new NetError('ERR_STREAM', `${type} request to ${peer} failed: ${(err as Error).message}`, {
        cause: err,
      });
    } finally {
      signal.removeEventListener('abort', cutOff);
    }
    if (!bytes) throw new NetError('ERR_TOO_LARGE', `answer from ${peer} too large`);
    const answer = parseJson(new TextDecoder().decode(bytes), { raw: opts.raw, maxDepth: 32 }) as {
      type?: string;
      error?: string;
      payload?: unknown;
    };
    if (answer.error) throw new NetError('ERR_PEER_ANSWER', `${peer} answered ${type}: ${answer.error}`);
    return answer.payload as T;
  }

  /**
   * Answers one messenger request. The whole exchange has a deadline (spec 5.7: 30 s): a peer that
   * trickles its request, or never closes it, holds the stream no longer than that.
   */
  async answer(stream: Stream, conn: Connection, channel: RequestChannel): Promise<void> {
    const peer = conn.remotePeer.toString();
    const deadline = setTimeout(() => {
      this.timedOut += 1;
      stream.abort(new NetError('ERR_DEADLINE', `request not answered within ${this.deadlineMs} ms`));
    }, this.deadlineMs);
    try {
      const answer = await this.answerOf(stream, peer, channel);
      // Cut off by the deadline meanwhile: there is nobody left to answer.
      if (stream.status !== 'open') return;
      stream.send(new TextEncoder().encode(stringifyJson(answer)));
      await stream.close();
    } catch {
      stream.abort(new Error('answer not delivered'));
    } finally {
      clearTimeout(deadline);
    }
  }

  /** The answer to one request, errors included (the peer reads them in the `error` field). */
  private async answerOf(stream: Stream, peer: string, channel: RequestChannel): Promise<MessengerAnswer> {
    const limiter = this.channels[channel].limiter;
    try {
      // The rate limits come first, before the request is read: a refused request is never parsed
      // nor kept (its bytes are dropped as they arrive), whatever its size or content (N-09).
      const refusal = limiter.take(peer);
      if (refusal !== undefined) {
        this.warnRateLimited(peer, refusal, channel);
        const rate = refusal === 'peer' ? limiter.perPeer : limiter.global;
        await discard(stream, MAX_REQUEST_BYTES);
        throw new NetError(
          'ERR_RATE_LIMITED',
          `rate limited: over ${rate.perSecond} requests/s (burst ${rate.burst}) ${refusal === 'peer' ? 'per peer' : 'for all peers'}`,
        );
      }
      if (!this.opts.verified(peer)) {
        await discard(stream, MAX_REQUEST_BYTES);
        throw new NetError('ERR_NOT_VERIFIED', 'netcheck first');
      }
      const bytes = await readAll(stream, MAX_REQUEST_BYTES);
      if (!bytes) {
        this.tooLarge += 1;
        throw new NetError('ERR_TOO_LARGE', `request too large: over ${MAX_REQUEST_BYTES} bytes`);
      }
      const req = decodeRequest(bytes);
      const payload = await this.opts.onRequest?.(req.type, req.payload, peer, channel);
      return payload === undefined
        ? { type: req.type, error: `unknown request type ${req.type}` }
        : { type: req.type, payload };
    } catch (err) {
      return { type: 'error', error: (err as Error).message };
    }
  }

  private warnRateLimited(peer: string, limit: 'peer' | 'global', channel: RequestChannel): void {
    // Once per 10 s at most: a flood must not become a flood of log lines.
    if (Date.now() - this.lastRateWarning <= 10_000) return;
    this.lastRateWarning = Date.now();
    this.opts.log?.warn(
      { peer, limit, channel, rate_limited: this.channels[channel].limiter.refused },
      `${channel} requests refused: rate limit reached`,
    );
  }
}
