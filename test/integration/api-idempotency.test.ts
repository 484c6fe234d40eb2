import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { Store } from '../../node-core/store/store.ts';
import { ApiError } from '../../node-core/api/errors.ts';
import { defineRoute } from '../../node-core/api/route-table.ts';
import type { RouteDef } from '../../node-core/api/route-table.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { type JsonValue, stringifyJson } from '../../node-core/protocol/json.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { signDirectoryRegistration } from '../../node-core/protocol/payloads.ts';
import { apiServerStarter } from '../helpers/api-server.ts';
import { chatEnvelope } from '../helpers/chat-kit.ts';
import { Account, http, type HttpResult, type Kit, kitOf, nowNs, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/**
 * Idempotency-Key on the mutating routes (issue #14's agent verbs, decisions D13): a replay returns
 * the first answer byte for byte with Idempotency-Replayed: true and runs nothing again, also after a
 * restart; another request with the key is 422, a key still in flight 409, a bad key 400; both forms;
 * keys are per client; the manifest, discovery and OpenAPI documents show the header.
 */

type Json = Record<string, JsonValue>;
const KEY = 'idempotency-key';
const REPLAYED = 'idempotency-replayed';

/** The parts of an answer a replay must repeat byte for byte. */
const answerOf = (r: HttpResult) => ({
  status: r.status,
  contentType: r.headers.get('content-type'),
  text: r.text,
});

describe('Idempotency-Key on a real node', () => {
  const dataDir = tempDir('idem-');
  let t: TestNode;
  let kit: Kit;
  /** Blocks the ledger was asked to apply, counted by wrapping its submit. */
  let submits = 0;

  async function start(): Promise<void> {
    t = await startTestNode({ dataDir });
    kit = await kitOf(t);
    const ledger = t.node.ledger;
    const submit = ledger.submit.bind(ledger);
    ledger.submit = ((...args: Parameters<typeof submit>) => {
      submits++;
      return submit(...args);
    }) as typeof ledger.submit;
  }

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    http(kit.url, 'POST', path, typeof body === 'string' ? body : stringifyJson(body), headers);
  const blockBody = (b: Block) => stringifyJson(blockToJson(b, 'node'));
  const chainLength = async (address: string) =>
    Number((await http(kit.url, 'GET', `/accounts/${address}/chain?limit=1`)).headers.get('x-total-count'));

  beforeAll(start, 60_000);
  afterAll(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('replays a block submission byte for byte, runs it once, and again after a restart', async () => {
    const acct = new Account(kit);
    const claim = acct.claimBlock(10n * XE);
    const before = submits;
    const first = await post('/blocks/claim', blockBody(claim), { [KEY]: 'claim-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get(REPLAYED)).toBeNull();
    acct.advance(claim);

    const replay = await post('/blocks/claim', blockBody(claim), { [KEY]: 'claim-1' });
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect(replay.headers.get(REPLAYED)).toBe('true');
    expect(submits - before).toBe(1); // the replay never reached the ledger
    expect(await chainLength(acct.address)).toBe(1);

    await t.stop({ keepData: true });
    await start();
    const atRestart = submits;
    const afterRestart = await post('/blocks/claim', blockBody(claim), { [KEY]: 'claim-1' });
    expect(answerOf(afterRestart)).toEqual(answerOf(first));
    expect(afterRestart.headers.get(REPLAYED)).toBe('true');
    expect(submits).toBe(atRestart); // nothing ran on the restarted node
    expect(await chainLength(acct.address)).toBe(1);
  }, 60_000);

  it('refuses the same key with another body (422, documented shape), storing nothing', async () => {
    const acct = new Account(kit);
    const a = acct.claimBlock(5n * XE);
    const b = acct.claimBlock(6n * XE);
    expect((await post('/blocks/claim', blockBody(a), { [KEY]: 'k-mismatch' })).status).toBe(201);
    const before = submits;
    const other = await post('/blocks/claim', blockBody(b), { [KEY]: 'k-mismatch' });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/json/);
    expect(other.body).toEqual({ error: new ApiError('idempotency_mismatch').message });
    expect(submits).toBe(before);
    expect((await http(kit.url, 'GET', `/blocks/${b.hash!}`)).status).toBe(404);
    // The same body on another path is another request too.
    const elsewhere = await post('/blocks/send', blockBody(a), { [KEY]: 'k-mismatch' });
    expect(elsewhere.status).toBe(422);
  });

  it('runs concurrent requests with one key once: the others get 409 or the replay', async () => {
    const acct = new Account(kit);
    const claim = acct.claimBlock(3n * XE);
    const before = submits;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post('/blocks/claim', blockBody(claim), { [KEY]: 'k-race' })),
    );
    const ran = answers.filter((r) => r.status === 201 && r.headers.get(REPLAYED) === null);
    expect(ran).toHaveLength(1);
    for (const r of answers) {
      if (r === ran[0]) continue;
      if (r.status === 409) {
        expect(r.body).toEqual({ error: new ApiError('idempotency_in_progress').message });
      } else {
        expect(r.headers.get(REPLAYED)).toBe('true');
        expect(answerOf(r)).toEqual(answerOf(ran[0]!));
      }
    }
    expect(submits - before).toBe(1);
    expect(await chainLength(acct.address)).toBe(1);
  });

  it('replays a chat send: no second message, no duplicate refusal', async () => {
    const [alice, bob] = [generateKeyPair(), generateKeyPair()];
    for (const k of [alice, bob]) {
      const reg = signDirectoryRegistration(
        { account: k.pub_key, node_peer: t.node.nodeId, timestamp: nowNs() },
        hexToBytes(k.seed_hex),
      );
      expect((await post('/directory/register', reg, { [KEY]: `reg-${k.pub_key}` })).status).toBe(200);
    }
    const env = chatEnvelope(alice, bob, 'hello once', { difficulty: t.node.statechain.pow.chat });
    const first = await post('/chat/send', env, { [KEY]: 'chat-1' });
    expect(first.status).toBe(200);
    expect((first.body as Json).ok).toBe(true);
    const replay = await post('/chat/send', env, { [KEY]: 'chat-1' });
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect(replay.headers.get(REPLAYED)).toBe('true');
    expect(t.node.chatStore.list(bob.pub_key).total).toBe(1);
    // Without the key the node does run it again, and refuses the duplicate: the replay did not run.
    const unkeyed = await post('/chat/send', env);
    expect(unkeyed.status).toBe(400);
    expect((unkeyed.body as Json).error).toBe('duplicate envelope');
  });

  it('works in the proxy form, with the proxy error shape and its headers', async () => {
    const acct = new Account(kit);
    const claim = acct.claimBlock(4n * XE);
    const first = await post('/api/v1/blocks/claim', blockBody(claim), { [KEY]: 'proxy-1' });
    expect(first.status).toBe(201);
    const replay = await post('/api/v1/blocks/claim', blockBody(claim), { [KEY]: 'proxy-1' });
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect(replay.headers.get(REPLAYED)).toBe('true');
    expect(replay.headers.get('x-api-version')).toBe('1');
    const other = await post('/api/v1/blocks/claim', blockBody(acct.claimBlock(1n * XE)), {
      [KEY]: 'proxy-1',
    });
    expect(other.status).toBe(422);
    expect((other.body as { error: Json }).error).toMatchObject({
      code: 'bad_request',
      status: 422,
      message: new ApiError('idempotency_mismatch').message,
    });
    expect(other.headers.get('x-api-version')).toBe('1');
    // A key is used in one form: the node form's path is another request.
    expect((await post('/blocks/claim', blockBody(claim), { [KEY]: 'proxy-1' })).status).toBe(422);
    // And the alias's path is another request too, though the alias is served by the base's route.
    expect((await post('/api/blocks/claim', blockBody(claim), { [KEY]: 'proxy-1' })).status).toBe(422);
    const aliasClaim = blockBody(new Account(kit).claimBlock(2n * XE));
    const viaAlias = await post('/api/blocks/claim', aliasClaim, { [KEY]: 'alias-1' });
    expect(viaAlias.status).toBe(201);
    const aliasReplay = await post('/api/blocks/claim', aliasClaim, { [KEY]: 'alias-1' });
    expect(answerOf(aliasReplay)).toEqual(answerOf(viaAlias));
    expect(aliasReplay.headers.get(REPLAYED)).toBe('true');
    expect((await post('/api/v1/blocks/claim', aliasClaim, { [KEY]: 'alias-1' })).status).toBe(422);
  });

  it('refuses a bad key with 400 and runs nothing', async () => {
    const acct = new Account(kit);
    const claim = acct.claimBlock(2n * XE);
    const before = submits;
    for (const key of ['x'.repeat(256), 'caf\u00e9']) {
      const r = await post('/blocks/claim', blockBody(claim), { [KEY]: key });
      expect(r.status).toBe(400);
      expect((r.body as Json).error).toMatch(/^invalid Idempotency-Key: must be 1 to 255 printable ASCII/);
    }
    expect(submits).toBe(before);
    const longest = await post('/blocks/claim', blockBody(claim), { [KEY]: 'y'.repeat(255) });
    expect(longest.status).toBe(201);
  });

  it('keeps keys per client: another address, or the admin token, is another scope', async () => {
    const acct = new Account(kit);
    const claim = acct.claimBlock(7n * XE);
    const other = acct.claimBlock(8n * XE);
    // The node believes X-Forwarded-For from loopback (a local reverse proxy), as rate limits do.
    const from = (ip: string) => ({ [KEY]: 'shared', 'x-forwarded-for': ip });
    expect((await post('/blocks/claim', blockBody(claim), from('192.0.2.1'))).status).toBe(201);
    const sameClient = await post('/blocks/claim', blockBody(other), from('192.0.2.1'));
    expect(sameClient.status).toBe(422);
    // Another client with the same key runs its own request: it cannot read the first one's answer.
    const before = submits;
    const elsewhere = await post('/blocks/claim', blockBody(other), from('192.0.2.2'));
    expect(elsewhere.headers.get(REPLAYED)).toBeNull();
    expect(submits - before).toBe(1);
    const admin = await post('/blocks/claim', blockBody(other), {
      ...from('192.0.2.1'),
      authorization: `Bearer ${t.node.adminToken!}`,
    });
    expect(admin.status).not.toBe(422);
    expect(admin.headers.get(REPLAYED)).toBeNull();
    expect(submits - before).toBe(2);
  });

  it('shows the header on mutating routes in the manifest, the discovery document and OpenAPI', async () => {
    type Entry = { method: string; path: string; idempotency_key?: boolean };
    const find = (list: Entry[], method: string, path: string) =>
      list.find((e) => e.method === method && e.path === path);
    for (const [doc, base] of [
      ['/', ''],
      ['/api/v1', ''],
    ] as const) {
      const endpoints = ((await http(kit.url, 'GET', doc)).body as { endpoints: Entry[] }).endpoints;
      expect(find(endpoints, 'POST', `${base}/chat/send`)?.idempotency_key).toBe(true);
      expect(find(endpoints, 'POST', `${base}/blocks/send`)?.idempotency_key).toBe(true);
      expect(find(endpoints, 'POST', `${base}/directory/register`)?.idempotency_key).toBe(true);
      expect(find(endpoints, 'GET', `${base}/node`)).toBeDefined();
      expect(find(endpoints, 'GET', `${base}/node`)?.idempotency_key).toBeUndefined();
      // The tunnel's answer is a stream: exempt.
      expect(find(endpoints, 'POST', `${base}/tunnel/{lease}/tcp`)).toBeDefined();
      expect(find(endpoints, 'POST', `${base}/tunnel/{lease}/tcp`)?.idempotency_key).toBeUndefined();
    }
    for (const doc of ['/openapi.json', '/api/v1/openapi.json']) {
      const paths = (await http(kit.url, 'GET', doc)).body as Record<string, Record<string, Json>>;
      const params = (op: Json | undefined) => (op?.parameters ?? []) as { name: string; in: string }[];
      const all = (paths as unknown as { paths: Record<string, Record<string, Json>> }).paths;
      const send = all['/chat/send']!.post;
      expect(params(send)).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
      expect(Object.keys(send!.responses as Json)).toEqual(expect.arrayContaining(['409', '422']));
      expect(params(all['/node']!.get).some((p) => p.name === 'Idempotency-Key')).toBe(false);
      expect(params(all['/tunnel/{lease}/tcp']!.post).some((p) => p.name === 'Idempotency-Key')).toBe(false);
    }
  });
});

describe('Idempotency-Key hooks on an API server of test routes', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const start = apiServerStarter({ routes: [], rateLimit: false, security: { bindAddress: '127.0.0.1' } });

  function openStore(): Store {
    const dir = tempDir('idem-store-');
    dirs.push(dir);
    const s = Store.open({ path: dir });
    stores.push(s);
    return s;
  }

  it('keeps no 5xx answer (the client may retry), and frees the key', async () => {
    let calls = 0;
    const routes: RouteDef[] = [
      defineRoute({
        method: 'POST',
        path: '/flaky',
        description: 'fails the first time, then answers',
        auth: 'none',
        async handler() {
          calls++;
          if (calls === 1) throw new Error('boom');
          if (calls === 2) throw ApiError.unavailable('try later', 1);
          return { calls };
        },
      }),
    ];
    const { base } = await start({ routes, agent: { store: openStore() } });
    const call = () => http(base, 'POST', '/flaky', '{}', { [KEY]: 'k' });
    expect((await call()).status).toBe(500);
    expect((await call()).status).toBe(503);
    const ok = await call();
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ calls: 3 });
    const replay = await call();
    expect(replay.headers.get(REPLAYED)).toBe('true');
    expect(replay.text).toBe(ok.text);
    expect(calls).toBe(3);
  });

  it('answers 409 while the first request runs (also once its client gave up), then replays it; GET ignores the key', async () => {
    let release!: () => void;
    const gates = [new Promise<void>((r) => (release = r))];
    let runs = 0;
    const routes: RouteDef[] = [
      defineRoute({
        method: 'POST',
        path: '/slow',
        description: 'waits for the test',
        auth: 'none',
        async handler(_req, reply) {
          await gates[runs++];
          reply.header('location', '/slow/1');
          reply.code(201);
          return { runs };
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/count',
        description: 'how many runs',
        auth: 'none',
        async handler() {
          return { runs };
        },
      }),
    ];
    const { base } = await start({ routes, agent: { store: openStore() } });
    const first = http(base, 'POST', '/slow', '{"a":1}', { [KEY]: 'k' });
    await new Promise((r) => setTimeout(r, 50));
    const second = await http(base, 'POST', '/slow', '{"a":1}', { [KEY]: 'k' });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({ error: new ApiError('idempotency_in_progress').message });
    release();
    const done = await first;
    expect(done.status).toBe(201);
    const replay = await http(base, 'POST', '/slow', '{"a":1}', { [KEY]: 'k' });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('location')).toBe('/slow/1');
    expect(replay.text).toBe(done.text);
    expect(runs).toBe(1);
    // A client that gives up while its request runs, and retries: still one run.
    let release2!: () => void;
    const gate2 = new Promise<void>((r) => (release2 = r));
    gates.push(gate2);
    const ac = new AbortController();
    const abandoned = fetch(`${base}/slow`, {
      method: 'POST',
      body: '{"b":2}',
      headers: { [KEY]: 'gone' },
      signal: ac.signal,
    }).catch(() => 'aborted');
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    expect(await abandoned).toBe('aborted');
    await new Promise((r) => setTimeout(r, 50));
    expect((await http(base, 'POST', '/slow', '{"b":2}', { [KEY]: 'gone' })).status).toBe(409);
    release2();
    let retried = await http(base, 'POST', '/slow', '{"b":2}', { [KEY]: 'gone' });
    for (let i = 0; i < 50 && retried.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 20));
      retried = await http(base, 'POST', '/slow', '{"b":2}', { [KEY]: 'gone' });
    }
    expect(retried.status).toBe(201);
    expect(retried.headers.get(REPLAYED)).toBe('true');
    expect(retried.body).toEqual({ runs: 2 });
    expect(runs).toBe(2);
    // A key on a read changes nothing (reads are idempotent by nature).
    const read = await http(base, 'GET', '/count', undefined, { [KEY]: 'k' });
    expect(read.headers.get(REPLAYED)).toBeNull();
    expect(read.body).toEqual({ runs: 2 });
  });
});
