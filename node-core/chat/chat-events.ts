import type { ServerResponse } from 'node:http';
import { stringifyJson } from '../protocol/json.ts';
import type { ChatStore, Delivery, SequencedMessage, StoredMessage } from './chat-store.ts';

/**
 * The chat event stream (`GET /chat/events`, contract Events; reference-behavior.md 1.10): stored
 * messages fan out to subscribers, each with a filter (a party's public key, or all).
 *
 * Unlike the reference (9.5: a full 64-slot buffer drops envelopes without notice), nothing is ever
 * dropped silently: every event carries the message's sequence number as its SSE id, a client that
 * reads too slowly has its stream closed with a final `event: overflow`, and reconnecting with
 * `Last-Event-ID` replays every stored message after that id, in order, then continues live.
 *
 * A message this node forwards to another node also has `event: delivery` frames as its delivery
 * changes (pending, delivered, failed). They carry no id: they are state, not stored events, and
 * a client that reconnects reads the current state with the message from `GET /chat/messages`.
 */

export interface ChatEventOptions {
  /** A `: ping` comment this often, ms, so proxies and clients see a live connection (default 20 s). */
  pingIntervalMs: number;
  /** Events held for a client whose socket is not draining, before its stream is closed (default 256). */
  maxBufferedEvents: number;
  /** The same bound in bytes (default 1 MiB). */
  maxBufferedBytes: number;
}

export const DEFAULT_CHAT_EVENT_OPTIONS: Readonly<ChatEventOptions> = Object.freeze({
  pingIntervalMs: 20_000,
  maxBufferedEvents: 256,
  maxBufferedBytes: 1024 * 1024,
});

/** Backlog pages read from the store while replaying after a Last-Event-ID. */
const BACKLOG_PAGE = 100;
/** How often a stream checks that the API server still listens (see ChatEventStream.tick). */
const SERVER_CHECK_MS = 1_000;
/** How long an overflowed client may take to read the final event before its socket is destroyed. */
const OVERFLOW_GRACE_MS = 10_000;

interface Subscriber {
  /** A party's public key, or undefined for every message. */
  party: string | undefined;
  deliver(m: SequencedMessage): void;
  delivery?(frame: string): void;
}

/** One SSE frame of a delivery change. */
export function deliveryFrame(m: StoredMessage, d: Delivery): string {
  const data = {
    id: m.id,
    from: m.from,
    to: m.to,
    state: d.state,
    attempts: d.attempts,
    updated_at: d.updated_at,
    ...(d.error !== undefined ? { error: d.error } : {}),
  };
  return `event: delivery\ndata: ${stringifyJson(data)}\n\n`;
}

export class ChatEventHub {
  /** Mutable so tests can shorten the ping and shrink the buffers of streams opened afterwards. */
  readonly options: ChatEventOptions;
  private readonly store: ChatStore;
  private readonly subs = new Set<Subscriber>();
  /** The highest seq published: publication is kept in storage order, gap-free (see publish). */
  private published: bigint;

  constructor(store: ChatStore, options: Partial<ChatEventOptions> = {}) {
    this.store = store;
    this.options = { ...DEFAULT_CHAT_EVENT_OPTIONS, ...options };
    this.published = store.lastSeq();
  }

  get size(): number {
    return this.subs.size;
  }

  /** Registers a subscriber; returns its removal. */
  subscribe(
    party: string | undefined,
    deliver: (m: SequencedMessage) => void,
    delivery?: (frame: string) => void,
  ): () => void {
    const sub: Subscriber = { party, deliver, delivery };
    this.subs.add(sub);
    return () => this.subs.delete(sub);
  }

