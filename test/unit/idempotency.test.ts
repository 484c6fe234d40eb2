import { describe, expect, it } from 'vitest';
import { ApiError } from '../../node-core/api/errors.ts';
import {
  decodeAnswer,
  encodeAnswer,
  Idempotency,
  IDEMPOTENCY_TTL_MS,
  isStorable,
  parseIdempotencyKey,
  recordKey,
  requestFingerprint,
  STALE_IN_FLIGHT_MS,
  tablePath,
  takesIdempotencyKey,
  withIdempotencyKeys,
} from '../../node-core/api/idempotency.ts';
import { MemoryDb } from '../helpers/memory-db.ts';

const transaction = async <T>(fn: () => T): Promise<T> => fn();
const body = (s: string) => new TextEncoder().encode(s);

describe('Idempotency-Key header', () => {
  const raw = (...values: string[]) => values.flatMap((v) => ['Idempotency-Key', v]);

  it('is optional, 1 to 255 printable ASCII characters, once', () => {
    expect(parseIdempotencyKey(['Content-Type', 'application/json'])).toBeUndefined();
    expect(parseIdempotencyKey(raw('abc-123'))).toBe('abc-123');
    expect(parseIdempotencyKey(['idempotency-key', 'x y ~!'])).toBe('x y ~!');
    expect(parseIdempotencyKey(raw('k'.repeat(255)))).toBe('k'.repeat(255));
    for (const bad of ['', 'k'.repeat(256), 'caf\u00e9', 'tab\there', 'nul\u0000', '\u007f']) {
      expect(() => parseIdempotencyKey(raw(bad)), JSON.stringify(bad)).toThrow(
        /^invalid Idempotency-Key: must be 1 to 255 printable ASCII characters$/,
      );
    }
    try {
      parseIdempotencyKey(raw('a', 'a'));
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).status).toBe(400);
      expect((e as ApiError).message).toBe('Idempotency-Key sent more than once');
    }
  });

  it('is taken by mutating table routes of both forms, except the tunnel', () => {
    expect(tablePath('/api/v1/chat/send')).toBe('/chat/send');
    expect(tablePath('/api/chat/send')).toBe('/chat/send');
    expect(tablePath('/api/v1')).toBe('/');
    expect(tablePath('/apiary')).toBe('/apiary');
    expect(takesIdempotencyKey('POST', '/blocks/send')).toBe(true);
    expect(takesIdempotencyKey('POST', '/api/v1/chat/messages/:id/retry')).toBe(true);
    expect(takesIdempotencyKey('PUT', '/x')).toBe(true);
    expect(takesIdempotencyKey('DELETE', '/x')).toBe(true);
    expect(takesIdempotencyKey('GET', '/node')).toBe(false);
    expect(takesIdempotencyKey('HEAD', '/node')).toBe(false);
    expect(takesIdempotencyKey('POST', '/tunnel/:lease/tcp')).toBe(false);
    expect(takesIdempotencyKey('POST', '/api/v1/tunnel/:lease/tcp')).toBe(false);
    expect(takesIdempotencyKey('POST', '/api/tunnel/:lease/tcp')).toBe(false);
  });

  it('is marked on the entries of routes that take it', () => {
    const routes = [
      { method: 'GET', path: '/node' },
      { method: 'POST', path: '/chat/send' },
      { method: 'POST', path: '/tunnel/:lease/tcp' },
    ];
    const entries = routes.map((r) => ({ m: r.method }));
    expect(withIdempotencyKeys(entries, routes)).toEqual([
      { m: 'GET' },
      { m: 'POST', idempotency_key: true },
      { m: 'POST' },
    ]);
    expect(withIdempotencyKeys(entries, [])).toEqual(entries);
  });
});

describe('request identity', () => {
  it('fingerprints method, target and body bytes', () => {
    const f = requestFingerprint('POST', '/blocks/send', body('{"a":1}'));
    expect(f).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint('POST', '/blocks/send', body('{"a":1}'))).toBe(f);
    expect(requestFingerprint('POST', '/blocks/send', body('{"a": 1}'))).not.toBe(f);
    expect(requestFingerprint('POST', '/blocks/claim', body('{"a":1}'))).not.toBe(f);
    expect(requestFingerprint('PUT', '/blocks/send', body('{"a":1}'))).not.toBe(f);
    expect(requestFingerprint('POST', '/blocks/send?x=1', body('{"a":1}'))).not.toBe(f);
  });

  it('keys records by client scope and key', () => {
    const k = recordKey('client 192.0.2.1', 'k1');
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(recordKey('client 192.0.2.1', 'k1')).toBe(k);
    expect(recordKey('client 192.0.2.2', 'k1')).not.toBe(k);
    expect(recordKey('admin', 'k1')).not.toBe(k);
    // The separator keeps scope and key apart.
    expect(recordKey('ab', 'c')).not.toBe(recordKey('a', 'bc'));
  });

  it('keeps every answer below 500', () => {
    expect([200, 201, 202, 400, 401, 404, 408, 409, 422, 499].every(isStorable)).toBe(true);
    expect([500, 502, 503, 504].some(isStorable)).toBe(false);
  });

  it('encodes a kept answer with its time first', () => {
    const a = {
      fingerprint: 'f',
      status: 201,
      headers: { 'content-type': 'x' },
      body: 'AAE=',
      created: 1234,
    };
    const text = encodeAnswer(a);
    expect(text.startsWith('1234\n')).toBe(true);
    expect(decodeAnswer(text)).toEqual(a);
  });
});

