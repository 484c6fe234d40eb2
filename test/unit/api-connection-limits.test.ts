import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTION_LIMITS, resolveConnectionLimits } from '../../node-core/api/connection-limits.ts';
import { defineRoutes } from '../../node-core/api/route-table.ts';
import { apiServerStarter } from '../helpers/api-server.ts';
import { parseRawAnswer, rawConnect, rawHttp } from '../helpers/raw-http.ts';
import type { RawConnection } from '../helpers/raw-http.ts';

/** Issue #15 item 3, over real sockets on loopback: time limits on requests, caps on connections. */
const routes = defineRoutes(
  {
    method: 'GET',
    path: '/health',
    description: 'liveness',
    auth: 'none',
    handler: async () => ({ status: 'ok' }),
  },
  {
    method: 'POST',
    path: '/echo',
    description: 'echoes the body',
    auth: 'none',
    handler: async (req) => req.body,
  },
  {
    method: 'GET',
    path: '/stream',
    description: 'a response sent slowly, like an event stream',
    auth: 'none',
    handler: async (_req, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 6; i++) {
        reply.raw.write(`${i}\n`);
        await sleep(100);
      }
      reply.raw.end('end\n');
    },
  },
);

const start = apiServerStarter({ routes, rateLimit: false, security: { bindAddress: '127.0.0.1' } });

/** Short limits, so that a test sees them act in well under a second. */
const FAST = { requestTimeoutMs: 400, headersTimeoutMs: 300, checkIntervalMs: 50 };

const GET_HEALTH = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/** Sends a keep-alive request and waits for its answer: the connection is then open and counted. */
async function openAndServed(port: number, localAddress: string): Promise<RawConnection> {
  const c = await rawConnect(port, { localAddress });
  const answered = new Promise<void>((resolve) => c.socket.once('data', () => resolve()));
  c.socket.write(GET_HEALTH);
  await answered;
  return c;
}

describe('request time limits', () => {
  it('closes a connection that trickles its body, with a 408, once the request time-out has passed', async () => {
    const { port } = await start({ connections: FAST });
    const c = await rawConnect(port);
    const started = performance.now();
    c.socket.write('POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n');
    // One byte every 50 ms: the body would take 50 s, and the connection is never idle for long.
    const trickle = setInterval(() => {
      if (c.socket.writable) c.socket.write('1');
    }, 50);
    try {
      const { text, at } = await c.closed;
      expect(at - started).toBeGreaterThanOrEqual(FAST.requestTimeoutMs - 50);
      expect(at - started).toBeLessThan(FAST.requestTimeoutMs + 1000);
      const answer = parseRawAnswer(text);
      expect(answer?.status).toBe(408);
      expect(answer?.json).toEqual({ error: 'request timeout' });
    } finally {
      clearInterval(trickle);
    }
  });

  it('closes a connection that sends no request, or trickles its headers, after the headers time-out', async () => {
    const { port } = await start({ connections: FAST });
    const started = performance.now();
    const silent = await rawConnect(port);
    const slow = await rawConnect(port);
    slow.socket.write('GET /health HTTP/1.1\r\n');
    const trickle = setInterval(() => {
      if (slow.socket.writable) slow.socket.write('X-Pad: 1\r\n');
    }, 50);
    try {
      for (const c of [silent, slow]) {
        const { text, at } = await c.closed;
        expect(at - started).toBeLessThan(FAST.headersTimeoutMs + 1000);
        expect(parseRawAnswer(text)?.status).toBe(408);
      }
    } finally {
      clearInterval(trickle);
    }
  });

  it('does not cut a response that streams for longer than the request time-out', async () => {
    const { port } = await start({ connections: FAST });
    const started = performance.now();
    const res = await rawHttp(port, { path: '/stream' });
    expect(performance.now() - started).toBeGreaterThan(FAST.requestTimeoutMs);
    expect(res.status).toBe(200);
    expect(res.text).toBe('0\n1\n2\n3\n4\n5\nend\n');
  });

  it('closes an idle keep-alive connection', async () => {
    const { port } = await start({ connections: { ...FAST, keepAliveTimeoutMs: 100 } });
    const c = await openAndServed(port, '127.0.0.1');
    const served = performance.now();
    const { at } = await c.closed;
    // Node keeps a connection up to a second beyond the time-out it announces (keepAliveTimeoutBuffer).
    expect(at - served).toBeLessThan(100 + 1000 + 500);
  });
});

