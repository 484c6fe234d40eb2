import { describe, expect, it } from 'vitest';
import {
  AuditLog,
  auditKey,
  auditOutcome,
  isAgentCall,
  listAudit,
  MAX_AUDIT_ERROR_LENGTH,
} from '../../node-core/api/audit-log.ts';
import { MemoryDb } from '../helpers/memory-db.ts';

/** The agent audit log's pure parts: who is an agent, what an outcome says, order, `since`, the bound. */

const transaction = async <T>(fn: () => T): Promise<T> => fn();
const bytes = (s: string) => new TextEncoder().encode(s);
const record = (path: string) => ({ method: 'POST', route: '/x', path, status: 200 });

describe('agent calls', () => {
  it('are those with X-Source: agent, in any case', () => {
    expect(isAgentCall({ 'x-source': 'agent' })).toBe(true);
    expect(isAgentCall({ 'x-source': ' Agent ' })).toBe(true);
    expect(isAgentCall({ 'x-source': 'human' })).toBe(false);
    expect(isAgentCall({ 'x-source': 'agents' })).toBe(false);
    expect(isAgentCall({})).toBe(false);
  });

  it('record the status, and the error message of either form', () => {
    expect(auditOutcome(200, bytes('{"error":"not one"}'))).toEqual({ status: 200 });
    expect(auditOutcome(404, bytes('{"error":"account not found"}'))).toEqual({
      status: 404,
      error: 'account not found',
    });
    expect(auditOutcome(400, bytes('{"error":{"code":"bad_request","message":"bad limit"}}'))).toEqual({
      status: 400,
      error: 'bad limit',
    });
    expect(auditOutcome(502, bytes('<html>'))).toEqual({ status: 502 });
    expect(auditOutcome(500, undefined)).toEqual({ status: 500 });
    const long = auditOutcome(400, bytes(JSON.stringify({ error: 'x'.repeat(2000) })));
    expect(long.error).toHaveLength(MAX_AUDIT_ERROR_LENGTH);
  });
});

describe('AuditLog', () => {
  it('gives every entry a unique, increasing time, and lists newest first', async () => {
    const db = new MemoryDb();
    const log = new AuditLog({ db, transaction, now: () => 5 }); // a clock that stands still
    const a = await log.append(record('/a'));
    const b = await log.append(record('/b'));
    const c = await log.append({ ...record('/c'), idempotency_key: 'k', replayed: true });
    expect(a.time_ns).toBe(5_000_000n);
    expect(b.time_ns).toBe(5_000_001n);
    expect(c.time_ns).toBe(5_000_002n);
    expect(c).toMatchObject({ source: 'agent', idempotency_key: 'k', replayed: true });
    expect(log.list().map((e) => e.path)).toEqual(['/c', '/b', '/a']);
    expect(log.list({ limit: 2 }).map((e) => e.path)).toEqual(['/c', '/b']);
    expect(log.list({ since: a.time_ns }).map((e) => e.path)).toEqual(['/c', '/b']);
    expect(log.list({ since: c.time_ns })).toEqual([]);
    expect(listAudit(db, { since: 0n })).toHaveLength(3);
    expect([...db.map.keys()]).toEqual([auditKey(a.time_ns), auditKey(b.time_ns), auditKey(c.time_ns)]);
    // A log reopened on the same db continues after the last entry, even with a clock behind it.
    const reopened = new AuditLog({ db, transaction, now: () => 1 });
    expect((await reopened.append(record('/d'))).time_ns).toBe(5_000_003n);
  });

  it('drops the oldest entries beyond its bound', async () => {
    const db = new MemoryDb();
    let now = 1;
    const log = new AuditLog({ db, transaction, maxEntries: 3, now: () => now++ });
    for (const p of ['/1', '/2', '/3', '/4', '/5']) await log.append(record(p));
    expect(log.list().map((e) => e.path)).toEqual(['/5', '/4', '/3']);
    expect(db.map.size).toBe(3);
    // A smaller bound on reopening trims at the next append.
    const smaller = new AuditLog({ db, transaction, maxEntries: 2, now: () => now++ });
    await smaller.append(record('/6'));
    expect(smaller.list().map((e) => e.path)).toEqual(['/6', '/5']);
    expect(() => new AuditLog({ db, transaction, maxEntries: 0 })).toThrow(/must be 1 or more/);
  });

  it('counts right after a failed write', async () => {
    const db = new MemoryDb();
    let fail = false;
    const log = new AuditLog({
      db,
      maxEntries: 2,
      transaction: async (fn) => {
        if (fail) throw new Error('disk full');
        return fn();
      },
    });
    await log.append(record('/1'));
    fail = true;
    await expect(log.append(record('/lost'))).rejects.toThrow('disk full');
    fail = false;
    await log.append(record('/2'));
    expect(db.map.size).toBe(2); // the failed one did not count towards the bound
    await log.append(record('/3'));
    expect(log.list().map((e) => e.path)).toEqual(['/3', '/2']);
  });
});
