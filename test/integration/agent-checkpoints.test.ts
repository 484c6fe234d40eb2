import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, type KeyPair } from '../../node-core/protocol/keys.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { chatEnvelope, chatProof, registerAccount } from '../helpers/chat-kit.ts';
import { http, type HttpResult } from '../helpers/ledger-kit.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { P2P } from '../helpers/p2p.ts';

/**
 * Agent checkpoints (issue #14's agent verbs, decisions D13) on a real node: a checkpoint of the local
 * state (chat store, directory cache, lease holds); the diff from it by area and key; a dry run that
 * changes nothing; a rollback that removes exactly what came since, leaves the ledger and the state
 * chain alone and can itself be undone; checkpoints on disk across a restart; the admin token; 404
 * and 400.
 */

type Json = Record<string, JsonValue>;
interface AreaDiff {
  added: { key: string; value: Json }[];
  removed: { key: string; value: Json }[];
  changed: { key: string; from: Json; to: Json }[];
}
type Diff = Record<string, AreaDiff>;

const EMPTY: AreaDiff = { added: [], removed: [], changed: [] };
/** The window's areas (app store): untouched by these tests (test/integration/app-store.test.ts has them). */
const WINDOW = { settings: 0, address_book: 0, wallet_labels: 0 };
const WINDOW_EMPTY = { settings: EMPTY, address_book: EMPTY, wallet_labels: EMPTY };
const keysOf = (entries: { key: string }[]) => entries.map((e) => e.key).sort();

