import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Kit, kitOf, rawRequest, snapshot } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { parseRawAnswer, rawConnect, rawExchange } from '../helpers/raw-http.ts';

/** Decision D10 through the real node: Host check, CORS for the node's own origin, admin token, body cap. */
describe('HTTP API: browser-facing protections', () => {
  let t: TestNode;
  let kit: Kit;
  let port: string;

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    port = new URL(kit.url).port;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('accepts loopback Host names and the bind address', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'localhost',
      `[::1]:${port}`,
      `127.0.0.2:${port}`,
    ]) {
      const r = await rawRequest(kit.url, { path: '/node', headers: { Host: host } });
      expect(r.status, host).toBe(200);
    }
  });

  it('refuses any other Host with 403 JSON (DNS rebinding), even from an allowed Origin', async () => {
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      `127.0.0.1.evil.example:${port}`,
      `192.168.1.9:${port}`,
    ]) {
      const r = await rawRequest(kit.url, { path: '/node', headers: { Host: host, Origin: kit.url } });
      expect(r.status, host).toBe(403);
      expect(JSON.parse(r.text)).toEqual({ error: 'host not allowed' });
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
    const before = await snapshot(kit);
    const post = await rawRequest(kit.url, {
      method: 'POST',
      path: '/blocks/claim',
      headers: { Host: 'evil.example', 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(post.status).toBe(403);
    expect(await snapshot(kit)).toEqual(before);
    const missing = await rawRequest(kit.url, { path: '/node', setHost: false });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toEqual({ error: 'missing Host header' });
  });

  it('refuses two Host headers (400) and an absolute-form target naming another host (403)', async () => {
    const ask = async (requestLine: string, hosts: string[]) => {
      const head = hosts.map((h) => `Host: ${h}\r\n`).join('');
      return parseRawAnswer(
        await rawExchange(Number(port), `${requestLine}\r\n${head}Connection: close\r\n\r\n`),
      );
    };
    const ours = `127.0.0.1:${port}`;
    for (const hosts of [
      [ours, 'evil.example'],
      ['evil.example', ours],
      [ours, ours],
    ]) {
      const r = await ask('GET /node HTTP/1.1', hosts);
      expect(r?.status, hosts.join(' ')).toBe(400);
      expect(r?.json).toEqual({ error: 'duplicate Host header' });
    }
    for (const target of ['http://evil.example/node', `http://evil.example:${port}/api/v1/node`]) {
      const r = await ask(`GET ${target} HTTP/1.1`, [ours]);
      expect(r?.status, target).toBe(403);
      expect(r?.json).toEqual(
        target.includes('/api/')
          ? expect.objectContaining({ error: expect.objectContaining({ code: 'forbidden' }) })
          : { error: 'host not allowed' },
      );
    }
    // An absolute-form target naming the node is served, in the form its path selects.
    const node = await ask(`GET http://${ours}/node HTTP/1.1`, ['evil.example']);
    expect(node?.status).toBe(200);
    const proxy = await ask(`GET http://${ours}/api/v1/node HTTP/1.1`, [ours]);
    expect(proxy?.status).toBe(200);
    expect(proxy?.headers['x-api-version']).toBe('1');
  });

  it('caps API connections per client as the node is told (apiConnections)', async () => {
    const capped = await startTestNode({ apiConnections: { maxPerClient: 1 } });
    try {
      const cappedPort = Number(new URL(capped.node.url).port);
      const held = await rawConnect(cappedPort);
      const served = new Promise<string>((resolve) => held.socket.once('data', (d) => resolve(String(d))));
      held.socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(parseRawAnswer(await served)?.status).toBe(200);
      const over = await rawExchange(cappedPort, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(parseRawAnswer(over)?.json).toEqual({ error: 'too many connections', retryable: true });
      held.socket.destroy();
    } finally {
      await capped.stop();
    }
  });

  it('sends CORS headers only to the node own origins', async () => {
    for (const origin of [kit.url, `http://localhost:${port}`]) {
      const r = await rawRequest(kit.url, { path: '/node', headers: { Origin: origin } });
      expect(r.status).toBe(200);
      expect(r.headers['access-control-allow-origin']).toBe(origin);
      expect(r.headers.vary).toMatch(/Origin/);
    }
    for (const origin of ['http://evil.example', `http://127.0.0.1:${Number(port) + 1}`, 'null']) {
      const r = await rawRequest(kit.url, { path: '/node', headers: { Origin: origin } });
      expect(r.status).toBe(200);
      expect(r.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
    const preflight = await rawRequest(kit.url, {
      method: 'OPTIONS',
      path: '/blocks/send',
      headers: { Origin: kit.url, 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(kit.url);
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    const hostile = await rawRequest(kit.url, {
      method: 'OPTIONS',
      path: '/blocks/send',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(hostile.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('admin routes need the bearer token: 401 without or with a wrong one (POST /lease/request)', async () => {
    expect(t.node.adminToken).toMatch(/^[0-9a-f]{64}$/);
    const file = join(t.dataDir, 'admin-token');
    expect(readFileSync(file, 'utf8').trim()).toBe(t.node.adminToken);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const request = { vcpus: 1, duration: 3600, access_pub_key: 'ab'.repeat(32) };
    for (const authorization of [
      undefined,
      'Bearer wrong-token',
      `Basic ${t.node.adminToken}`,
      `Bearer ${t.node.adminToken}x`,
    ]) {
      const r = await http(
        kit.url,
        'POST',
        '/lease/request',
        request,
        authorization ? { authorization } : {},
      );
      expect(r.status, authorization).toBe(401);
      expect(r.body).toEqual({ error: 'invalid or missing admin token' });
    }
    // With the token the route itself answers: the node's account holds no XUSD to pay a lease.
    const ok = await http(kit.url, 'POST', '/lease/request', request, {
      authorization: `Bearer ${t.node.adminToken}`,
    });
    expect(ok.status).toBe(400);
    expect((ok.body as { error: string }).error).toMatch(/^insufficient XUSD balance/);
    const manifest = (await http(kit.url, 'GET', '/')).body as {
      endpoints: { method: string; path: string }[];
    };
    expect(manifest.endpoints).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/lease/request' }),
    );
  });

  it('admin routes are disabled (403) on a node without an admin token', async () => {
    const bare = await startTestNode({ adminToken: false });
    try {
      const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${t.node.adminToken}` }];
      for (const headers of attempts) {
        const r = await http(bare.node.url, 'POST', '/lease/request', { duration: 3600 }, headers);
        expect(r.status).toBe(403);
        expect(r.body).toEqual({ error: 'operator endpoint disabled: no admin token configured' });
      }
      expect((await http(bare.node.url, 'GET', '/node')).status).toBe(200);
    } finally {
      await bare.stop();
    }
  });

  it('caps request bodies at 1 MiB (400 JSON) and still parses a body just under it', async () => {
    const MiB = 1024 * 1024;
    const pad = (n: number) => `{"type":"claim","pad":"${'x'.repeat(n - 25)}"}`;
    expect(pad(MiB + 1).length).toBe(MiB + 1);
    const over = await http(kit.url, 'POST', '/blocks/claim', pad(MiB + 1));
    expect(over.status).toBe(400);
    // A block's body, so the refusal is final (retryable false, issue #14).
    expect(over.body).toEqual({ error: 'invalid request body', retryable: false });
    // Just under the cap the body is read and decoded: the error now names a missing field.
    const under = await http(kit.url, 'POST', '/blocks/claim', pad(MiB - 100));
    expect(under.status).toBe(400);
    expect((under.body as { error: string }).error).toMatch(/^invalid request body: /);
    // Without a Content-Length (chunked), the cap holds too.
    const chunked = await rawRequest(kit.url, {
      method: 'POST',
      path: '/blocks/claim',
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      body: pad(2 * MiB),
    });
    expect(chunked.status).toBe(400);
    expect(JSON.parse(chunked.text)).toEqual({ error: 'invalid request body', retryable: false });
    // Another route's oversize body keeps the plain error.
    const other = await http(kit.url, 'POST', '/directory/register', pad(MiB + 1));
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ error: 'invalid request body' });
    expect((await http(kit.url, 'GET', '/health')).status).toBe(200);
  });
});
