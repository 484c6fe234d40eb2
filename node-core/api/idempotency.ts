import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuditLog, auditOutcome, isAgentCall } from './audit-log.ts';
import type { AuditDb } from './audit-log.ts';
import { ApiError } from './errors.ts';
import { PROXY_ALIAS, PROXY_BASE } from './proxy.ts';
import { clientIp, clientKey } from './rate-limit.ts';

/**
 * `Idempotency-Key` on the mutating routes of the API (decisions D13; issue #14's agent verbs).
 *
 * A client sends `Idempotency-Key: <1 to 255 printable ASCII characters>` with a POST (PUT, DELETE:
 * any method but GET, HEAD and OPTIONS) of the route table, in the node form or the proxy form. The
 * first request with the key runs; its final answer is kept on disk for 24 hours, and a replay of
 * the same request with the same key gets that answer byte for byte (status, body, Content-Type,
 * Location) with `Idempotency-Replayed: true`, without running again. Headers made per request (rate
 * limits, X-API-Version, CORS, Deprecation) are made afresh.
 *
 * - Scope: a key belongs to one client, the admin token's holder (a valid bearer token) or else the
 *   client address as rate limiting counts it (an IPv4 address, an IPv6 /64). Records are keyed by
 *   SHA-256 of scope and key, so no client can reach another's answers.
 * - Same request: SHA-256 of the method, the request target (path and query, as sent) and the body
 *   bytes. The same key with any other request is 422 (`idempotency_mismatch`); the node form and
 *   the proxy form are different paths, so a key is used in one form.
 * - While the first request runs, the same key is 409 (`idempotency_in_progress`): never run twice.
 * - What is kept: every answer below 500. A 5xx (an internal error, a full disk, a retryable 503)
 *   is not kept and frees the key, so the client may retry after a server fault with the same key.
 *   Requests refused before their handler (unreadable body, failed schema, 401, 429) record nothing.
 * - Exempt: routes whose answer is a stream taken over from the framework (the tunnel,
 *   `POST /tunnel/{lease}/tcp`; the VM console and the chat event stream are GETs): the key is ignored.
 * - A bad key (empty, longer than 255, not printable ASCII, sent twice) is 400.
 */

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotency-replayed';
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const PRUNE_INTERVAL_MS = 10 * 60 * 1000;
export const MAX_KEY_LENGTH = 255;
/** A first request that never finished (a lost socket, a bug) frees its key after this long. */
export const STALE_IN_FLIGHT_MS = 10 * 60 * 1000;
/** The first answer's headers kept and replayed. */
export const KEPT_HEADERS = ['content-type', 'location'] as const;
/** Table routes that take no key (method and path relative to the form's base): their answers are streams. */
export const EXEMPT_ROUTES: ReadonlySet<string> = new Set(['POST /tunnel/:lease/tcp']);

/** One line describing the header, for the manifest, the discovery document and OpenAPI. */
export const IDEMPOTENCY_DESCRIPTION =
  'optional, 1 to 255 printable ASCII characters: a replay of the same request with the same key within 24 hours returns the first answer (with Idempotency-Replayed: true) without running it again; the same key with another request is 422, while the first still runs 409';

export function isMutating(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/** The route path without the proxy form's base (`/api/v1/chat/send` and `/api/chat/send` to `/chat/send`). */
export function tablePath(routePath: string): string {
  for (const base of [PROXY_BASE, PROXY_ALIAS]) {
    if (routePath === base || routePath === `${base}/`) return '/';
    if (routePath.startsWith(`${base}/`)) return routePath.slice(base.length);
  }
  return routePath;
}

/** Whether a route of the table (fastify path, either form) takes an Idempotency-Key. */
export function takesIdempotencyKey(method: string, routePath: string): boolean {
  return isMutating(method) && !EXEMPT_ROUTES.has(`${method} ${tablePath(routePath)}`);
}

/**
 * The key of a request from its raw headers: undefined when absent; a 400 when it is empty, longer
 * than MAX_KEY_LENGTH, not printable ASCII (space to tilde) or sent more than once.
 */
export function parseIdempotencyKey(rawHeaders: readonly string[]): string | undefined {
  let key: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== IDEMPOTENCY_HEADER) continue;
    if (key !== undefined) throw ApiError.badRequest('Idempotency-Key sent more than once');
    key = rawHeaders[i + 1] ?? '';
  }
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key)) {
    throw ApiError.badRequest(
      `invalid Idempotency-Key: must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`,
    );
  }
  return key;
}