  /**
   * Publishes a newly stored message. Streams skip what they already sent by seq, so they must see
   * seqs in ascending order without holes: should acknowledgements ever resolve out of storage order,
   * the messages between the last published and this one (committed already, as seqs are assigned in
   * commit order) are read from the store and published first, and a late one is ignored.
   */
  publish(stored: StoredMessage): void {
    if (stored.seq === undefined || stored.seq <= this.published) return;
    const m = stored as SequencedMessage;
    const batch = m.seq === this.published + 1n ? [m] : this.gapTo(m);
    this.published = m.seq;
    for (const msg of batch) {
      for (const sub of [...this.subs]) {
        if (sub.party === undefined || sub.party === msg.from || sub.party === msg.to) sub.deliver(msg);
      }
    }
  }

  /** A forwarded message's delivery changed: to the streams of its parties (and the admin's). */
  publishDelivery(m: StoredMessage, d: Delivery): void {
    const frame = deliveryFrame(m, d);
    for (const sub of [...this.subs]) {
      if (sub.party === undefined || sub.party === m.from || sub.party === m.to) sub.delivery?.(frame);
    }
  }

  private gapTo(m: SequencedMessage): SequencedMessage[] {
    const out: SequencedMessage[] = [];
    let after = this.published;
    for (;;) {
      const page = this.store.after(after, { limit: BACKLOG_PAGE }).filter((x) => x.seq < m.seq);
      if (page.length === 0) break;
      out.push(...page);
      after = page[page.length - 1]!.seq;
    }
    out.push(m);
    return out;
  }
}

/** One SSE frame of a message. */
function messageFrame(m: SequencedMessage, json: (m: StoredMessage) => string): string {
  return `id: ${m.seq}\nevent: message\ndata: ${json(m)}\n\n`;
}

export interface ChatEventStreamOptions {
  hub: ChatEventHub;
  store: ChatStore;
  /** The hijacked response: headers not yet sent. */
  res: ServerResponse;
  /** Only messages from or to this public key; undefined: all (admin). */
  party: string | undefined;
  /** Replay stored messages after this seq first (Last-Event-ID); undefined: live only. */
  lastEventId: bigint | undefined;
  /** The envelope as compact JSON, as `GET /chat/messages` shows it. */
  json: (m: StoredMessage) => string;
  /** Whether the API server still listens: streams end when it closes, or its close would wait. */
  serverListening: () => boolean;
}

/**
 * One client's stream. Live events are queued from the moment the stream subscribes, before the
 * backlog is read: a message stored during the replay is then either in the backlog read or in the
 * queue, and one in both is written once (the queue skips seqs at or below the last written).
 */
export class ChatEventStream {
  private readonly o: ChatEventStreamOptions;
  private readonly res: ServerResponse;
  /** Frames to write; `seq` undefined for a delivery frame, which is always written. */
  private readonly queue: { seq: bigint | undefined; frame: string }[] = [];
  private queuedBytes = 0;
  private lastSent: bigint;
  private replaying: boolean;
  private waitingDrain = false;
  private closed = false;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  private lastWrite = Date.now();

  constructor(o: ChatEventStreamOptions) {
    this.o = o;
    this.res = o.res;
    this.lastSent = o.lastEventId ?? 0n;
    this.replaying = o.lastEventId !== undefined;
    const { pingIntervalMs } = o.hub.options;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    this.res.socket?.setNoDelay(true);
    // Flushed at once: a proxy or client would otherwise show nothing until the first message.
    this.res.write(': connected\n\n');
    this.unsubscribe = o.hub.subscribe(
      o.party,
      (m) => this.onLive(m),
      (frame) => this.enqueue(undefined, frame),
    );
    // An id beyond anything stored (from before the data was wiped, or from another node) would make
    // the stream skip every new message up to it: resume from the last stored one instead. Read
    // after subscribing, so a message stored meanwhile is live, not skipped.
    const stored = o.store.lastSeq();
    if (this.lastSent > stored) this.lastSent = stored;
    this.res.on('close', () => this.close());
    this.timer = setInterval(() => this.tick(), Math.min(pingIntervalMs, SERVER_CHECK_MS));
    this.timer.unref();
    if (this.replaying) void this.replay();
  }

