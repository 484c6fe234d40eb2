import { existsSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  registerConsoleRoute,
  type ConsoleDeps,
  type ConsoleLease,
} from '../../node-core/api/routes/console.ts';
import { createApiServer } from '../../node-core/api/server.ts';
import { CONSOLE_CLOSE, type ConsoleServerMessage } from '../../node-core/client/console-protocol.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed, randomSeed, signBytes } from '../../node-core/protocol/keys.ts';
import { signLeaseAccess } from '../../node-core/protocol/payloads.ts';
import { openSshConsole, SshConsoleError } from '../../node-core/vm/ssh-console.ts';
import { sshdUnavailable, startSshd, type TestSshd } from '../helpers/sshd.ts';

/**
 * The VM console end to end with real parts: a real OpenSSH sshd stands in for the VM (the access key
 * is its only authorized key, root its only login), the node's API server with its real security
 * hooks serves the console route, and a `ws` client plays the browser, signing with the access key.
 * The lease book is an in-memory `leases` dependency.
 */

const unavailable = sshdUnavailable();
if (unavailable !== undefined) console.warn(`vm-console tests skipped: ${unavailable}`);

/** Polls until `fn` gives a truthy value (test/helpers/node.ts has one too, but loads the whole node). */
async function waitFor<T>(fn: () => T | undefined | false, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
const randomHash = (): string => bytesToHex(randomSeed());

const accessSeed = randomSeed();
const access = keyPairFromSeed(accessSeed);
const otherSeed = randomSeed();
const other = keyPairFromSeed(otherSeed);

const ACTIVE = randomHash();
const CREATED = randomHash();
const NO_KEY = randomHash();
/** Accepted, but its key is not the one the VM lets in. */
const FOREIGN_KEY = randomHash();
const leases = new Map<string, ConsoleLease>([
  [ACTIVE, { state: 'accepted', access_pub_key: access.pub_key }],
  [CREATED, { state: 'created', access_pub_key: access.pub_key }],
  [NO_KEY, { state: 'accepted' }],
  [FOREIGN_KEY, { state: 'accepted', access_pub_key: other.pub_key }],
]);

/** What the browser side saw. */
interface Browser {
  ws: WebSocket;
  messages: ConsoleServerMessage[];
  output(): string;
  closed: Promise<{ code: number; reason: string }>;
  /** The HTTP status when the upgrade was refused. */
  refused: Promise<number>;
  send(text: string): void;
  waitFor<T>(fn: () => T | undefined | false, what: string, ms?: number): Promise<T>;
}

describe.skipIf(unavailable !== undefined)('VM console: WebSocket to a real sshd', () => {
  let sshd: TestSshd;
  let servers: FastifyInstance[] = [];
  let dials = 0;

  beforeAll(async () => {
    sshd = await startSshd({ authorizedKeys: [access.pub_key] });
  });
  afterAll(async () => {
    await sshd?.stop();
  });
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  /** The API server with only the console route, its tunnel dialing the test sshd. */
  async function startServer(overrides: Partial<ConsoleDeps> = {}): Promise<string> {
    const app = createApiServer({
      routes: [],
      logger: false,
      rateLimit: false,
      security: { bindAddress: '127.0.0.1', corsOrigins: ['http://127.0.0.1:1'] },
    });
    servers.push(app);
    registerConsoleRoute(app, {
      leases: { get: (h) => leases.get(h) },
      openTunnel: async (): Promise<Duplex> => {
        dials++;
        return sshd.dial();
      },
      now: nowNs,
      allowedOrigins: ['http://127.0.0.1:1'],
      ...overrides,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    return `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }

  interface OpenOptions {
    lease?: string;
    ts?: bigint;
    sig?: string;
    query?: string;
    /** The seed that answers `sign` requests; null: never answer. */
    signer?: Uint8Array | null;
    headers?: Record<string, string>;
  }

  function openConsole(base: string, o: OpenOptions = {}): Browser {
    const lease = o.lease ?? ACTIVE;
    const ts = o.ts ?? nowNs();
    const sig = o.sig ?? signLeaseAccess(lease, accessSeed, ts);
    const ws = new WebSocket(`${base}/vms/${lease}/console?ts=${ts}&sig=${sig}${o.query ?? ''}`, {
      headers: o.headers,
    });
    const messages: ConsoleServerMessage[] = [];
    const chunks: Buffer[] = [];
    const signer = o.signer === undefined ? accessSeed : o.signer;
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        chunks.push(data);
        return;
      }
      const msg = JSON.parse(data.toString('utf8')) as ConsoleServerMessage;
      messages.push(msg);
      if (msg.type === 'sign' && signer !== null) {
        const signature = bytesToHex(signBytes(hexToBytes(msg.data), signer));
        ws.send(JSON.stringify({ type: 'signature', id: msg.id, signature }));
      }
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    const refused = new Promise<number>((resolve) =>
      ws.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      }),
    );
    ws.on('error', () => undefined); // a refused upgrade; `refused` and `closed` tell the test
    const output = (): string => Buffer.concat(chunks).toString('utf8');
    return {
      ws,
      messages,
      output,
      closed,
      refused,
      send: (text) => ws.send(Buffer.from(text, 'utf8'), { binary: true }),
      waitFor: (fn, what, ms = 10_000) => waitFor(fn, ms, what),
    };
  }

  const ready = (b: Browser) =>
    b.waitFor(() => b.messages.find((m) => m.type === 'status' && m.state === 'ready'), 'ready status');
  const errorOf = (b: Browser) => b.messages.find((m) => m.type === 'error');

  it('logs in with the browser signing, runs a command, reports the host key', async () => {
    const base = await startServer();
    const b = openConsole(base);
    const readyMsg = await ready(b);
    expect(readyMsg).toMatchObject({ message: expect.stringContaining(sshd.hostKeyFingerprint) });
    const states = b.messages.flatMap((m) => (m.type === 'status' ? [m.state] : []));
    expect(states).toEqual(['connecting', 'authenticating', 'ready']);
    // The login's signature was asked of the browser: the node holds no private key.
    expect(b.messages.filter((m) => m.type === 'sign').length).toBeGreaterThanOrEqual(1);

    b.send('echo hello-$((6*7))\n');
    // The echoed command line shows "$((6*7))"; only the shell's evaluation prints 42.
    await b.waitFor(() => b.output().includes('hello-42'), 'hello-42');
    b.ws.close();
    await b.closed;
  });

  it('opens the PTY at the asked size and resizes it', async () => {
    const base = await startServer();
    const b = openConsole(base, { query: '&cols=100&rows=30' });
    await ready(b);
    b.send('stty size\n');
    await b.waitFor(() => /^30 100\r?$/m.test(b.output()), 'stty size 30 100');
    b.ws.send(JSON.stringify({ type: 'resize', cols: 132, rows: 43 }));
    b.send('stty size\n');
    await b.waitFor(() => /^43 132\r?$/m.test(b.output()), 'stty size 43 132');
    b.ws.close();
    await b.closed;
  });

  it('keeps keystrokes and a resize sent while logging in, and applies them once the shell opens', async () => {
    const base = await startServer();
    const b = openConsole(base, { query: '&cols=100&rows=30' });
    await new Promise((r) => b.ws.once('open', r));
    // Sent at once: the login (a signing round trip) is far from done.
    b.ws.send(JSON.stringify({ type: 'resize', cols: 91, rows: 21 }));
    b.send('echo early-$((1+1)); stty size\n');
    await b.waitFor(() => b.output().includes('early-2'), 'early input run');
    expect(b.messages.findIndex((m) => m.type === 'status' && m.state === 'ready')).toBeGreaterThan(-1);
    await b.waitFor(() => /^21 91\r?$/m.test(b.output()), 'stty size 21 91');
    b.ws.close();
    await b.closed;
  });

  it('delivers the exit code and closes normally when the shell exits', async () => {
    const base = await startServer();
    const b = openConsole(base);
    await ready(b);
    b.send('exit 7\n');
    const closed = await b.closed;
    expect(b.messages.find((m) => m.type === 'exit')).toEqual({ type: 'exit', code: 7 });
    expect(closed.code).toBe(CONSOLE_CLOSE.normal);
    expect(errorOf(b)).toBeUndefined();
  });

  it('closing the socket ends the SSH session on the server', async () => {
    const base = await startServer();
    const before = new Set(sshd.children());
    const b = openConsole(base);
    await ready(b);
    const session = sshd.children().filter((pid) => !before.has(pid));
    expect(session.length).toBeGreaterThan(0);
    b.ws.close();
    await b.closed;
    await waitFor(() => session.every((pid) => !existsSync(`/proc/${pid}`)), 10_000, 'sshd session gone');
  });

  it('refuses bad requests, unknown and inactive leases, wrong and stale signatures before dialing', async () => {
    const base = await startServer();
    const dialsBefore = dials;
    const seenBefore = sshd.connectionsSeen();
    const stale = nowNs() - 61_000_000_000n;
    const now = nowNs();
    const cases: { what: string; o: OpenOptions; code: number; error: string }[] = [
      { what: 'short hash', o: { lease: 'abc', sig: '00'.repeat(64) }, code: 4000, error: 'bad_request' },
      { what: 'zero columns', o: { query: '&cols=0' }, code: 4000, error: 'bad_request' },
      { what: 'unknown lease', o: { lease: randomHash() }, code: 4004, error: 'lease_not_found' },
      { what: 'created lease', o: { lease: CREATED }, code: 4000, error: 'lease_not_active' },
      { what: 'lease without key', o: { lease: NO_KEY }, code: 4000, error: 'lease_not_active' },
      {
        what: 'signed by another key',
        o: { ts: now, sig: signLeaseAccess(ACTIVE, otherSeed, now) },
        code: 4003,
        error: 'forbidden',
      },
      // A signature of a past moment, valid in itself, replayed after the window.
      {
        what: 'stale',
        o: { ts: stale, sig: signLeaseAccess(ACTIVE, accessSeed, stale) },
        code: 4003,
        error: 'forbidden',
      },
      // Signed for one time, sent with another.
      {
        what: 'other ts',
        o: { ts: now, sig: signLeaseAccess(ACTIVE, accessSeed, now - 5n) },
        code: 4003,
        error: 'forbidden',
      },
    ];
    expect(CONSOLE_CLOSE).toMatchObject({ error: 4000, forbidden: 4003, notFound: 4004 });
    for (const c of cases) {
      const b = openConsole(base, c.o);
      const closed = await b.closed;
      expect({ code: closed.code, error: errorOf(b) }, c.what).toMatchObject({
        code: c.code,
        error: { type: 'error', code: c.error },
      });
    }
    expect(dials).toBe(dialsBefore);
    await new Promise((r) => setTimeout(r, 200));
    expect(sshd.connectionsSeen()).toBe(seenBefore);
  });

  it('refuses a foreign Origin or Host with HTTP 403 before any upgrade', async () => {
    const base = await startServer();
    const dialsBefore = dials;
    const foreign = openConsole(base, { headers: { Origin: 'http://evil.example' } });
    expect(await foreign.refused).toBe(403);
    const rebound = openConsole(base, { headers: { Host: 'evil.example' } });
    expect(await rebound.refused).toBe(403);
    // The allowed origin gets through (so the refusal above was the Origin's doing).
    const own = openConsole(base, { headers: { Origin: 'http://127.0.0.1:1' } });
    await ready(own);
    own.ws.close();
    await own.closed;
    expect(dials).toBe(dialsBefore + 1);
  });

  it('answers a plain GET of the route in JSON, and leaves the other routes alone', async () => {
    const http = (await startServer()).replace('ws:', 'http:');
    const plain = await fetch(`${http}/vms/${ACTIVE}/console?ts=1&sig=00`);
    expect(plain.status).toBe(400);
    expect(await plain.json()).toEqual({ error: 'WebSocket upgrade required' });
    const manifest = await fetch(`${http}/`);
    expect(manifest.status).toBe(200);
    expect(((await manifest.json()) as { name: string }).name).toBe('ledger-node');
  });

  it('closes the socket of an upgrade it refused in plain HTTP, whatever the client does', async () => {
    const base = await startServer();
    const port = Number(new URL(base.replace('ws:', 'http:')).port);
    // A client that reads the answer and then just waits: the server must hang up, not keep the socket.
    const upgrade = (path: string, headers: string) =>
      new Promise<string>((resolve) => {
        const sock = connect(port, '127.0.0.1');
        let got = '';
        sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
        sock.on('close', () => resolve(got));
        sock.write(
          `GET ${path} HTTP/1.1\r\n${headers}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
            'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
        );
      });
    for (const headers of ['Host: evil.example', `Host: 127.0.0.1:${port}\r\nOrigin: http://evil.example`]) {
      const answer = await upgrade(`/vms/${ACTIVE}/console`, headers);
      expect(answer.split('\r\n')[0], headers).toBe('HTTP/1.1 403 Forbidden');
    }
    // An upgrade asked of a route that speaks no WebSocket gets that route's answer, and the socket
    // is closed after it: nothing is upgraded.
    const answer = await upgrade('/', `Host: 127.0.0.1:${port}`);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(answer).not.toMatch(/Sec-WebSocket-Accept/i);
  });

  it('gives up when the browser never answers the sign request, and drops the SSH connection', async () => {
    const base = await startServer({ signTimeoutMs: 300 });
    const before = new Set(sshd.children());
    const b = openConsole(base, { signer: null });
    const closed = await b.closed;
    expect(b.messages.some((m) => m.type === 'sign')).toBe(true);
    expect(errorOf(b)).toMatchObject({
      code: 'auth_failed',
      message: expect.stringContaining('no signature'),
    });
    expect(closed.code).toBe(CONSOLE_CLOSE.error);
    await waitFor(
      () => sshd.children().every((pid) => before.has(pid)),
      10_000,
      'the unauthenticated sshd connection to end',
    );
  });

  it('reports auth_failed when the VM refuses the key, and tunnel_failed when there is no tunnel', async () => {
    const base = await startServer();
    const ts = nowNs();
    const refused = openConsole(base, {
      lease: FOREIGN_KEY,
      ts,
      sig: signLeaseAccess(FOREIGN_KEY, otherSeed, ts),
      signer: otherSeed,
    });
    expect((await refused.closed).code).toBe(CONSOLE_CLOSE.error);
    expect(errorOf(refused)).toMatchObject({ code: 'auth_failed' });

    const base2 = await startServer({
      openTunnel: () => Promise.reject(new Error('provider unreachable')),
    });
    const noTunnel = openConsole(base2);
    expect((await noTunnel.closed).code).toBe(CONSOLE_CLOSE.error);
    expect(errorOf(noTunnel)).toMatchObject({
      code: 'tunnel_failed',
      message: expect.stringContaining('provider unreachable'),
    });
  });
});