/** What makes two requests the same: SHA-256 hex of method, request target and body bytes. */
export function requestFingerprint(method: string, target: string, body: Uint8Array): string {
  // Neither a method nor a request target contains a space or a newline: the parts cannot run together.
  return createHash('sha256').update(`${method} ${target}\n`).update(body).digest('hex');
}

/** Where a key's answer is kept: SHA-256 hex of the client scope and the key. */
export function recordKey(scope: string, key: string): string {
  return createHash('sha256').update(scope).update('\0').update(key).digest('hex');
}

/** Whether an answer of this status is kept for replays (see the module comment: every one below 500). */
export function isStorable(status: number): boolean {
  return status < 500;
}

/** A kept answer. */
export interface StoredAnswer {
  fingerprint: string;
  status: number;
  /** KEPT_HEADERS the first answer had. */
  headers: Record<string, string>;
  /** The body bytes, base64. */
  body: string;
  /** When it was answered, ms since the epoch. */
  created: number;
}

/** `<created ms>` newline JSON: pruning reads the time without parsing the answer. */
export function encodeAnswer(a: StoredAnswer): string {
  return `${a.created}\n${JSON.stringify(a)}`;
}

export function decodeAnswer(value: string): StoredAnswer {
  return JSON.parse(value.slice(value.indexOf('\n') + 1)) as StoredAnswer;
}

function createdOf(value: string): number {
  return Number(value.slice(0, value.indexOf('\n')));
}

/**
 * The records in the order they expire, beside them in the same database: `~<created ms, 15
 * digits>:<record key>` -> ''. Record keys are SHA-256 hex, so `~` sorts every entry of the order
 * after every record. Pruning reads the expired entries only: reading every record held the node's
 * thread 86 ms with 100,000 records and 0.8 s with a million, once each interval (issue #18).
 */
const ORDER = '~';
const orderKey = (created: number, key: string): string =>
  `${ORDER}${String(created).padStart(15, '0')}:${key}`;
/** Entries read (and records pruned) per write transaction and turn of the event loop. */
const PRUNE_SLICE = 1000;

/** The part of an LMDB database (lmdb-js) the records need. */
export interface KeyValueDb {
  get(key: string): string | undefined;
  putSync(key: string, value: string): unknown;
  removeSync(key: string): unknown;
  getRange(opts?: Record<string, unknown>): Iterable<{ key: string; value: string }>;
  getKeys(opts?: Record<string, unknown>): Iterable<string>;
}

export interface IdempotencyOptions {
  db: KeyValueDb;
  /** Runs writes as one durable unit (Store.transaction: resolved once flushed to disk). */
  transaction<T>(fn: () => T): Promise<T>;
  /** Clock in ms (default Date.now). */
  now?: () => number;
  ttlMs?: number;
  pruneIntervalMs?: number;
}

export type Begin = { readonly kind: 'run' } | { readonly kind: 'replay'; readonly answer: StoredAnswer };

/** The records and the keys in flight; the hooks (installAgentHooks) drive it. */
export class Idempotency {
  private readonly db: KeyValueDb;
  private readonly transaction: IdempotencyOptions['transaction'];
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly pruneIntervalMs: number;
  /** record key -> when its first request started (ms) */
  private readonly inFlight = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<number> | undefined;
  /** Counts stop() calls: a pass ends early once it changes. */
  private stops = 0;

  constructor(opts: IdempotencyOptions) {
    this.db = opts.db;
    this.transaction = opts.transaction;
    this.now = opts.now ?? Date.now;
    this.ttlMs = opts.ttlMs ?? IDEMPOTENCY_TTL_MS;
    this.pruneIntervalMs = opts.pruneIntervalMs ?? PRUNE_INTERVAL_MS;
  }

