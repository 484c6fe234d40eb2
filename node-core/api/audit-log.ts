import type { IncomingHttpHeaders } from 'node:http';
import { parseJson, stringifyJson } from '../protocol/json.ts';

/**
 * The agent audit log (decisions D13): every API call made with `X-Source: agent` is appended, one
 * entry per answered call, to the LMDB database `agent_audit` in the node's store, keyed by its time
 * in nanoseconds (20 digits, so keys sort by time). The entry is written in a durable transaction
 * before the answer is sent (installAgentHooks in idempotency.ts), so a call whose answer a client
 * saw is on disk even if the node is killed right after. A call whose answer is a stream (the chat
 * event stream, the tunnel) is written when its stream ends.
 *
 * Rotation: at most `maxEntries` entries (default 10,000); appending one more drops the oldest, in
 * the same transaction. `GET /agent/audit` (admin token) reads it newest first.
 */

export const DEFAULT_AUDIT_MAX_ENTRIES = 10_000;
/** Longest error message kept in an entry. */
export const MAX_AUDIT_ERROR_LENGTH = 500;

export interface AuditEntry {
  /** When the call was answered, Unix ns; unique and increasing within the log. */
  time_ns: bigint;
  source: 'agent';
  method: string;
  /** The route pattern as registered (`/blocks/send`, `/api/v1/chat/messages/:id/retry`); null when none matched. */
  route: string | null;
  /** The request path as sent, without its query string (which may carry proofs). */
  path: string;
  idempotency_key?: string;
  status: number;
  /** The answer's error message, for a 4xx or 5xx with a JSON error body. */
  error?: string;
  /** The answer was an Idempotency-Key replay: the call did not run again. */
  replayed?: true;
}

export type AuditRecord = Omit<AuditEntry, 'time_ns' | 'source'>;

/** The part of an LMDB database (lmdb-js) the log needs. */
export interface AuditDb {
  putSync(key: string, value: string): unknown;
  removeSync(key: string): unknown;
  getKeys(opts?: Record<string, unknown>): Iterable<string>;
  getRange(opts?: Record<string, unknown>): Iterable<{ key: string; value: string }>;
}

export interface AuditLogOptions {
  db: AuditDb;
  /** Runs writes as one durable unit (Store.transaction: resolved once flushed to disk). */
  transaction<T>(fn: () => T): Promise<T>;
  maxEntries?: number;
  /** Clock in ms (default Date.now). */
  now?: () => number;
}

/** Whether a request says it comes from an agent: `X-Source: agent` (any case). */
export function isAgentCall(headers: IncomingHttpHeaders): boolean {
  const v = headers['x-source'];
  return typeof v === 'string' && v.trim().toLowerCase() === 'agent';
}

const NS_DIGITS = 20;
export const auditKey = (timeNs: bigint): string => timeNs.toString().padStart(NS_DIGITS, '0');

/**
 * The outcome of an answer: its status, and for an error status the message of its JSON body (the
 * node form's `{error: "…"}` or the proxy form's `{error: {message}}`), cut at MAX_AUDIT_ERROR_LENGTH.
 */
export function auditOutcome(
  status: number,
  body: Uint8Array | undefined,
): { status: number; error?: string } {
  if (status < 400 || body === undefined || body.length === 0) return { status };
  let message: unknown;
  try {
    const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as { error?: unknown };
    const e = parsed.error;
    message = typeof e === 'object' && e !== null ? (e as { message?: unknown }).message : e;
  } catch {
    return { status };
  }
  return typeof message === 'string'
    ? { status, error: message.slice(0, MAX_AUDIT_ERROR_LENGTH) }
    : { status };
}

export class AuditLog {
  readonly maxEntries: number;
  private readonly db: AuditDb;
  private readonly transaction: AuditLogOptions['transaction'];
  private readonly now: () => number;
  /** The last time given out: keys stay unique and increasing even within one millisecond. */
  private lastNs: bigint;
  /** Entries on disk (counted once at start, then kept by append). */
  private count = 0;

  constructor(opts: AuditLogOptions) {
    const max = opts.maxEntries ?? DEFAULT_AUDIT_MAX_ENTRIES;
    if (!Number.isSafeInteger(max) || max < 1) throw new Error(`audit log bound ${max}: must be 1 or more`);
    this.maxEntries = max;
    this.db = opts.db;
    this.transaction = opts.transaction;
    this.now = opts.now ?? Date.now;
    const last = first(this.db.getKeys({ reverse: true, limit: 1 }));
    this.lastNs = last === undefined ? 0n : BigInt(last);
    this.recount();
  }

  private recount(): void {
    this.count = 0;
    for (const _ of this.db.getKeys()) this.count++;
  }

  /** Appends an entry (durable once resolved), dropping the oldest beyond the bound in the same transaction. */
  async append(record: AuditRecord): Promise<AuditEntry> {
    const wall = BigInt(this.now()) * 1_000_000n;
    const time = wall > this.lastNs ? wall : this.lastNs + 1n;
    this.lastNs = time;
    const entry: AuditEntry = { time_ns: time, source: 'agent', ...record };
    try {
      await this.transaction(() => {
        this.db.putSync(auditKey(time), stringifyJson(entry));
        this.count++;
        if (this.count > this.maxEntries) {
          const oldest = [...this.db.getKeys({ limit: this.count - this.maxEntries })];
          for (const key of oldest) this.db.removeSync(key);
          this.count -= oldest.length;
        }
      });
    } catch (e) {
      this.recount(); // the transaction did not commit: the count may be off
      throw e;
    }
    return entry;
  }

  /** Entries newest first, newer than `since` (ns) when given, at most `limit`. */
  list(opts: { limit?: number; since?: bigint } = {}): AuditEntry[] {
    return listAudit(this.db, opts);
  }
}

/** The log's entries newest first, newer than `since` (ns) when given, at most `limit` (default 100). */
export function listAudit(
  db: Pick<AuditDb, 'getRange'>,
  opts: { limit?: number; since?: bigint } = {},
): AuditEntry[] {
  const { limit = 100, since } = opts;
  const range: Record<string, unknown> = { reverse: true, limit };
  // Reverse ranges run from `start` down to `end`, which is excluded.
  if (since !== undefined) range.end = auditKey(since);
  const out: AuditEntry[] = [];
  for (const { value } of db.getRange(range)) out.push(parseJson(value) as unknown as AuditEntry);
  return out;
}

function first<T>(it: Iterable<T>): T | undefined {
  for (const x of it) return x;
  return undefined;
}
