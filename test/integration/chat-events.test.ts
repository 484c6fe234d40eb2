import { rmSync } from 'node:fs';
import { get as httpGet, type ClientRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHAT_EVENT_OPTIONS } from '../../node-core/chat/chat-events.ts';
import { ChatStore } from '../../node-core/chat/chat-store.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { parseJson } from '../../node-core/protocol/json.ts';
import { generateKeyPair, type KeyPair } from '../../node-core/protocol/keys.ts';
import {
  type ChatEnvelope,
  chatEnvelopeIdBytes,
  signChatEnvelope,
  signChatReadAuth,
  signDirectoryRegistration,
} from '../../node-core/protocol/payloads.ts';
import { powValid } from '../../node-core/protocol/pow.ts';
import { http, nowNs } from '../helpers/ledger-kit.ts';
import { Store } from '../../node-core/store/store.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { P2P } from '../helpers/p2p.ts';

/**
 * The chat event stream (GET /chat/events, contract Events; issue #13): Server-Sent Events with the
 * message's storage sequence number as id, an account's messages with its ownership proof or all
 * with the admin token, lossless resume with Last-Event-ID, a slow client closed with
 * `event: overflow` instead of losing messages (the reference drops them, reference-behavior.md
 * 9.5), and pings that keep an idle stream open past the API's connection time limits.
 */

interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** An SSE client over a raw http.get: parses frames as they arrive. */
class Sse {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  ended = false;
  private buf = '';
  private waiters: (() => void)[] = [];

  readonly req: ClientRequest;
  readonly res: IncomingMessage;

  private constructor(req: ClientRequest, res: IncomingMessage) {
    this.req = req;
    this.res = res;
  }

  /** Opens a stream; `paused`: the client reads nothing until `read()`. */
  static open(url: string, path: string, headers: Record<string, string> = {}, paused = false): Promise<Sse> {
    return new Promise((resolve, reject) => {
      const req = httpGet(`${url}${path}`, { headers }, (res) => {
        const s = new Sse(req, res);
        res.setEncoding('utf8');
        res.on('end', () => {
          s.ended = true;
          s.wake();
        });
        res.on('close', () => {
          s.ended = true;
          s.wake();
        });
        if (paused) res.pause();
        else s.read();
        resolve(s);
      });
      req.on('error', reject);
    });
  }

  read(): void {
    this.res.on('data', (chunk: string) => this.onData(chunk));
    this.res.resume();
  }

  get messages(): SseEvent[] {
    return this.events.filter((e) => e.event === 'message');
  }