  /**
   * Prunes expired records now, reading every record once (a record kept by a version before the
   * order entries, or by one after a downgrade, gets its entry), then every pruneIntervalMs from the
   * order entries.
   */
  start(): void {
    if (this.timer !== undefined) return;
    void this.prune(true);
    this.timer = setInterval(() => void this.prune(), this.pruneIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    // A pass under way ends after its current slice (what it left is pruned at the next start).
    this.stops += 1;
    await this.pruning;
  }

  /** The kept answer of a record key, unless expired. */
  lookup(key: string): StoredAnswer | undefined {
    const value = this.db.get(key);
    if (value === undefined || createdOf(value) + this.ttlMs <= this.now()) return undefined;
    return decodeAnswer(value);
  }

  /**
   * A request with record key `key` and `fingerprint` arrives: run it (the key is then in flight
   * until finish or release), or replay the kept answer. Throws 409 while the key is in flight and
   * 422 when the kept answer was for another request.
   */
  begin(key: string, fingerprint: string): Begin {
    const started = this.inFlight.get(key);
    if (started !== undefined && started + STALE_IN_FLIGHT_MS > this.now())
      throw new ApiError('idempotency_in_progress');
    const kept = this.lookup(key);
    if (kept !== undefined) {
      if (kept.fingerprint !== fingerprint) throw new ApiError('idempotency_mismatch');
      return { kind: 'replay', answer: kept };
    }
    this.inFlight.set(key, this.now());
    return { kind: 'run' };
  }

  /**
   * The first request's final answer: kept (durably, before the answer goes out) when storable, and
   * the key freed either way. A failed write keeps nothing and rethrows.
   */
  async finish(
    key: string,
    fingerprint: string,
    answer: { status: number; headers: Record<string, string>; body: Uint8Array },
  ): Promise<void> {
    try {
      if (!isStorable(answer.status)) return;
      const record: StoredAnswer = {
        fingerprint,
        status: answer.status,
        headers: answer.headers,
        body: Buffer.from(answer.body).toString('base64'),
        created: this.now(),
      };
      await this.transaction(() => {
        this.db.putSync(key, encodeAnswer(record));
        this.db.putSync(orderKey(record.created, key), '');
      });
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** Frees a key whose request ended without an answer to keep. */
  release(key: string): void {
    this.inFlight.delete(key);
  }

  /**
   * Deletes expired records; resolves with how many. From the order entries, or with `everyRecord`
   * from the records themselves (giving each live one its order entry if it lacks it). Either way in
   * slices of PRUNE_SLICE, each read and written in one turn: a backlog of a day's records holds
   * neither the thread nor one write transaction long.
   */
  prune(everyRecord = false): Promise<number> {
    const stops = this.stops;
    const stopped = () => this.stops !== stops;
    this.pruning ??= (everyRecord ? this.pruneRecords(stopped) : this.pruneByOrder(stopped)).finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  private async pruneByOrder(stopped: () => boolean): Promise<number> {
    const cutoff = this.now() - this.ttlMs;
    // Every entry of a record created at or before the cutoff sorts below this key.
    const end = orderKey(cutoff + 1, '');
    let removed = 0;
    for (;;) {
      const entries = [...this.db.getKeys({ start: ORDER, end, limit: PRUNE_SLICE })];
      if (entries.length === 0 || stopped()) return removed;
      await this.transaction(() => {
        for (const entry of entries) {
          this.db.removeSync(entry);
          // The key may have been used again since (its record is then newer, with its own entry).
          const key = entry.slice(entry.indexOf(':') + 1);
          const v = this.db.get(key);
          if (v !== undefined && createdOf(v) <= cutoff) {
            this.db.removeSync(key);
            removed += 1;
          }
        }
      });
    }
  }

  private async pruneRecords(stopped: () => boolean): Promise<number> {
    const cutoff = this.now() - this.ttlMs;
    let removed = 0;
    let after: string | undefined;
    for (;;) {
      const slice = [
        ...this.db.getRange({
          start: after === undefined ? '' : `${after}\0`,
          end: ORDER,
          limit: PRUNE_SLICE,
        }),
      ];
      if (slice.length === 0 || stopped()) return removed;
      after = slice[slice.length - 1]!.key;
      const expired: { key: string; value: string; entry: string }[] = [];
      const unordered: string[] = [];
      for (const { key, value } of slice) {
        const created = createdOf(value);
        const entry = orderKey(created, key);
        if (created <= cutoff) expired.push({ key, value, entry });
        else if (this.db.get(entry) === undefined) unordered.push(entry);
      }
      if (expired.length === 0 && unordered.length === 0) {
        // Nothing to write (the usual case once every record has its entry): only a turn to yield.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      await this.transaction(() => {
        for (const { key, value, entry } of expired) {
          // Unless the key was used again meanwhile (a newer record, with its own entry).
          if (this.db.get(key) === value) {
            this.db.removeSync(key);
            removed += 1;
          }
          this.db.removeSync(entry);
        }
        for (const entry of unordered) this.db.putSync(entry, '');
      });
    }
  }
}

// ---- advertising the header -----------------------------------------------------------------------

/** The header as an OpenAPI parameter of every route that takes it. */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: IDEMPOTENCY_DESCRIPTION,
  schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: '^[\\x20-\\x7e]+$' },
} as const;

/**
 * Manifest or discovery entries, one per route in the same order, with `idempotency_key: true` on
 * those of routes that take the header.
 */
export function withIdempotencyKeys<E extends object>(
  entries: readonly E[],
  routes: readonly { method: string; path: string }[],
): (E & { idempotency_key?: true })[] {
  return entries.map((e, i) => {
    const r = routes[i];
    return r !== undefined && takesIdempotencyKey(r.method, r.path) ? { ...e, idempotency_key: true } : e;
  });
}

// ---- the hooks ------------------------------------------------------------------------------------

/** The store's parts the agent hooks use (Store satisfies it). */
export interface AgentStore {
  readonly idempotency: KeyValueDb;
  readonly agentAudit: AuditDb;
  transaction<T>(fn: () => T): Promise<T>;
}

/** The API server's `agent` option: where keys and the audit log are kept. */
export interface AgentApiOptions {
  store: AgentStore;
  /** Bound of the audit log (default DEFAULT_AUDIT_MAX_ENTRIES). */
  auditMaxEntries?: number;
  /** Clock in ms (default Date.now). */
  now?: () => number;
}

interface RequestState {
  /** The key's record and fingerprint while this request is the key's first. */
  pending?: { key: string; fingerprint: string };
  replayed?: boolean;
  /** The audit entry is written (or being written). */
  audited?: boolean;
}

/** The request target without an absolute-form scheme and authority. */
function targetOf(url: string): string {
  if (url.startsWith('/')) return url;
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  const rest = m === null ? url : url.slice(m[0].length);
  return rest === '' ? '/' : rest;
}

function pathOnly(url: string): string {
  const target = targetOf(url);
  const q = target.indexOf('?');
  return q < 0 ? target : target.slice(0, q);
}

function payloadBytes(payload: unknown): Uint8Array | undefined {
  if (payload === undefined || payload === null) return new Uint8Array(0);
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) return payload;
  return undefined; // a stream: not kept
}