describe.skipIf(unavailable !== undefined)('ssh-console: the agent-sign bridge against a real sshd', () => {
  let sshd: TestSshd;
  beforeAll(async () => {
    sshd = await startSshd({ authorizedKeys: [access.pub_key] });
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('signs the user-auth request through the callback and reports the exit code', async () => {
    const signed: Uint8Array[] = [];
    const shell = await openSshConsole({
      tunnel: await sshd.dial(),
      accessPubKey: access.pub_key,
      sign: async (data) => {
        signed.push(data);
        return signBytes(data, accessSeed);
      },
      cols: 80,
      rows: 24,
    });
    expect(shell.hostKeyFingerprint).toBe(sshd.hostKeyFingerprint);
    // RFC 4252 7: what is signed starts with the session id and carries the user and "publickey".
    expect(signed).toHaveLength(1);
    const text = Buffer.from(signed[0]!).toString('latin1');
    expect(text).toContain('root');
    expect(text).toContain('ssh-ed25519');
    let output = '';
    shell.stream.on('data', (d: Buffer) => (output += d.toString('utf8')));
    shell.stream.write('echo bridge-$((2+3))\nexit 3\n');
    expect(await shell.ended).toEqual({ exitCode: 3 });
    expect(output).toContain('bridge-5');
  });

  it('refuses a signature that is not by the access key, before the server sees it', async () => {
    const err = await openSshConsole({
      tunnel: await sshd.dial(),
      accessPubKey: access.pub_key,
      sign: async (data) => signBytes(data, otherSeed),
      cols: 80,
      rows: 24,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshConsoleError);
    expect(err).toMatchObject({ code: 'auth_failed', message: expect.stringContaining('does not match') });
  });

  it('fails with auth_failed when the server does not know the key', async () => {
    const err = await openSshConsole({
      tunnel: await sshd.dial(),
      accessPubKey: other.pub_key,
      sign: async (data) => signBytes(data, otherSeed),
      cols: 80,
      rows: 24,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'auth_failed' });
  });
});