  texts(): string[] {
    return this.messages.map((e) => (parseJson(e.data) as { message: string }).message);
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let i: number;
    while ((i = this.buf.indexOf('\n\n')) >= 0) {
      const frame = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      const ev: SseEvent = { event: 'message', data: '' };
      let isComment = true;
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        isComment = false;
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'id') ev.id = value;
        else if (field === 'event') ev.event = value;
        else if (field === 'data') ev.data += value;
      }
      if (!isComment) this.events.push(ev);
    }
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once `pred` holds, or throws after `ms`. */
  async until(pred: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0 || (this.ended && !pred())) {
        if (pred()) return;
        if (this.ended) throw new Error(`stream ended before ${what}`);
        throw new Error(`timed out waiting for ${what}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.req.destroy();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('chat event stream', () => {
  let t: TestNode;
  let url: string;
  const [alice, bob, carol] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
  const admin = () => ({ authorization: `Bearer ${t.node.adminToken}` });
  let n = 0;
  let stopped = false;

  async function register(k: KeyPair): Promise<void> {
    const reg = signDirectoryRegistration(
      { account: k.pub_key, node_peer: t.node.nodeId, timestamp: nowNs() },
      hexToBytes(k.seed_hex),
    );
    expect((await http(url, 'POST', '/directory/register', reg)).status).toBe(200);
  }

  function envelope(from: KeyPair, to: KeyPair, message: string) {
    // A counter keeps two messages of the same text and instant apart.
    const env: ChatEnvelope = {
      from: from.pub_key,
      to: to.pub_key,
      message,
      timestamp: nowNs() + BigInt(n++),
    };
    const id = chatEnvelopeIdBytes(env);
    let nonce = 0n;
    while (!powValid(id, nonce, t.node.statechain.pow.chat)) nonce += 1n;
    return { ...signChatEnvelope(env, hexToBytes(from.seed_hex)), pow_nonce: nonce };
  }

  async function send(from: KeyPair, to: KeyPair, message: string): Promise<string> {
    const r = await http(url, 'POST', '/chat/send', envelope(from, to, message));
    expect(r.status).toBe(200);
    return (r.body as { id: string }).id;
  }

  async function proof(k: KeyPair, signer = k): Promise<string> {
    const { challenge } = (await http(url, 'GET', '/chat/auth/challenge')).body as { challenge: string };
    const sig = signChatReadAuth(challenge, hexToBytes(signer.seed_hex));
    return `account=${k.pub_key}&pub_key=${signer.pub_key}&challenge=${challenge}&sig=${sig}`;
  }

  const open = async (k: KeyPair, headers: Record<string, string> = {}) =>
    Sse.open(url, `/chat/events?${await proof(k)}`, headers);

  beforeAll(async () => {
    t = await startTestNode({ ...P2P });
    url = t.node.url;
    for (const k of [alice, bob, carol]) await register(k);
  }, 60_000);

  afterAll(async () => {
    if (!stopped) await t?.stop();
  });

  it('streams an account its messages after it opened; another account and the admin', async () => {
    const bobs = await open(bob);
    expect(bobs.res.statusCode).toBe(200);
    expect(bobs.res.headers['content-type']).toBe('text/event-stream');
    expect(bobs.res.headers['cache-control']).toBe('no-cache');
    expect(bobs.res.headers.connection).toBe('keep-alive');
    const carols = await open(carol);
    const all = await Sse.open(url, '/chat/events', admin());
    await bobs.until(() => bobs.comments.includes('connected'), 5_000, ': connected');
    const id = await send(alice, bob, 'hello bob');
    await send(bob, alice, 'hi alice');
    await send(alice, carol, 'hello carol');
    await bobs.until(() => bobs.messages.length >= 2, 5_000, "bob's two messages");
    await carols.until(() => carols.messages.length >= 1, 5_000, "carol's message");
    await all.until(() => all.messages.length >= 3, 5_000, 'all three');
    expect(bobs.texts()).toEqual(['hello bob', 'hi alice']);
    const first = parseJson(bobs.messages[0]!.data) as Record<string, unknown>;
    const listed = (await http(url, 'GET', `/chat/messages?${await proof(bob)}`)).body as Record<
      string,
      unknown
    >[];
    // The same envelope fields as GET /chat/messages.
    expect(first).toEqual(listed.find((m) => m.id === id));
    expect(bobs.messages[0]!.id).toBe(t.node.chatStore.get(id)!.seq!.toString());
    // Carol's stream sees only hers, the admin's everything, all in storage order.
    expect(carols.texts()).toEqual(['hello carol']);
    expect(all.texts()).toEqual(['hello bob', 'hi alice', 'hello carol']);
    const ids = all.messages.map((e) => BigInt(e.id!));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    for (const s of [bobs, carols, all]) s.close();
  });

  it('needs the proof with an account and the admin token without', async () => {
    const noProof = await http(url, 'GET', `/chat/events?account=${bob.pub_key}`);
    expect(noProof.status).toBe(401);
    expect(noProof.headers.get('content-type')).toMatch(/json/);
    expect((await http(url, 'GET', `/chat/events?${await proof(bob, alice)}`)).status).toBe(403);
    expect((await http(url, 'GET', '/chat/events')).status).toBe(401);
    expect(
      (await http(url, 'GET', '/chat/events', undefined, { authorization: 'Bearer wrong' })).status,
    ).toBe(401);
    expect((await http(url, 'GET', '/chat/events?last_event_id=x', undefined, admin())).status).toBe(400);
    expect(
      (await http(url, 'GET', '/chat/events', undefined, { ...admin(), 'last-event-id': '1a' })).status,
    ).toBe(400);
  });

  it('resumes after Last-Event-ID: exactly the missed messages, in order, then live', async () => {
    const first = await open(bob);
    await send(alice, bob, 'r1');
    await send(alice, bob, 'r2');
    await first.until(() => first.messages.length >= 2, 5_000, 'r1, r2');
    expect(first.texts()).toEqual(['r1', 'r2']);
    const last = first.messages[1]!.id!;
    first.close();
    await send(alice, bob, 'r3');
    await send(alice, carol, 'not for bob');
    await send(bob, alice, 'r4');
    await send(alice, bob, 'r5');
    const again = await open(bob, { 'last-event-id': last });
    await again.until(() => again.messages.length >= 3, 5_000, 'the three missed');
    await send(alice, bob, 'r6');
    await again.until(() => again.messages.length >= 4, 5_000, 'the live one');
    await sleep(200);
    expect(again.texts()).toEqual(['r3', 'r4', 'r5', 'r6']);
    const ids = again.messages.map((e) => BigInt(e.id!));
    expect(ids[0]! > BigInt(last)).toBe(true);
    expect(new Set(ids).size).toBe(4);
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    again.close();
    // The query form, for EventSource's first connect: the admin stream from the same id.
    const q = await Sse.open(url, `/chat/events?last_event_id=${last}`, admin());
    await q.until(() => q.messages.length >= 5, 5_000, 'the backlog by query');
    expect(q.texts()).toEqual(['r3', 'not for bob', 'r4', 'r5', 'r6']);
    q.close();
    // The header wins over the query (EventSource keeps the first URL); an id beyond anything
    // stored (a wiped node) resumes from the newest instead of skipping new messages up to it.
    const future = await Sse.open(url, `/chat/events?last_event_id=${last}`, {
      ...admin(),
      'last-event-id': '99999999999',
    });
    await future.until(() => future.comments.includes('connected'), 5_000, ': connected');
    await send(alice, bob, 'r7');
    await future.until(() => future.messages.length >= 1, 5_000, 'r7');
    await sleep(200);
    expect(future.texts()).toEqual(['r7']);
    future.close();
  });

  it('closes a client that does not read with event: overflow; resuming loses nothing', async () => {
    const options = t.node.chatEvents.options;
    options.maxBufferedEvents = 2;
    // The earlier tests' streams, closed by their clients, are unsubscribed.
    for (let i = 0; i < 50 && t.node.chatEvents.size > 0; i++) await sleep(20);
    const before = t.node.chatEvents.size;
    expect(before).toBe(0);
    const sent: string[] = [];
    try {
      const slow = await Sse.open(url, '/chat/events', admin(), true);
      await sleep(100);
      expect(t.node.chatEvents.size).toBe(before + 1);
      // Big messages fill the socket buffers, then the stream's own tiny one.
      const big = 'x'.repeat(8000);
      for (let i = 0; i < 2000 && t.node.chatEvents.size > before; i += 10) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, (_, j) => send(alice, bob, `${i + j} ${big}`)),
        );
        sent.push(...batch);
      }
      expect(t.node.chatEvents.size).toBe(before);
      // More after the overflow: the resumed stream must bring these too.
      for (let i = 0; i < 3; i++) sent.push(await send(bob, alice, `after ${i}`));
      slow.read();
      await slow.until(() => slow.ended, 20_000, 'the end of the overflowed stream');
      const tail = slow.events[slow.events.length - 1]!;
      expect(tail.event).toBe('overflow');
      const reason = parseJson(tail.data) as { reason: string; last_event_id: string };
      expect(reason.reason).toMatch(/Last-Event-ID/);
      const got = slow.messages;
      expect(got.length).toBeGreaterThan(0);
      expect(reason.last_event_id).toBe(got[got.length - 1]!.id);
      const resumed = await Sse.open(url, '/chat/events', {
        ...admin(),
        'last-event-id': reason.last_event_id,
      });
      const firstSent = t.node.chatStore.get(sent[0]!)!.seq!;
      const seen = () =>
        [...got, ...resumed.messages]
          .filter((e) => BigInt(e.id!) >= firstSent)
          .map((e) => (parseJson(e.data) as { id: string }).id);
      await resumed.until(() => seen().length >= sent.length, 20_000, 'every message sent');
      resumed.close();
      const ids = seen();
      expect(new Set(ids).size).toBe(ids.length);
      expect(new Set(ids)).toEqual(new Set(sent));
    } finally {
      options.maxBufferedEvents = DEFAULT_CHAT_EVENT_OPTIONS.maxBufferedEvents;
    }
  }, 120_000);

  it('an idle stream lives past the keep-alive time limit, with pings', async () => {
    const options = t.node.chatEvents.options;
    options.pingIntervalMs = 500;
    try {
      const s = await open(alice);
      await sleep(7_000);
      expect(s.ended).toBe(false);
      expect(s.comments.filter((c) => c === 'ping').length).toBeGreaterThanOrEqual(5);
      await send(carol, alice, 'still there');
      await s.until(() => s.messages.length >= 1, 5_000, 'a message after 7 s idle');
      expect(s.texts()).toEqual(['still there']);
      s.close();
    } finally {
      options.pingIntervalMs = DEFAULT_CHAT_EVENT_OPTIONS.pingIntervalMs;
    }
  }, 20_000);

  it('ends open streams when the node stops (a hijacked stream would hold the close)', async () => {
    const s = await Sse.open(url, '/chat/events', admin());
    await s.until(() => s.comments.includes('connected'), 5_000, ': connected');
    stopped = true;
    const started = Date.now();
    await t.stop();
    await s.until(() => s.ended, 5_000, 'the end of the stream');
    // Not held until the 5 s keep-alive time-out of the stream's connection.
    expect(Date.now() - started).toBeLessThan(4_000);
  }, 30_000);
});

describe('chat sequence numbers', () => {
  it('are assigned in storage order, never reused, and pruned with their messages', async () => {
    const dir = tempDir('chat-seq-');
    const store = Store.open({ path: join(dir, 'store.lmdb') });
    try {
      const chat = new ChatStore(
        {
          messages: store.chatMessages,
          index: store.chatIndex,
          seqs: store.chatSeq,
          transaction: (fn) => store.transaction(fn),
        },
        { maxPerAccount: 2 },
      );
      const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
      const put = async (from: KeyPair, to: KeyPair, message: string, ts: bigint) => {
        const m = await chat.put(
          signChatEnvelope(
            { from: from.pub_key, to: to.pub_key, message, timestamp: ts },
            hexToBytes(from.seed_hex),
          ),
          ts,
        );
        if (m === false) throw new Error('not stored');
        return m;
      };
      const t0 = 1_790_000_000_000_000_000n;
      const m1 = await put(a, b, 'one', t0);
      const m2 = await put(c, b, 'two', t0 + 1n);
      const m3 = await put(a, c, 'three', t0 + 2n);
      expect([m1.seq, m2.seq, m3.seq]).toEqual([1n, 2n, 3n]);
      expect(chat.after(0n).map((m) => m.message)).toEqual(['one', 'two', 'three']);
      expect(chat.after(1n, { party: c.pub_key }).map((m) => m.message)).toEqual(['two', 'three']);
      expect(chat.after(0n, { party: b.pub_key, limit: 1 }).map((m) => m.message)).toEqual(['one']);
      expect(chat.get(m2.id)!.seq).toBe(2n);
      // Keeping 2 per account: a fourth message from a to b pushes 'one' out of both a's index (one,
      // three, four) and b's (one, two, four), so it goes, and its sequence entry with it.
      const m4 = await put(a, b, 'four', t0 + 3n);
      expect(chat.has(m1.id)).toBe(false);
      expect(chat.after(0n).map((m) => [m.seq, m.message])).toEqual([
        [2n, 'two'],
        [3n, 'three'],
        [4n, 'four'],
      ]);
      expect(store.chatSeq.get('00000000000000000001')).toBeUndefined();
      // The numbers go on after pruning, and after the last message is pruned too.
      expect(m4.seq).toBe(4n);
      expect(await chat.pruneOlderThan(t0 + chat.retention.maxAgeNs + 10n)).toBe(3);
      expect(chat.after(0n)).toEqual([]);
      expect((await put(a, b, 'five', t0 + chat.retention.maxAgeNs + 20n)).seq).toBe(5n);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