describe('Idempotency records', () => {
  function make() {
    const db = new MemoryDb();
    const clock = { now: 1_000_000 };
    const idem = new Idempotency({ db, transaction, now: () => clock.now });
    return { db, clock, idem };
  }
  const answer = (status: number, text = '{"ok":true}') => ({
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: body(text),
  });

  it('runs the first request, then replays it; another request with the key is 422', async () => {
    const { idem } = make();
    expect(idem.begin('k', 'f1')).toEqual({ kind: 'run' });
    await idem.finish('k', 'f1', answer(201, '{"hash":"ab"}'));
    const again = idem.begin('k', 'f1');
    expect(again.kind).toBe('replay');
    if (again.kind !== 'replay') return;
    expect(again.answer.status).toBe(201);
    expect(Buffer.from(again.answer.body, 'base64').toString()).toBe('{"hash":"ab"}');
    expect(again.answer.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
    expect(() => idem.begin('k', 'f2')).toThrow(new ApiError('idempotency_mismatch').message);
    // Another key is another record.
    expect(idem.begin('k2', 'f2')).toEqual({ kind: 'run' });
  });

  it('answers 409 while the first runs, until it finishes, is released, or goes stale', async () => {
    const { idem, clock } = make();
    idem.begin('k', 'f');
    for (const fp of ['f', 'other']) {
      try {
        idem.begin('k', fp);
        expect.unreachable();
      } catch (e) {
        expect((e as ApiError).code).toBe('idempotency_in_progress');
        expect((e as ApiError).status).toBe(409);
      }
    }
    idem.release('k');
    expect(idem.begin('k', 'f')).toEqual({ kind: 'run' });
    clock.now += STALE_IN_FLIGHT_MS;
    expect(idem.begin('k', 'f')).toEqual({ kind: 'run' });
  });

  it('keeps no 5xx: the key is free for a retry', async () => {
    const { idem, db } = make();
    idem.begin('k', 'f');
    await idem.finish('k', 'f', answer(503));
    expect(db.map.size).toBe(0);
    expect(idem.begin('k', 'f')).toEqual({ kind: 'run' });
    await idem.finish('k', 'f', answer(400, '{"error":"bad"}'));
    expect(idem.begin('k', 'f').kind).toBe('replay');
  });

  it('frees the key when the write fails, and says so', async () => {
    const db = new MemoryDb();
    const idem = new Idempotency({
      db,
      transaction: () => Promise.reject(new Error('disk full')),
    });
    idem.begin('k', 'f');
    await expect(idem.finish('k', 'f', answer(200))).rejects.toThrow('disk full');
    expect(idem.begin('k', 'f')).toEqual({ kind: 'run' });
  });

  it('forgets answers after 24 hours, and prunes them', async () => {
    const { idem, db, clock } = make();
    idem.begin('old', 'f');
    await idem.finish('old', 'f', answer(200));
    clock.now += IDEMPOTENCY_TTL_MS / 2;
    idem.begin('new', 'f');
    await idem.finish('new', 'f', answer(200));
    clock.now += IDEMPOTENCY_TTL_MS / 2;
    expect(idem.lookup('old')).toBeUndefined();
    expect(idem.lookup('new')).toBeDefined();
    expect(idem.begin('old', 'another body')).toEqual({ kind: 'run' }); // expired: a new request
    idem.release('old');
    expect(await idem.prune()).toBe(1);
    // The record kept and its order entry (`~<created ms, 15 digits>:<record key>`).
    const created = String(1_000_000 + IDEMPOTENCY_TTL_MS / 2).padStart(15, '0');
    expect([...db.map.keys()].sort()).toEqual(['new', `~${created}:new`]);
  });

  it('prunes from the order entries: the live records are not read', async () => {
    const db = new MemoryDb();
    const clock = { now: 1_000_000 };
    const idem = new Idempotency({ db, transaction, now: () => clock.now });
    for (let i = 0; i < 3; i++) {
      idem.begin(`old${i}`, 'f');
      await idem.finish(`old${i}`, 'f', answer(200));
    }
    clock.now += IDEMPOTENCY_TTL_MS / 2;
    for (let i = 0; i < 500; i++) {
      idem.begin(`live${i}`, 'f');
      await idem.finish(`live${i}`, 'f', answer(200));
    }
    clock.now += IDEMPOTENCY_TTL_MS / 2;
    const records = new Set<string>();
    const { get, getRange } = db;
    db.get = (key: string) => (records.add(key), get.call(db, key));
    db.getRange = function* (opts) {
      for (const e of getRange.call(db, opts)) {
        if (!e.key.startsWith('~')) records.add(e.key);
        yield e;
      }
    };
    expect(await idem.prune()).toBe(3);
    expect([...records].sort()).toEqual(['old0', 'old1', 'old2']);
    expect(db.map.size).toBe(1000);
    expect(idem.lookup('live0')).toBeDefined();
  });

  it('a key used again after it expired keeps its new answer when the old entry is pruned', async () => {
    const { idem, db, clock } = make();
    idem.begin('k', 'f');
    await idem.finish('k', 'f', answer(200, '{"first":true}'));
    clock.now += IDEMPOTENCY_TTL_MS + 1;
    expect(idem.begin('k', 'f')).toEqual({ kind: 'run' });
    await idem.finish('k', 'f', answer(200, '{"second":true}'));
    clock.now += 1;
    expect(await idem.prune()).toBe(0);
    const kept = idem.begin('k', 'f');
    expect(kept.kind).toBe('replay');
    expect(Buffer.from((kept as { answer: { body: string } }).answer.body, 'base64').toString()).toBe(
      '{"second":true}',
    );
    expect([...db.map.keys()].filter((k) => k.startsWith('~'))).toHaveLength(1);
  });

  it('stop ends a pass under way after its slice; the next start finishes it', async () => {
    const db = new MemoryDb();
    for (let i = 0; i < 2500; i++) {
      const created = 0;
      db.putSync(
        `r${String(i).padStart(5, '0')}`,
        encodeAnswer({ fingerprint: 'f', status: 200, headers: {}, body: '', created }),
      );
    }
    const clock = { now: IDEMPOTENCY_TTL_MS };
    const idem = new Idempotency({ db, transaction, now: () => clock.now, pruneIntervalMs: 60_000 });
    idem.start();
    await idem.stop();
    expect(db.map.size).toBe(1500);
    idem.start();
    await new Promise((r) => setTimeout(r, 50));
    await idem.stop();
    expect(db.map.size).toBe(0);
  });

  it("start's pass reads every record: an expired one goes, a live one without its order entry gets it", async () => {
    const db = new MemoryDb();
    const clock = { now: IDEMPOTENCY_TTL_MS };
    // As a version before the order entries kept them: records only.
    const kept = (created: number) =>
      encodeAnswer({ fingerprint: 'f', status: 200, headers: {}, body: '', created });
    db.putSync('expired', kept(0));
    db.putSync('live', kept(IDEMPOTENCY_TTL_MS - 5));
    const idem = new Idempotency({ db, transaction, now: () => clock.now, pruneIntervalMs: 60_000 });
    idem.start();
    await idem.stop();
    expect([...db.map.keys()].sort()).toEqual([
      'live',
      `~${String(IDEMPOTENCY_TTL_MS - 5).padStart(15, '0')}:live`,
    ]);
    // From then on the order entries find it.
    clock.now += IDEMPOTENCY_TTL_MS;
    expect(await idem.prune()).toBe(1);
    expect(db.map.size).toBe(0);
  });

  it('prunes on start and on its timer until stopped', async () => {
    const db = new MemoryDb();
    const clock = { now: 0 };
    db.putSync(
      'x',
      encodeAnswer({ fingerprint: 'f', status: 200, headers: {}, body: '', created: -IDEMPOTENCY_TTL_MS }),
    );
    const idem = new Idempotency({ db, transaction, now: () => clock.now, pruneIntervalMs: 10 });
    idem.start();
    await idem.stop();
    expect(db.map.size).toBe(0);
    db.putSync('y', encodeAnswer({ fingerprint: 'f', status: 200, headers: {}, body: '', created: 0 }));
    clock.now = IDEMPOTENCY_TTL_MS;
    idem.start();
    await new Promise((r) => setTimeout(r, 40));
    await idem.stop();
    expect(db.map.size).toBe(0);
  });
});
