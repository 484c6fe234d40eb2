import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerNode } from '../../node-core/node.ts';
import { agentRoutes } from '../../node-core/api/routes/agent.ts';
import { listAudit } from '../../node-core/api/audit-log.ts';
import { defineRoute } from '../../node-core/api/route-table.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { parseDifficulty } from '../../node-core/protocol/pow.ts';
import { Store } from '../../node-core/store/store.ts';
import { apiServerStarter } from '../helpers/api-server.ts';
import { openChatEvents } from '../helpers/chat-kit.ts';
import { type CliNode, kill9, quickNodeArgs, spawnCliNode } from '../helpers/cli-node.ts';
import { Account, http, type Kit, kitOf, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/**
 * The agent audit log (issue #14's agent verbs, decisions D13): calls made with `X-Source: agent`,
 * and only those, are recorded with their time, method, route, path, idempotency key and outcome;
 * `GET /agent/audit` (admin token) lists them newest first with `limit` and `since`; the log is on
 * disk (a restart, even a kill -9 right after the answers, keeps every answered call) and keeps its
 * newest entries up to its bound.
 */

type Json = Record<string, JsonValue>;
const AGENT = { 'x-source': 'agent' };

describe('agent audit log on a real node', () => {
  const dataDir = tempDir('audit-');
  let t: TestNode;
  let kit: Kit;
  let token: string;
  const start = async () => {
    t = await startTestNode({ dataDir });
    kit = await kitOf(t);
    token = t.node.adminToken!;
  };
  const audit = async (query = '', headers: Record<string, string> = {}) =>
    http(kit.url, 'GET', `/agent/audit${query}`, undefined, { authorization: `Bearer ${token}`, ...headers });
  const entries = async (query = '') => {
    const r = await audit(query);
    expect(r.status).toBe(200);
    return (r.body as { entries: Json[] }).entries;
  };

  beforeAll(start, 60_000);
  afterAll(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('records agent calls (and no others) with route, key and outcome, newest first', async () => {
    expect(await entries()).toEqual([]);
    const acct = new Account(kit);
    const claim = stringifyJson(blockToJson(acct.claimBlock(5n * XE), 'node'));
    // Not agent calls: nothing recorded.
    expect((await http(kit.url, 'GET', '/node')).status).toBe(200);
    expect((await http(kit.url, 'GET', '/node', undefined, { 'x-source': 'human' })).status).toBe(200);
    // Agent calls.
    expect((await http(kit.url, 'GET', '/node?x=1', undefined, { 'X-Source': 'Agent' })).status).toBe(200);
    const first = await http(kit.url, 'POST', '/blocks/claim', claim, { ...AGENT, 'idempotency-key': 'a1' });
    expect(first.status).toBe(201);
    const replay = await http(kit.url, 'POST', '/blocks/claim', claim, { ...AGENT, 'idempotency-key': 'a1' });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect((await http(kit.url, 'POST', '/blocks/claim', '{}', AGENT)).status).toBe(400);
    expect((await http(kit.url, 'GET', '/nowhere', undefined, AGENT)).status).toBe(404);
    expect((await http(kit.url, 'GET', '/api/v1/blocks/00', undefined, AGENT)).status).toBe(400);

    const list = await entries();
    expect(list.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      'GET /api/v1/blocks/00 400',
      'GET /nowhere 404',
      'POST /blocks/claim 400',
      'POST /blocks/claim 201',
      'POST /blocks/claim 201',
      'GET /node 200',
    ]);
    for (const e of list) expect(e.source).toBe('agent');
    const times = list.map((e) => e.time_ns as bigint);
    expect(times.every((x) => typeof x === 'bigint')).toBe(true);
    expect([...times].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
    const [proxyErr, notFound, badBlock, replayed, ran, node] = list as [Json, Json, Json, Json, Json, Json];
    expect(node).toMatchObject({ route: '/node', path: '/node' });
    expect(node).not.toHaveProperty('error');
    expect(ran).toMatchObject({ route: '/blocks/claim', idempotency_key: 'a1', status: 201 });
    expect(ran).not.toHaveProperty('replayed');
    expect(replayed).toMatchObject({ route: '/blocks/claim', idempotency_key: 'a1', replayed: true });
    expect(badBlock.error).toMatch(/^invalid request body/);
    expect(badBlock).not.toHaveProperty('idempotency_key');
    expect(notFound).toMatchObject({ route: null, error: 'not found' });
    // The proxy form's wrapped error: its message.
    expect(proxyErr).toMatchObject({ route: '/api/v1/blocks/:hash', status: 400 });
    expect(typeof proxyErr.error).toBe('string');

    // limit and since.
    expect((await entries('?limit=2')).map((e) => e.path)).toEqual(['/api/v1/blocks/00', '/nowhere']);
    const since = await entries(`?since=${String(badBlock.time_ns)}`);
    expect(since.map((e) => e.path)).toEqual(['/api/v1/blocks/00', '/nowhere']);
    expect(await entries(`?since=${String(proxyErr.time_ns)}`)).toEqual([]);
    expect((await audit('?since=-1')).status).toBe(400);
    // Reading the log is no agent call unless it says so.
    expect((await entries()).length).toBe(6);
    // A call to the alias is recorded as sent; its route is the base's, which serves it.
    expect((await http(kit.url, 'GET', '/api/blocks/00', undefined, AGENT)).status).toBe(400);
    const [alias] = await entries('?limit=1');
    expect(alias).toMatchObject({ path: '/api/blocks/00', route: '/api/v1/blocks/:hash', status: 400 });
  });

  it('needs the admin token: 401 without or with a wrong one, 403 on a node without one', async () => {
    expect((await http(kit.url, 'GET', '/agent/audit')).status).toBe(401);
    const wrong = await http(kit.url, 'GET', '/agent/audit', undefined, { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect((await http(kit.url, 'GET', '/api/v1/agent/audit')).status).toBe(401);
    const proxied = await http(kit.url, 'GET', '/api/v1/agent/audit?limit=1', undefined, {
      authorization: `Bearer ${token}`,
    });
    expect(proxied.status).toBe(200);
    expect((proxied.body as { entries: Json[] }).entries).toHaveLength(1);
    const tokenless = await startTestNode({ adminToken: false });
    try {
      const r = await http(tokenless.node.url, 'GET', '/agent/audit');
      expect(r.status).toBe(403);
    } finally {
      await tokenless.stop();
    }
  }, 60_000);

  it('records an agent call whose answer is a stream when the stream ends', async () => {
    const before = (await entries()).length;
    const stream = await openChatEvents(kit.url, '', { ...AGENT, authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    stream.close();
    let list: Json[] = [];
    for (let i = 0; i < 100 && list.length <= before; i++) {
      await new Promise((r) => setTimeout(r, 20));
      list = await entries();
    }
    expect(list.length).toBe(before + 1);
    expect(list[0]).toMatchObject({
      method: 'GET',
      route: '/chat/events',
      path: '/chat/events',
      status: 200,
    });
  });

  it('keeps the log across a restart', async () => {
    const before = await entries();
    expect(before.length).toBeGreaterThan(0);
    await t.stop({ keepData: true });
    await start();
    expect(await entries()).toEqual(before);
  }, 60_000);
});

describe('audit log bound', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const startServer = apiServerStarter({
    routes: [],
    rateLimit: false,
    security: { bindAddress: '127.0.0.1', adminToken: 'secret' },
  });

  it('keeps the newest entries up to its bound, dropping the oldest, also once reopened', async () => {
    const dir = tempDir('audit-bound-');
    dirs.push(dir);
    let store = Store.open({ path: dir });
    stores.push(store);
    const routes = (s: Store) => [
      ...agentRoutes({ store: s } as unknown as LedgerNode),
      defineRoute({
        method: 'POST',
        path: '/echo',
        description: 'answers its body',
        auth: 'none',
        async handler(req) {
          return req.body;
        },
      }),
    ];
    const admin = { authorization: 'Bearer secret' };
    let { base } = await startServer({ routes: routes(store), agent: { store, auditMaxEntries: 3 } });
    for (let i = 1; i <= 5; i++)
      expect(
        (await http(base, 'POST', '/echo', `{"n":${i}}`, { ...AGENT, 'idempotency-key': `k${i}` })).status,
      ).toBe(200);
    const read = async () =>
      ((await http(base, 'GET', '/agent/audit', undefined, admin)).body as { entries: Json[] }).entries;
    expect((await read()).map((e) => e.idempotency_key)).toEqual(['k5', 'k4', 'k3']);
    expect(listAudit(store.agentAudit, { limit: 100 })).toHaveLength(3);

    // Reopened: the bound holds from the entries on disk.
    stores.splice(stores.indexOf(store), 1);
    await store.close();
    store = Store.open({ path: dir });
    stores.push(store);
    ({ base } = await startServer({ routes: routes(store), agent: { store, auditMaxEntries: 3 } }));
    expect((await http(base, 'POST', '/echo', '{"n":6}', { ...AGENT, 'idempotency-key': 'k6' })).status).toBe(
      200,
    );
    expect((await read()).map((e) => e.idempotency_key)).toEqual(['k6', 'k5', 'k4']);
    expect(listAudit(store.agentAudit, { limit: 100 })).toHaveLength(3);
  });
});

// ---- kill -9 -------------------------------------------------------------------------------------

/** The node as a child process, as crash.test.ts runs it. */
const startChild = (dataDir: string): Promise<CliNode> => spawnCliNode(quickNodeArgs(dataDir));

describe('agent audit log and idempotency keys after kill -9', () => {
  const dataDir = tempDir('audit-kill-');
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every answered agent call and every kept answer', async () => {
    const first = await startChild(dataDir);
    children.push(first.child);
    const info = (await http(first.url, 'GET', '/node')).body as Json;
    const kit: Kit = {
      url: first.url,
      networkId: info.network_id as string,
      difficulty: parseDifficulty(info.pow_difficulty as string),
      nodeAddress: info.address as string,
    };
    const acct = new Account(kit);
    const claim = stringifyJson(blockToJson(acct.claimBlock(5n * XE), 'node'));
    const answered: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await http(first.url, 'GET', `/health?i=${i}`, undefined, AGENT);
      answered.push(`GET /health ${r.status}`);
    }
    const ran = await http(first.url, 'POST', '/blocks/claim', claim, {
      ...AGENT,
      'idempotency-key': 'kill',
    });
    expect(ran.status).toBe(201);
    answered.push('POST /blocks/claim 201');
    // Killed the moment the last answer is read: nothing gets a chance to flush afterwards.
    await kill9(first);

    const second = await startChild(dataDir);
    children.push(second.child);
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const list = (
      (await http(second.url, 'GET', '/agent/audit', undefined, { authorization: `Bearer ${token}` }))
        .body as {
        entries: Json[];
      }
    ).entries;
    expect(list.map((e) => `${e.method} ${e.path} ${e.status}`).reverse()).toEqual(answered);
    const replay = await http(second.url, 'POST', '/blocks/claim', claim, { 'idempotency-key': 'kill' });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.status).toBe(ran.status);
    expect(replay.text).toBe(ran.text);
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
  }, 120_000);
});
