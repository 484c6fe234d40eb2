import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface RawOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Stream the body in chunks without Content-Length. */
  chunked?: boolean;
  /** Omit the Host header. */
  noHost?: boolean;
  /** Defaults to 127.0.0.1. */
  host?: string;
}

/**
 * One request over node:http, so Host and raw bytes are under the test's control (fetch forbids
 * both). A fresh connection each time, so no keep-alive socket outlives the server under test.
 */
export function rawHttp(port: number, opts: RawOptions): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.body !== undefined && !opts.chunked)
      headers['content-length'] = String(Buffer.byteLength(opts.body));
    const req = httpRequest(
      {
        host: opts.host ?? '127.0.0.1',
        port,
        method: opts.method ?? 'GET',
        path: opts.path,
        headers,
        setHost: !opts.noHost,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    // The server may answer (and close) before an oversized upload finishes: that is not a failure.
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') reject(e);
    });
    if (opts.body !== undefined && opts.chunked) {
      const buf = Buffer.from(opts.body);
      const step = 64 * 1024;
      for (let i = 0; i < buf.length; i += step) req.write(buf.subarray(i, i + step));
      req.end();
    } else req.end(opts.body);
  });
}

/** A TCP connection to the server under test, for requests node:http will not send as written. */
export interface RawConnection {
  socket: Socket;
  /** Settles when the server has closed the connection: everything it sent, and when it closed. */
  closed: Promise<{ text: string; at: number }>;
}

/** Connects to `port` on loopback (from `localAddress`, e.g. 127.0.0.2, to be another client). */
export function rawConnect(port: number, opts: { localAddress?: string } = {}): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: opts.localAddress });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    const closed = new Promise<{ text: string; at: number }>((settle) => {
      // A reset is a close too: the server may destroy a connection it will not serve.
      socket.on('error', () => undefined);
      socket.on('close', () => settle({ text, at: performance.now() }));
    });
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/** Sends `bytes` on a fresh connection; all the server answered before it closed. */
export async function rawExchange(port: number, bytes: string): Promise<string> {
  const { socket, closed } = await rawConnect(port);
  socket.write(bytes);
  return (await closed).text;
}

/** The status, headers (names lowercased) and JSON body of one raw HTTP/1.1 answer, if `text` holds one. */
export function parseRawAnswer(
  text: string,
): { status: number; headers: Record<string, string>; json: unknown } | undefined {
  const m = /^HTTP\/1\.1 (\d{3}) [^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
  if (m === null) return undefined;
  const headers: Record<string, string> = {};
  for (const line of m[2]!.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let json: unknown;
  try {
    json = JSON.parse(m[3]!);
  } catch {
    json = undefined;
  }
  return { status: Number(m[1]), headers, json };
}
