import { connect, type Socket } from 'node:net';

/**
 * A minimal HTTP/1.1 keep-alive client for the ingest benchmark: one socket, one request at a
 * time, requests written as prepared bytes and answers parsed by Content-Length. node:http's
 * client costs about 85 µs of CPU per request here, and the benchmark's client shares the
 * machine's two cores with the node it measures; this one costs a fraction of that, so the
 * figure reflects the node rather than the load generator. Not a general client: no chunked
 * bodies, no redirects, no pipelining.
 */
export class LeanHttpConnection {
  private readonly socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting:
    { resolve: (r: { status: number; body: string }) => void; reject: (e: Error) => void } | undefined;
  private readonly ready: Promise<void>;
  private readonly host: string;
  private readonly port: number;

  /** `localAddress`: the source address to connect from (a loopback one: 127.x.y.z all reach the node). */
  constructor(host: string, port: number, localAddress?: string) {
    this.host = host;
    this.port = port;
    this.socket = connect({ host, port, noDelay: true, localAddress });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (d: Buffer) => this.onData(d));
    this.socket.on('error', (e) => this.fail(e));
    this.socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static forUrl(url: string, localAddress?: string): LeanHttpConnection {
    const u = new URL(url);
    return new LeanHttpConnection(u.hostname, Number(u.port), localAddress);
  }

  async post(path: string, body: string): Promise<{ status: number; body: string }> {
    await this.ready;
    if (this.waiting) throw new Error('one request at a time');
    const len = Buffer.byteLength(body);
    const head =
      `POST ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${len}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(head + body);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buf.toString('latin1', 0, end);
    const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!m) return this.fail(new Error(`answer without Content-Length: ${head.slice(0, 200)}`));
    const total = end + 4 + Number(m[1]);
    if (this.buf.length < total) return;
    const status = Number(head.slice(9, 12));
    const body = this.buf.toString('utf8', end + 4, total);
    this.buf = this.buf.subarray(total);
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve({ status, body });
  }

  private fail(e: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(e);
  }
}
