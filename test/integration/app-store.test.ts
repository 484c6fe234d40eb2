import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { networkInterfaces } from 'node:os';
import { http } from '../helpers/ledger-kit.ts';
import { rawHttp } from '../helpers/raw-http.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';

/**
 * The window's app store and session on a real node (issue #16 "The wallet must never look gone";
 * issue #14 checkpoints of settings, address book and labels): the session cookie traded for the admin
 * token and good only with `X-Ledger-App: 1`; documents with versions, shape checks and stale-write
 * refusals that change nothing; the same documents and the same cookie after a restart on another
 * port; and an agent checkpoint, changes, diff, dry run, rollback, and an empty diff again.
 */

type Json = Record<string, JsonValue>;
const ADDR_A = 'a'.repeat(64);
const ADDR_B = 'b'.repeat(64);
const VAULT = JSON.stringify({ version: 1, kdf: {}, cipher: 'x', nonce: '00', ciphertext: 'ff' });

describe('app store and window session', () => {
  const dataDir = tempDir('app-store-');
  let t: TestNode;
  let url: string;
  let cookie = '';
  const bearer = () => ({ authorization: `Bearer ${t.node.adminToken!}` });
  const session = () => ({ cookie, 'x-ledger-app': '1' });
  const get = (path: string, headers: Record<string, string> = session()) =>
    http(url, 'GET', path, undefined, headers);
  const post = (path: string, body: unknown, headers: Record<string, string> = session()) =>
    http(url, 'POST', path, body, headers);
  const documents = async () => {
    const r = await get('/app/store');
    expect(r.status).toBe(200);
    return r.body as { revision: number; documents: Json[] };
  };

  beforeAll(async () => {
    t = await startTestNode({ dataDir });
    url = t.node.url;
  });
  afterAll(async () => {
    await t?.stop({ keepData: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('trades the admin token for a session cookie; a wrong token gets 401 and no cookie', async () => {
    expect((await get('/app/session', {})).body).toMatchObject({ authenticated: false });
    const wrong = await post('/app/session', { token: 'not-the-token' }, {});
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'invalid or missing admin token' });
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect((await post('/app/session', {}, {})).status).toBe(400);

    const ok = await post('/app/session', { token: t.node.adminToken! }, {});
    expect(ok.status).toBe(200);
    const set = ok.headers.get('set-cookie')!;
    expect(set).toMatch(
      /^ledger_app_[0-9a-f]{12}=[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/,
    );
    expect(set).not.toContain(t.node.adminToken!);
    cookie = set.split(';')[0]!;
    expect((await get('/app/session')).body).toMatchObject({
      authenticated: true,
      admin_token_file: t.node.adminTokenFile!,
    });
  });

  it('counts the cookie only with X-Ledger-App: 1 (another page on 127.0.0.1 cannot add it)', async () => {
    expect((await get('/app/store', { cookie })).status).toBe(401);
    expect((await get('/app/store', { cookie, 'x-ledger-app': '0' })).status).toBe(401);
    expect((await get('/app/store', { cookie: `${cookie}0`, 'x-ledger-app': '1' })).status).toBe(401);
    expect((await get('/app/store', {})).status).toBe(401);
    expect((await get('/app/store')).status).toBe(200);
    expect((await get('/app/store', bearer())).status).toBe(200);
    // The session opens the operator routes too: it stands for the token.
    expect((await get('/agent/checkpoints')).status).toBe(200);
  });

  it('stores documents with versions; an ETag answers 304 until something changes', async () => {
    expect(await documents()).toEqual({ revision: 0, documents: [] });
    const w = await post('/app/store/settings', { value: { theme: 'dark', autoLockMinutes: 5 } });
    expect(w.status).toBe(200);
    expect(w.body).toEqual({ key: 'settings', version: 1, revision: 1 });
    const r = await get('/app/store');
    const etag = r.headers.get('etag')!;
    expect((await get('/app/store', { ...session(), 'if-none-match': etag })).status).toBe(304);
    await post('/app/store/vault', { value: VAULT, if_version: 0 });
    expect((await get('/app/store', { ...session(), 'if-none-match': etag })).status).toBe(200);
    const one = await get('/app/store/vault');
    expect(one.body).toEqual({ key: 'vault', value: VAULT, version: 2 });
    expect((await get('/app/store/address_book')).status).toBe(404);
  });

  it('refuses a stale write with 409 and keeps what was there', async () => {
    const stale = await post('/app/store/vault', { value: VAULT.replace('ff', 'ee'), if_version: 0 });
    expect(stale.status).toBe(409);
    expect((stale.body as Json).error).toMatch(
      /vault was changed elsewhere since it was read \(now version 2\)/,
    );
    expect((await get('/app/store/vault')).body).toMatchObject({ value: VAULT, version: 2 });
    const fresh = await post('/app/store/vault', { value: VAULT, if_version: 2 });
    expect(fresh.body).toMatchObject({ version: 3 });
  });

  it('refuses bad documents with a clear 400 (or 404 for an unknown one) and changes nothing', async () => {
    const before = await documents();
    const cases: [string, unknown, number, RegExp][] = [
      [
        '/app/store/address_book',
        { value: [{ name: 'x', address: 'nope' }] },
        400,
        /entry 0 address must be 64/,
      ],
      ['/app/store/address_book', { value: { name: 'x' } }, 400, /must be a list/],
      [
        '/app/store/address_book',
        {
          value: [
            { name: 'x', address: ADDR_A },
            { name: 'y', address: ADDR_A },
          ],
        },
        400,
        /repeats address/,
      ],
      ['/app/store/wallet_labels', { value: { [ADDR_A]: 7 } }, 400, /must be a string/],
      ['/app/store/wallet_labels', { value: { xyz: 'a' } }, 400, /is not an address/],
      ['/app/store/vault', { value: { version: 1 } }, 400, /keystore file as text/],
      ['/app/store/vault', { value: 'not json' }, 400, /not JSON text/],
      ['/app/store/settings', { value: [1, 2] }, 400, /must be a JSON object/],
      ['/app/store/settings', { theme: 'dark' }, 400, /unknown field theme/],
      ['/app/store/settings', { value: {}, if_version: -1 }, 400, /invalid if_version/],
      ['/app/store/secrets', { value: {} }, 400, /.+/],
    ];
    for (const [path, body, status, message] of cases) {
      const r = await post(path, body);
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(status);
      expect((r.body as Json).error).toMatch(message);
    }
    expect(await documents()).toEqual(before);
  });

  it('removes a document with value null', async () => {
    await post('/app/store/chat_read', { value: { [ADDR_A]: '5' } });
    const removed = await post('/app/store/chat_read', { value: null });
    expect(removed.body).toMatchObject({ key: 'chat_read', version: null });
    expect((await get('/app/store/chat_read')).status).toBe(404);
  });

  it('keeps the documents and the session across a restart on another port', async () => {
    const before = await documents();
    const oldUrl = url;
    await t.stop({ keepData: true });
    t = await startTestNode({ dataDir });
    url = t.node.url;
    expect(url).not.toBe(oldUrl);
    expect((await get('/app/session')).body).toMatchObject({ authenticated: true });
    expect(await documents()).toEqual(before);
  });

  it('agent checkpoints cover settings, address book and labels: diff, dry run, rollback, empty diff again', async () => {
    await post('/app/store/address_book', { value: [{ name: 'Alice', address: ADDR_A }] });
    await post('/app/store/wallet_labels', { value: { [ADDR_A]: 'Savings' } });
    const cp = await post('/agent/checkpoints', { name: 'before changes' }, bearer());
    expect(cp.status).toBe(201);
    const id = (cp.body as Json).id as string;
    expect((cp.body as Json).counts).toMatchObject({ settings: 2, address_book: 1, wallet_labels: 1 });
    expect(((cp.body as Json).not_covered as Json[]).map((n) => n.area)).toEqual(['wallet_keys']);

    await post('/app/store/settings', { value: { theme: 'light', autoLockMinutes: 5, autoReceive: true } });
    await post('/app/store/address_book', {
      value: [
        { name: 'Alice B.', address: ADDR_A },
        { name: 'Bob', address: ADDR_B },
      ],
    });
    await post('/app/store/wallet_labels', { value: null });
    const vaultBefore = (await get('/app/store/vault')).body as Json;

    const diff = (await get(`/agent/checkpoints/${id}/diff`, bearer())).body as {
      diff: Record<string, Json>;
    };
    expect(diff.diff.settings).toEqual({
      added: [{ key: 'autoReceive', value: true }],
      removed: [],
      changed: [{ key: 'theme', from: 'dark', to: 'light' }],
    });
    expect(diff.diff.address_book).toEqual({
      added: [{ key: ADDR_B, value: 'Bob' }],
      removed: [],
      changed: [{ key: ADDR_A, from: 'Alice', to: 'Alice B.' }],
    });
    expect(diff.diff.wallet_labels).toEqual({
      added: [],
      removed: [{ key: ADDR_A, value: 'Savings' }],
      changed: [],
    });

    const dry = await post('/agent/rollbacks', { checkpoint: id, dry_run: true }, bearer());
    expect(dry.status).toBe(200);
    expect((await get('/app/store/settings')).body).toMatchObject({ value: { theme: 'light' } });

    const real = await post('/agent/rollbacks', { checkpoint: id }, bearer());
    expect(real.status).toBe(200);
    expect(real.body).toMatchObject({ applied: true, ledger_touched: false, statechain_touched: false });
    expect((await get('/app/store/settings')).body).toMatchObject({
      value: { theme: 'dark', autoLockMinutes: 5 },
    });
    expect(((await get('/app/store/settings')).body as Json).value).not.toHaveProperty('autoReceive');
    expect((await get('/app/store/address_book')).body).toMatchObject({
      value: [{ name: 'Alice', address: ADDR_A }],
    });
    expect((await get('/app/store/wallet_labels')).body).toMatchObject({ value: { [ADDR_A]: 'Savings' } });
    // The keys are never rolled back.
    expect((await get('/app/store/vault')).body).toEqual(vaultBefore);

    const again = (await get(`/agent/checkpoints/${id}/diff`, bearer())).body as {
      diff: Record<string, Json>;
    };
    for (const area of ['settings', 'address_book', 'wallet_labels'])
      expect(again.diff[area], area).toEqual({ added: [], removed: [], changed: [] });
  });

  it('ends the session: the cookie is cleared', async () => {
    expect((await post('/app/session/end', { token: 'x' }, {})).status).toBe(400);
    const r = await post('/app/session/end', undefined, {});
    expect(r.status).toBe(200);
    expect(r.headers.get('set-cookie')).toMatch(/^ledger_app_[0-9a-f]{12}=; .*Max-Age=0$/);
  });

  it("answers the window's routes only on this computer, even when the API is open to the network", async () => {
    // An address of this machine that is not loopback: a request to it comes from it, not from 127.x.
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
    if (lan === undefined) {
      console.log('skipped: this machine has no non-loopback IPv4 address to reach the node from');
      return;
    }
    const open = await startTestNode({ apiBind: '0.0.0.0' });
    try {
      const port = Number(new URL(open.node.url).port);
      const ask = (host: string, path: string, headers: Record<string, string> = {}) =>
        rawHttp(port, { host, path, headers: { host: `127.0.0.1:${port}`, ...headers } });
      const bearer = { authorization: `Bearer ${open.node.adminToken!}` };
      expect((await ask('127.0.0.1', '/app/store', bearer)).status).toBe(200);
      const far = await ask(lan, '/app/store', bearer);
      expect(far.status).toBe(403);
      expect(far.json).toEqual({ error: "the window's routes answer only on this computer (loopback)" });
      expect((await ask(lan, '/app/session')).status).toBe(403);
      // The rest of the API still answers there.
      expect((await ask(lan, '/health')).status).toBe(200);
    } finally {
      await open.stop();
    }
  });
});