function keptHeaders(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const v = reply.getHeader(name);
    if (v !== undefined) out[name] = String(v);
  }
  return out;
}

/**
 * Idempotency keys on the table's mutating routes and the agent audit log, as fastify hooks:
 * preHandler (after the body is read; checks the key, replays or marks it in flight), onSend (keeps
 * the first answer and frees the key, writes the audit entry, both durably, before the answer goes
 * out), and the response's close (audits a call whose answer was a stream). Only routes of the
 * table are concerned (their fastify config carries `api`).
 */
export function installAgentHooks(
  app: FastifyInstance,
  opts: AgentApiOptions,
  /** Whether an Authorization header carries the valid admin token. */
  isAdmin: (authorization: string | undefined) => boolean,
): { idempotency: Idempotency; audit: AuditLog } {
  const { store } = opts;
  const clientOf = (r: FastifyRequest): string => clientKey(clientIp(r.socket.remoteAddress, r.headers));
  const idempotency = new Idempotency({
    db: store.idempotency,
    transaction: (fn) => store.transaction(fn),
    now: opts.now,
  });
  const audit = new AuditLog({
    db: store.agentAudit,
    transaction: (fn) => store.transaction(fn),
    maxEntries: opts.auditMaxEntries,
    now: opts.now,
  });
  const states = new WeakMap<FastifyRequest, RequestState>();
  const stateOf = (request: FastifyRequest): RequestState => {
    let st = states.get(request);
    if (st === undefined) states.set(request, (st = {}));
    return st;
  };

  const auditEntry = (request: FastifyRequest, status: number, payload: unknown) => {
    const header = request.headers[IDEMPOTENCY_HEADER];
    const key = typeof header === 'string' ? header.slice(0, MAX_KEY_LENGTH) : undefined;
    return {
      method: request.method,
      route: request.routeOptions.url ?? null,
      path: pathOnly(request.originalUrl),
      ...(key === undefined || key === '' ? {} : { idempotency_key: key }),
      ...auditOutcome(status, payloadBytes(payload)),
      ...(states.get(request)?.replayed === true ? { replayed: true as const } : {}),
    };
  };

  // Callback hooks with a synchronous fast path: they run for every request, and most concern
  // neither keys nor agents (a promise per request is measurable at ingest rates).
  app.addHook('preHandler', (request, reply, done) => {
    const agent = isAgentCall(request.headers);
    const keyed =
      request.headers[IDEMPOTENCY_HEADER] !== undefined &&
      (request.routeOptions.config as { api?: unknown }).api !== undefined &&
      takesIdempotencyKey(request.method, request.routeOptions.url ?? '');
    if (!agent && !keyed) return done();
    const st = stateOf(request);
    // A stream's answer (hijacked) never passes onSend: its call is audited when it ends. A key is not
    // freed here: a client gone while its request runs must not let a retry run it twice (onSend
    // frees it; a request that never gets there frees it after STALE_IN_FLIGHT_MS).
    reply.raw.once('close', () => {
      if (agent && st.audited !== true) {
        st.audited = true;
        audit.append(auditEntry(request, reply.raw.statusCode, undefined)).catch((e: unknown) => {
          request.log.warn({ err: e }, 'agent audit entry not written');
        });
      }
    });
    if (!keyed) return done();
    let begun: Begin;
    let record: string;
    let fingerprint: string;
    try {
      const key = parseIdempotencyKey(request.raw.rawHeaders);
      if (key === undefined) return done();
      const scope = isAdmin(request.headers.authorization) ? 'admin' : `client ${clientOf(request)}`;
      const rawBody = (request as FastifyRequest & { rawBodyText?: string }).rawBodyText;
      fingerprint = requestFingerprint(
        request.method,
        targetOf(request.originalUrl),
        Buffer.from(rawBody ?? '', 'utf8'),
      );
      record = recordKey(scope, key);
      begun = idempotency.begin(record, fingerprint);
    } catch (e) {
      return done(e as Error);
    }
    if (begun.kind === 'run') {
      st.pending = { key: record, fingerprint };
      return done();
    }
    // A replay: answered here, the handler does not run (done is not called).
    st.replayed = true;
    const { answer } = begun;
    reply.code(answer.status).headers(answer.headers).header(REPLAYED_HEADER, 'true');
    reply.send(Buffer.from(answer.body, 'base64'));
    return undefined;
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const st = states.get(request);
    const pending = st?.pending;
    const agent = st?.audited !== true && isAgentCall(request.headers);
    if (pending === undefined && !agent) return done(null, payload);
    const writes: Promise<unknown>[] = [];
    if (st !== undefined && pending !== undefined) {
      st.pending = undefined;
      const body = payloadBytes(payload);
      if (body === undefined) idempotency.release(pending.key);
      else {
        writes.push(
          idempotency
            .finish(pending.key, pending.fingerprint, {
              status: reply.statusCode,
              headers: keptHeaders(reply),
              body,
            })
            .catch((e: unknown) => request.log.warn({ err: e }, 'idempotent answer not kept')),
        );
      }
    }
    if (agent) {
      stateOf(request).audited = true;
      writes.push(
        audit
          .append(auditEntry(request, reply.statusCode, payload))
          .catch((e: unknown) => request.log.warn({ err: e }, 'agent audit entry not written')),
      );
    }
    // Both writes join the same durable batch; the answer goes out once they are on disk.
    void Promise.all(writes).then(() => done(null, payload));
    return undefined;
  });

  app.addHook('onReady', async () => {
    idempotency.start();
  });
  app.addHook('onClose', async () => {
    await idempotency.stop();
  });
  return { idempotency, audit };
}
