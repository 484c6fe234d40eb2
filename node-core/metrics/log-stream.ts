import type { ServerResponse } from 'node:http';
import { stringifyJson } from '../protocol/json.ts';
import type { LogLine, LogRing } from './log-ring.ts';

/**
 * One client's live log (`GET /node/log/events`): Server-Sent Events, one `event: log` per line that
 * passes the client's filter, its seq as the event id. Reconnecting with Last-Event-ID first replays
 * the matching lines after it that the ring still holds (`event: gap` says how many it no longer
 * does). A client too slow to read has its stream closed with `event: overflow` once
 * `maxBuffered` frames wait, rather than the node buffering without bound; it reconnects and
 * resumes. Nothing here logs: a log line about the log stream would feed itself.
 */
export interface LogStreamOptions {
  ring: LogRing;
  /** The hijacked response: headers not yet sent. */
  res: ServerResponse;
  /** Headers fastify would have sent (CORS for the development origin, ...). */
  headers: Record<string, string | string[] | number | undefined>;
  filter: (line: LogLine) => boolean;
  /** Replay lines after this seq first; undefined: live only. */
  lastEventId: number | undefined;
  /** Whether the API server still listens: streams end when it closes, or its close would wait. */
  serverListening: () => boolean;
  pingIntervalMs?: number;
  maxBuffered?: number;
}

const CHECK_MS = 1_000;

export function logFrame(line: LogLine): string {
  return `id: ${line.seq}\nevent: log\ndata: ${stringifyJson(line)}\n\n`;
}

export class LogStream {
  private readonly o: LogStreamOptions;
  private readonly queue: string[] = [];
  private waitingDrain = false;
  private closed = false;
  private lastWrite = Date.now();
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(o: LogStreamOptions) {
    this.o = o;
    const res = o.res;
    res.writeHead(200, {
      ...Object.fromEntries(Object.entries(o.headers).filter(([, v]) => v !== undefined)),
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.socket?.setNoDelay(true);
    res.write(': connected\n\n');
    let lastSent = o.lastEventId ?? o.ring.lastSeq;
    if (o.lastEventId !== undefined) {
      const from = Math.max(o.lastEventId + 1, 1);
      if (from < o.ring.firstSeq) this.send(`event: gap\ndata: {"missed":${o.ring.firstSeq - from}}\n\n`);
      for (const line of o.ring.query({ after: o.lastEventId, limit: o.ring.capacity })) {
        if (o.filter(line)) this.send(logFrame(line));
        lastSent = line.seq;
      }
    }
    this.unsubscribe = o.ring.subscribe((line) => {
      if (line.seq <= lastSent || !o.filter(line)) return;
      lastSent = line.seq;
      this.send(logFrame(line));
    });
    res.on('close', () => this.close());
    res.on('drain', () => this.flush());
    this.timer = setInterval(() => this.tick(), CHECK_MS);
    this.timer.unref();
  }

  private send(frame: string): void {
    if (this.closed) return;
    if (this.waitingDrain) {
      this.queue.push(frame);
      if (this.queue.length > (this.o.maxBuffered ?? 512)) {
        this.queue.length = 0;
        this.o.res.end('event: overflow\ndata: {}\n\n');
        this.close();
      }
      return;
    }
    this.lastWrite = Date.now();
    if (!this.o.res.write(frame)) this.waitingDrain = true;
  }

  private flush(): void {
    this.waitingDrain = false;
    while (this.queue.length > 0 && !this.waitingDrain) {
      this.lastWrite = Date.now();
      if (!this.o.res.write(this.queue.shift()!)) this.waitingDrain = true;
    }
  }

  private tick(): void {
    if (!this.o.serverListening()) {
      this.o.res.end();
      this.close();
      return;
    }
    if (!this.waitingDrain && Date.now() - this.lastWrite >= (this.o.pingIntervalMs ?? 20_000)) {
      this.lastWrite = Date.now();
      this.o.res.write(': ping\n\n');
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.unsubscribe();
    if (!this.o.res.writableEnded) this.o.res.end();
  }
}