describe('connection caps', () => {
  it('answers a connection over the per-client cap with a retryable 503 and closes it; others are served', async () => {
    const { port } = await start({ connections: { maxPerClient: 2, maxTotal: 10 } });
    const held = [await openAndServed(port, '127.0.0.1'), await openAndServed(port, '127.0.0.1')];
    for (const path of ['/health', '/api/v1/health']) {
      const over = await rawConnect(port, { localAddress: '127.0.0.1' });
      over.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      const answer = parseRawAnswer((await over.closed).text);
      expect(answer?.status, path).toBe(503);
      expect(answer?.headers['retry-after']).toBe('1');
      expect(answer?.headers.connection).toBe('close');
      expect(answer?.json).toEqual(
        path === '/health'
          ? { error: 'too many connections', retryable: true }
          : {
              error: expect.objectContaining({
                code: 'upstream_unavailable',
                status: 503,
                message: 'too many connections',
                retryable: true,
              }),
            },
      );
    }
    // Another client has its own allowance; the held connections still work.
    expect((await rawHttp(port, { path: '/health' }).catch(() => undefined))?.status).toBe(503);
    const other = await openAndServed(port, '127.0.0.2');
    expect(parseRawAnswer(await nextAnswer(held[0]!))?.status).toBe(200);
    // Once one closes, the client may connect again.
    held[1]!.socket.end();
    await held[1]!.closed;
    const again = await rawConnect(port, { localAddress: '127.0.0.1' });
    again.socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(parseRawAnswer((await again.closed).text)?.status).toBe(200);
    for (const c of [held[0]!, other]) c.socket.destroy();
  });

  it('answers a connection over the total cap with a retryable 503', async () => {
    const { port } = await start({ connections: { maxPerClient: 5, maxTotal: 2 } });
    const held = [await openAndServed(port, '127.0.0.1'), await openAndServed(port, '127.0.0.2')];
    const over = await rawConnect(port, { localAddress: '127.0.0.3' });
    over.socket.write(GET_HEALTH);
    const answer = parseRawAnswer((await over.closed).text);
    expect(answer?.status).toBe(503);
    expect(answer?.json).toEqual({ error: 'too many connections', retryable: true });
    for (const c of held) c.socket.destroy();
  });

  it('drops a connection over a cap that sends nothing within a second', async () => {
    const { port } = await start({ connections: { maxPerClient: 1 } });
    const held = await openAndServed(port, '127.0.0.1');
    const started = performance.now();
    const silent = await rawConnect(port, { localAddress: '127.0.0.1' });
    const { text, at } = await silent.closed;
    expect(text).toBe('');
    expect(at - started).toBeLessThan(1500);
    held.socket.destroy();
  });

  it('serves 64 concurrent keep-alive connections from one address with the defaults', async () => {
    const { port } = await start();
    const conns = await Promise.all(Array.from({ length: 64 }, () => openAndServed(port, '127.0.0.1')));
    const answers = await Promise.all(conns.map((c) => nextAnswer(c)));
    expect(answers.every((a) => parseRawAnswer(a)?.status === 200)).toBe(true);
    for (const c of conns) c.socket.destroy();
  });
});

describe('limit options', () => {
  it('fills in defaults and refuses values Node would misread', () => {
    expect(resolveConnectionLimits()).toEqual(DEFAULT_CONNECTION_LIMITS);
    expect(resolveConnectionLimits({ maxTotal: 5, requestTimeoutMs: undefined })).toEqual({
      ...DEFAULT_CONNECTION_LIMITS,
      maxTotal: 5,
    });
    expect(() => resolveConnectionLimits({ maxPerClient: 0 })).toThrow(RangeError);
    expect(() => resolveConnectionLimits({ requestTimeoutMs: 1.5 })).toThrow(RangeError);
    expect(() => resolveConnectionLimits({ requestTimeoutMs: 1000, headersTimeoutMs: 2000 })).toThrow(
      'headersTimeoutMs must not exceed requestTimeoutMs',
    );
  });
});

/** Sends one more keep-alive request on an open connection; the text of its answer. */
function nextAnswer(c: RawConnection): Promise<string> {
  return new Promise((resolve) => {
    c.socket.once('data', (d: string | Buffer) => resolve(d.toString()));
    c.socket.write(GET_HEALTH);
  });
}
