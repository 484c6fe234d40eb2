import { type JsonValue, parseJson } from '../../../node-core/protocol/json.ts';
import { APP_HEADERS, adminUrl } from './admin-http.ts';

/**
 * The node's log, live: `GET /node/log/events` read through fetch (EventSource cannot send the
 * app header the window session needs). On a dropped connection it reconnects after 1 s, doubling
 * to 30 s, and resumes after the last line it got (`last_event_id`), so no line is shown twice.
 */
export interface LogLine {
  seq: number;
  time: number;
  level: number;
  level_name: string;
  msg: string;
  fields: Record<string, JsonValue>;
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Splits complete SSE frames off `buffer`; comments (`: ping`) are skipped. */
export function parseSse(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  let rest = buffer.replace(/\r\n/g, '\n');
  let cut;
  while ((cut = rest.indexOf('\n\n')) >= 0) {
    const frame = rest.slice(0, cut);
    rest = rest.slice(cut + 2);
    const ev: SseEvent = { data: '' };
    let any = false;
    for (const line of frame.split('\n')) {
      if (line.startsWith(':') || line === '') continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      any = true;
      if (field === 'id') ev.id = value;
      else if (field === 'event') ev.event = value;
      else if (field === 'data') ev.data = ev.data === '' ? value : `${ev.data}\n${value}`;
    }
    if (any) events.push(ev);
  }
  return { events, rest };
}

export type StreamState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  | { kind: 'retrying'; inSeconds: number; reason: string }
  | { kind: 'signed_out' };

export interface LogStreamOptions {
  level?: string;
  text?: string;
  /** Resume after this seq (the last line already shown). */
  after: number;
  onLines(lines: LogLine[]): void;
  onState(s: StreamState): void;
}

export function logStreamUrl(o: Pick<LogStreamOptions, 'level' | 'text' | 'after'>): string {
  const q = new URLSearchParams();
  if (o.level) q.set('level', o.level);
  if (o.text) q.set('q', o.text);
  q.set('last_event_id', String(o.after));
  return adminUrl(`/node/log/events?${q.toString()}`);
}

/** Starts the stream; returns its stop. */
export function openLogStream(o: LogStreamOptions): () => void {
  let stopped = false;
  let controller: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let after = o.after;
  let backoff = 1;

  const connect = async (): Promise<void> => {
    if (stopped) return;
    controller = new AbortController();
    o.onState({ kind: 'connecting' });
    let reason = 'the connection closed';
    try {
      const res = await fetch(logStreamUrl({ ...o, after }), {
        credentials: 'include',
        headers: { accept: 'text/event-stream', ...APP_HEADERS },
        signal: controller.signal,
      });
      if (res.status === 401) {
        o.onState({ kind: 'signed_out' });
        return;
      }
      if (!res.ok || !res.body) throw new Error(`the node answered HTTP ${res.status}`);
      o.onState({ kind: 'live' });
      backoff = 1;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        const { events, rest } = parseSse(buf + decoder.decode(chunk.value, { stream: true }));
        buf = rest;
        const lines: LogLine[] = [];
        for (const ev of events) {
          if (ev.event === 'log') {
            const line = parseJson(ev.data) as unknown as LogLine;
            after = Math.max(after, Number(line.seq));
            lines.push(line);
          } else if (ev.event === 'overflow') reason = 'the page read the log too slowly';
        }
        if (lines.length > 0 && !stopped) o.onLines(lines);
      }
    } catch (e) {
      if (stopped) return;
      reason = (e as Error).message;
    }
    if (stopped) return;
    o.onState({ kind: 'retrying', inSeconds: backoff, reason });
    timer = setTimeout(() => void connect(), backoff * 1000);
    backoff = Math.min(backoff * 2, 30);
  };
  void connect();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    controller?.abort();
  };
}