describe('agent checkpoints on a real node', () => {
  const dataDir = tempDir('checkpoints-');
  let t: TestNode;
  let url: string;
  const alice = generateKeyPair();
  const bob = generateKeyPair();
  const carol = generateKeyPair();
  const admin = () => ({ authorization: `Bearer ${t.node.adminToken!}` });
  const post = (path: string, body: unknown, headers: Record<string, string> = admin()) =>
    http(url, 'POST', path, body, headers);
  const get = (path: string, headers: Record<string, string> = admin()) =>
    http(url, 'GET', path, undefined, headers);

  const start = async () => {
    t = await startTestNode({ ...P2P, dataDir });
    url = t.node.url;
  };

  async function send(from: KeyPair, to: KeyPair, message: string): Promise<string> {
    const r = await http(
      url,
      'POST',
      '/chat/send',
      chatEnvelope(from, to, message, { difficulty: t.node.statechain.pow.chat }),
    );
    expect(r.status, r.text).toBe(200);
    return (r.body as { id: string }).id;
  }

  async function messageIds(k: KeyPair): Promise<string[]> {
    const r = await http(url, 'GET', `/chat/messages?${await chatProof(url, k)}`);
    expect(r.status, r.text).toBe(200);
    return (r.body as { id: string }[]).map((m) => m.id).sort();
  }

  const ledgerState = async () => {
    const node = (await get('/node')).body as Json;
    const tip = await get('/statechain/tip');
    return { blocks: node.block_count, tip: tip.status === 200 ? tip.body : tip.status };
  };

  const diffOf = async (id: string): Promise<Diff> => {
    const r = await get(`/agent/checkpoints/${id}/diff`);
    expect(r.status, r.text).toBe(200);
    return (r.body as unknown as { diff: Diff }).diff;
  };

  beforeAll(start, 60_000);
  afterAll(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  let checkpoint: string;
  let sent: string[];
  let undo: string;
  let before: Awaited<ReturnType<typeof ledgerState>>;
  /** Directory entries at the checkpoint: alice, bob and whatever the node registered of its own. */
  let entries: number;

  it('checkpoints the local state, then diffs exactly what changed since, by area and key', async () => {
    for (const k of [alice, bob]) expect((await registerAccount(url, k, t.node.nodeId)).status).toBe(200);
    const first = await send(alice, bob, 'before the checkpoint');
    entries = ((await get('/directory', {})).body as unknown[]).length;
    expect(entries).toBeGreaterThanOrEqual(2);
    const c = await post('/agent/checkpoints', { name: 'before cleanup' });
    expect(c.status, c.text).toBe(201);
    const body = c.body as Json & { counts: Record<string, number> };
    checkpoint = body.id as string;
    expect(body.name).toBe('before cleanup');
    expect(body.automatic).toBe(false);
    expect(body.counts).toEqual({ chat: 1, directory: entries, lease_holds: 0, ...WINDOW });
    expect((body.not_covered as Json[]).map((n) => n.area)).toEqual(['wallet_keys']);
    expect(await diffOf(checkpoint)).toEqual({
      chat: EMPTY,
      directory: EMPTY,
      lease_holds: EMPTY,
      ...WINDOW_EMPTY,
    });

    before = await ledgerState();
    sent = [await send(alice, bob, 'one'), await send(bob, alice, 'two '.repeat(40))];
    expect((await registerAccount(url, carol, t.node.nodeId)).status).toBe(200);

    const diff = await diffOf(checkpoint);
    expect(keysOf(diff.chat!.added)).toEqual([...sent].sort());
    expect(diff.chat!.removed).toEqual([]);
    expect(diff.chat!.changed).toEqual([]);
    const long = diff.chat!.added.find((e) => e.key === sent[1])!.value;
    expect(long).toMatchObject({ from: bob.pub_key, to: alice.pub_key });
    expect(long.message).toBe('two '.repeat(40).slice(0, 80));
    expect(diff.directory).toEqual({
      added: [{ key: carol.pub_key, value: expect.objectContaining({ node_peer: t.node.nodeId }) }],
      removed: [],
      changed: [],
    });
    expect(diff.lease_holds).toEqual(EMPTY);
    expect(await messageIds(alice)).toEqual([first, ...sent].sort());
  });

  it('a dry run answers the diff it would apply and changes nothing', async () => {
    const r = await post('/agent/rollbacks', { checkpoint, dry_run: true });
    expect(r.status, r.text).toBe(200);
    const body = r.body as Json & { diff: Diff };
    expect(body.applied).toBe(false);
    expect(body.undo_checkpoint).toBeUndefined();
    expect(body.ledger_touched).toBe(false);
    expect(body.statechain_touched).toBe(false);
    // Inverted: what the rollback would remove.
    expect(keysOf(body.diff.chat!.removed)).toEqual([...sent].sort());
    expect(body.diff.chat!.added).toEqual([]);
    expect(keysOf(body.diff.directory!.removed)).toEqual([carol.pub_key]);
    expect(body.totals).toEqual({ added: 0, removed: 3, changed: 0 });
    expect(keysOf((await diffOf(checkpoint)).chat!.added)).toEqual([...sent].sort());
    expect((await get(`/directory/${carol.pub_key}`, {})).status).toBe(200);
    expect((await get('/agent/checkpoints')).body).toMatchObject({ checkpoints: [{ id: checkpoint }] });
  });

  it('rolls back atomically, never the ledger or the state chain; the rollback is undoable', async () => {
    const r = await post('/agent/rollbacks', { checkpoint });
    expect(r.status, r.text).toBe(200);
    const body = r.body as Json & { diff: Diff; undo_checkpoint: Json };
    expect(body.applied).toBe(true);
    expect(body.ledger_touched).toBe(false);
    expect(body.statechain_touched).toBe(false);
    expect(keysOf(body.diff.chat!.removed)).toEqual([...sent].sort());
    undo = body.undo_checkpoint.id as string;
    expect(body.undo_checkpoint).toMatchObject({
      name: `before rollback to ${checkpoint}`,
      automatic: true,
      counts: { chat: 3, directory: entries + 1, lease_holds: 0, ...WINDOW },
    });

    const left = await messageIds(alice);
    expect(left).toHaveLength(1);
    expect(left).not.toContain(sent[0]);
    expect((await get(`/directory/${carol.pub_key}`, {})).status).toBe(404);
    expect((await get(`/directory/${alice.pub_key}`, {})).status).toBe(200);
    expect(await ledgerState()).toEqual(before);
    expect(await diffOf(checkpoint)).toEqual({
      chat: EMPTY,
      directory: EMPTY,
      lease_holds: EMPTY,
      ...WINDOW_EMPTY,
    });

    // Newest first: the undo checkpoint, then the one rolled back to.
    const listed = (await get('/agent/checkpoints')).body as { checkpoints: Json[] };
    expect(listed.checkpoints.map((c) => c.id)).toEqual([undo, checkpoint]);
    expect(listed.checkpoints[0]).not.toHaveProperty('areas');

    // Undo: back to the state before the rollback.
    const back = await post('/agent/rollbacks', { checkpoint: undo });
    expect(back.status, back.text).toBe(200);
    expect(keysOf((back.body as unknown as { diff: Diff }).diff.chat!.added)).toEqual([...sent].sort());
    expect(await messageIds(alice)).toEqual([...left, ...sent].sort());
    expect((await get(`/directory/${carol.pub_key}`, {})).status).toBe(200);
    expect(await diffOf(undo)).toEqual({
      chat: EMPTY,
      directory: EMPTY,
      lease_holds: EMPTY,
      ...WINDOW_EMPTY,
    });
    // A message put back got a new sequence number (never reused).
    const seqs = sent.map((id) => t.node.chatStore.get(id)!.seq!);
    expect(seqs.every((s) => s > 3n)).toBe(true);
    expect(await ledgerState()).toEqual(before);
  });

  it('summarises the two mutating verbs in the proxy form', async () => {
    const c = await post('/api/v1/agent/checkpoints', { name: 'summary' });
    expect(c.status, c.text).toBe(201);
    expect((c.body as Json).tell_user).toBe(
      `Checkpoint 'summary' saved: 3 chat messages, ${entries + 1} directory entries`,
    );
    const dry = await post('/api/v1/agent/rollbacks', { checkpoint, dry_run: true });
    expect((dry.body as Json).tell_user).toBe(
      `Would roll back to checkpoint ${checkpoint} ('before cleanup'): 2 chat messages removed; 1 directory entry removed; nothing changed yet`,
    );
    const none = await post('/api/v1/agent/rollbacks', { checkpoint: (c.body as Json).id });
    const undoId = ((none.body as Json).undo_checkpoint as Json).id as string;
    expect((none.body as Json).tell_user).toBe(
      `Rolled back to checkpoint ${String((c.body as Json).id)} ('summary'): nothing to change; undo with checkpoint ${undoId}`,
    );
  });

  it('an Idempotency-Key replay answers the first rollback again and does not run it twice', async () => {
    const key = { ...admin(), 'idempotency-key': 'rollback-once', 'x-source': 'agent' };
    const c = await post('/agent/checkpoints', { name: 'replay' }, key);
    expect(c.status, c.text).toBe(201);
    const again = await post('/agent/checkpoints', { name: 'replay' }, key);
    expect(again.text).toBe(c.text);
    const names = ((await get('/agent/checkpoints')).body as { checkpoints: Json[] }).checkpoints.map(
      (x) => x.name,
    );
    expect(names.filter((n) => n === 'replay')).toHaveLength(1);
    const audit = (await get('/agent/audit')).body as { entries: Json[] };
    expect(audit.entries[0]).toMatchObject({ route: '/agent/checkpoints', replayed: true, status: 201 });
  });

  it('keeps checkpoints across a restart', async () => {
    const listed = ((await get('/agent/checkpoints')).body as { checkpoints: Json[] }).checkpoints;
    await t.stop({ keepData: true });
    await start();
    const again = ((await get('/agent/checkpoints')).body as { checkpoints: Json[] }).checkpoints;
    expect(again).toEqual(listed);
    // The directory is in memory: gone with the restart, so the diff shows the registrations removed.
    const diff = await diffOf(checkpoint);
    expect(diff.chat).toEqual({ ...EMPTY, added: diff.chat!.added });
    expect(keysOf(diff.chat!.added)).toEqual([...sent].sort());
    expect(keysOf(diff.directory!.removed)).toEqual(expect.arrayContaining([alice.pub_key, bob.pub_key]));
    expect(keysOf(diff.directory!.removed)).not.toContain(carol.pub_key);
  }, 60_000);

  it('needs the admin token: 401 without it or with a wrong one', async () => {
    const paths: [string, string, unknown][] = [
      ['POST', '/agent/checkpoints', { name: 'x' }],
      ['GET', '/agent/checkpoints', undefined],
      ['GET', `/agent/checkpoints/${checkpoint}/diff`, undefined],
      ['POST', '/agent/rollbacks', { checkpoint }],
    ];
    for (const [method, path, body] of paths) {
      for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
        const r: HttpResult = await http(url, method, path, body, headers);
        expect(r.status, `${method} ${path}`).toBe(401);
        expect(r.body).toMatchObject({ error: expect.any(String) });
      }
    }
    expect((await diffOf(checkpoint)).chat!.added).toHaveLength(2);
  });

  it('404 for an unknown checkpoint; 400 for a bad body, in the documented error shape', async () => {
    for (const r of [
      await get('/agent/checkpoints/nosuch0/diff'),
      await post('/agent/rollbacks', { checkpoint: 'nosuch0' }),
      await post('/agent/rollbacks', { checkpoint: 'nosuch0', dry_run: true }),
    ]) {
      expect(r.status, r.text).toBe(404);
      expect(r.body).toEqual({ error: 'checkpoint nosuch0 not found' });
    }
    for (const body of [
      {},
      { checkpoint: 7 },
      { checkpoint: 'Not An Id!' },
      { checkpoint, dry_run: 'yes' },
      { checkpoint, extra: 1 },
      [checkpoint],
    ]) {
      const r = await post('/agent/rollbacks', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ error: expect.any(String) });
    }
    for (const body of [{ name: '' }, { name: 5 }, { name: 'x'.repeat(101) }, { name: 'a\nb' }, 'text']) {
      const r = await post('/agent/checkpoints', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const proxied = await post('/api/v1/agent/rollbacks', {});
    expect(proxied.status).toBe(400);
    expect(proxied.body).toMatchObject({ error: { code: 'bad_request', status: 400 } });
    // Nothing was rolled back by any of these.
    expect((await diffOf(checkpoint)).chat!.added).toHaveLength(2);
  });

  it('403 on a node without an admin token', async () => {
    const tokenless = await startTestNode({ adminToken: false });
    try {
      for (const [method, path] of [
        ['POST', '/agent/checkpoints'],
        ['GET', '/agent/checkpoints'],
        ['POST', '/agent/rollbacks'],
      ] as const) {
        const r = await http(tokenless.node.url, method, path, method === 'POST' ? {} : undefined);
        expect(r.status, `${method} ${path}`).toBe(403);
      }
    } finally {
      await tokenless.stop();
    }
  }, 60_000);
});
