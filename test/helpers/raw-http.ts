import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';

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