  /**
   * A live event: queued, and written at once unless the socket is backed up or the backlog is still
   * being replayed. The queue is the bounded buffer: a client that falls behind by more overflows,
   * even during a long replay (it resumes from the last id written, so it still makes progress).
   */
  private onLive(m: SequencedMessage): void {
    if (this.closed || m.seq <= this.lastSent) return;
    this.enqueue(m.seq, messageFrame(m, this.o.json));
  }

  private enqueue(seq: bigint | undefined, frame: string): void {
    if (this.closed) return;
    this.queue.push({ seq, frame });
    this.queuedBytes += Buffer.byteLength(frame);
    const { maxBufferedEvents, maxBufferedBytes } = this.o.hub.options;
    if (this.queue.length > maxBufferedEvents || this.queuedBytes > maxBufferedBytes) {
      this.overflow();
      return;
    }
    if (!this.replaying) this.pump();
  }

  /** Writes queued events while the socket takes them; resumes on 'drain'. */
  private pump(): void {
    while (!this.closed && !this.waitingDrain && this.queue.length > 0) {
      const ev = this.queue.shift()!;
      this.queuedBytes -= Buffer.byteLength(ev.frame);
      if (ev.seq !== undefined) {
        if (ev.seq <= this.lastSent) continue;
        this.lastSent = ev.seq;
      }
      if (!this.write(ev.frame)) {
        this.waitingDrain = true;
        this.res.once('drain', () => {
          this.waitingDrain = false;
          this.pump();
        });
      }
    }
  }

  /** Stored messages after Last-Event-ID, page by page at the pace the client reads, then live. */
  private async replay(): Promise<void> {
    try {
      for (;;) {
        if (this.closed) return;
        const page = this.o.store.after(this.lastSent, { party: this.o.party, limit: BACKLOG_PAGE });
        if (page.length === 0) break;
        for (const m of page) {
          this.lastSent = m.seq;
          if (!this.write(messageFrame(m, this.o.json))) await this.drained();
          if (this.closed) return;
        }
      }
    } catch (e) {
      // A store read failing (closed under us at shutdown): end the stream; the client resumes.
      this.res.destroy(e instanceof Error ? e : undefined);
      return;
    }
    this.replaying = false;
    this.pump();
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  private write(frame: string): boolean {
    this.lastWrite = Date.now();
    return this.res.write(frame);
  }

  /**
   * The ping, and the end of the stream when the server stops: a hijacked response is no request
   * the server waits for to finish, yet its open socket would hold the server's close for ever.
   */
  private tick(): void {
    if (this.closed) return;
    if (!this.o.serverListening()) {
      // The socket goes too: left open as an idle keep-alive connection, it would still hold the
      // server's close until the keep-alive time-out.
      const socket = this.res.socket;
      this.res.end();
      socket?.end();
      this.close();
      return;
    }
    // No ping while the socket is backed up: it would only add to what the client has not read.
    if (!this.waitingDrain && Date.now() - this.lastWrite >= this.o.hub.options.pingIntervalMs)
      this.write(': ping\n\n');
  }

  /**
   * The client reads too slowly: rather than dropping anything, the stream ends with a last event
   * naming the last id written, and the client resumes from there with Last-Event-ID.
   */
  private overflow(): void {
    const reason = {
      reason: 'client too slow: event buffer full; reconnect with Last-Event-ID',
      last_event_id: this.lastSent.toString(),
    };
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.res.end(`event: overflow\ndata: ${JSON.stringify(reason)}\n\n`);
    const socket = this.res.socket;
    this.close();
    // A client that never reads again would keep the socket (and the bytes it holds) for ever.
    if (socket) {
      const t = setTimeout(() => socket.destroy(), OVERFLOW_GRACE_MS);
      t.unref();
      socket.once('close', () => clearTimeout(t));
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    clearInterval(this.timer);
  }
}
