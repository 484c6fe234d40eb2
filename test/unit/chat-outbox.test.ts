import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatDeliveryError, ChatOutbox } from '../../node-core/chat/chat-outbox.ts';
import { ChatStore, type Delivery, type StoredMessage } from '../../node-core/chat/chat-store.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { signChatEnvelope } from '../../node-core/protocol/payloads.ts';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * The chat outbox's schedule (chat/chat-outbox.ts) on a real store, the other node replaced by a
 * function: backoff between attempts, an attempt at once when the node connects, a permanent
 * refusal or the end of its time failing the message, and the outbox reloaded from disk.
 */
const nowNs = () => BigInt(Date.now()) * 1_000_000n;

describe('chat outbox', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  function open(dir = tempDir('chat-outbox-')) {
    const store = Store.open({ path: join(dir, 'store.lmdb') });
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanup.push(() => store.close());
    const chat = new ChatStore({
      messages: store.chatMessages,
      index: store.chatIndex,
      deliveries: store.chatDelivery,
      transaction: (fn) => store.transaction(fn),
    });
    return { chat, dir, store };
  }

  const [alice, bob] = [generateKeyPair(), generateKeyPair()];
  async function pending(chat: ChatStore, text: string): Promise<StoredMessage> {
    const now = nowNs();
    const env = signChatEnvelope(
      { from: alice.pub_key, to: bob.pub_key, message: text, timestamp: now },
      hexToBytes(alice.seed_hex),
    );
    return (await chat.put(env, now, { state: 'pending', attempts: 0, updated_at: now })) as StoredMessage;
  }

  function outbox(chat: ChatStore, send: (peer: string) => Promise<void>, opts = {}) {
    const changes: Delivery[] = [];
    const attempts: number[] = [];
    const box = new ChatOutbox(
      {
        store: chat,
        now: nowNs,
        resolve: () => 'peer-b',
        send: (peer) => {
          attempts.push(Date.now());
          return send(peer);
        },
        onChange: (_m, d) => changes.push(d),
      },
      { backoffMs: 100, maxBackoffMs: 400, ...opts },
    );
    cleanup.push(() => box.stop());
    return { box, changes, attempts };
  }

  it('retries with doubling delays up to the cap, then delivers', async () => {
    const { chat } = open();
    let up = false;
    const { box, changes, attempts } = outbox(chat, async () => {
      if (!up) throw new ChatDeliveryError('unreachable', 'down');
    });
    box.start();
    const m = await pending(chat, 'hello');
    expect(await box.deliverNow(m, 1_000)).toMatchObject({ state: 'pending', attempts: 1, error: 'down' });
    await new Promise((r) => setTimeout(r, 1_400));
    up = true;
    await new Promise((r) => setTimeout(r, 600));
    expect(chat.delivery(m.id)?.state).toBe('delivered');
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
    // 100, 200, 400, 400 ms (capped), each within the timer's slack.
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[1]).toBeGreaterThanOrEqual(190);
    expect(gaps[2]).toBeGreaterThanOrEqual(390);
    for (const g of gaps) expect(g).toBeLessThan(1_500); // never stuck (wide slack: a loaded CI machine)
    expect(changes.at(-1)).toMatchObject({ state: 'delivered' });
    expect(box.pending).toBe(0);
  });

  it('tries at once when the recipient node connects, not at the end of the backoff', async () => {
    const { chat } = open();
    let up = false;
    const { box, attempts } = outbox(
      chat,
      async () => {
        if (!up) throw new ChatDeliveryError('unreachable', 'down');
      },
      { backoffMs: 60_000, maxBackoffMs: 60_000 },
    );
    box.start();
    const m = await pending(chat, 'soon');
    await box.deliverNow(m, 1_000);
    up = true;
    box.peerConnected('someone-else');
    await new Promise((r) => setTimeout(r, 100));
    expect(attempts.length).toBe(1);
    box.peerConnected('peer-b');
    await new Promise((r) => setTimeout(r, 200));
    expect(attempts.length).toBe(2);
    expect(chat.delivery(m.id)?.state).toBe('delivered');
  });

  it('keeps retrying when an attempt records its outcome more slowly than its backoff', async () => {
    const { chat } = open();
    // The store's write of a failed attempt takes longer than the next attempt's delay: the next
    // comes due while the attempt is still under way (a node's write batch, a checkpoint).
    const setDelivery = chat.setDelivery.bind(chat);
    chat.setDelivery = async (id, d) => {
      await new Promise((r) => setTimeout(r, 150));
      return setDelivery(id, d);
    };
    let up = false;
    const { box } = outbox(
      chat,
      async () => {
        if (!up) throw new ChatDeliveryError('unreachable', 'down');
      },
      { backoffMs: 50, maxBackoffMs: 50 },
    );
    box.start();
    // Two messages: each one's attempts set the timer for the other's next one.
    const ms = [await pending(chat, 'slow store 1'), await pending(chat, 'slow store 2')];
    await Promise.all(ms.map((m) => box.deliverNow(m, 1_000)));
    await new Promise((r) => setTimeout(r, 1_000));
    // An attempt at each every 50 ms + 150 ms: about 5 more each in 1 s. A message whose place in
    // the queue was taken while its attempt was still recording got none after it.
    for (const m of ms) expect(chat.delivery(m.id)?.attempts).toBeGreaterThanOrEqual(3);
    up = true;
    await new Promise((r) => setTimeout(r, 800));
    for (const m of ms) expect(chat.delivery(m.id)?.state).toBe('delivered');
  });

  it('tries again at once when the node connects during an attempt that then fails, not after the backoff', async () => {
    const { chat } = open();
    let release: (() => void) | undefined;
    let up = false;
    const { box, attempts } = outbox(
      chat,
      async () => {
        if (up) return;
        // The dial to a node still starting: it fails, but only after the node has connected.
        await new Promise<void>((r) => (release = r));
        throw new ChatDeliveryError('unreachable', 'down');
      },
      { backoffMs: 60_000, maxBackoffMs: 60_000 },
    );
    box.start();
    const m = await pending(chat, 'in flight');
    const first = box.deliverNow(m, 5_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(attempts.length).toBe(1);
    box.peerConnected('peer-b');
    up = true;
    release!();
    expect(await first).toMatchObject({ state: 'pending', attempts: 1 });
    await new Promise((r) => setTimeout(r, 300));
    expect(attempts.length).toBe(2);
    expect(chat.delivery(m.id)?.state).toBe('delivered');
  });

  it('with 400 messages waiting, a node connecting reads only those it attempts, 8 at a time', async () => {
    const { chat } = open();
    let up = false;
    let inFlight = 0;
    let most = 0;
    const { box, attempts } = outbox(
      chat,
      async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 2));
        inFlight -= 1;
        if (!up) throw new ChatDeliveryError('unreachable', 'down');
      },
      { backoffMs: 60_000, maxBackoffMs: 60_000 },
    );
    box.start();
    const ms = [];
    for (let i = 0; i < 400; i++) ms.push(await pending(chat, `m${i}`));
    await Promise.all(ms.map((m) => box.deliverNow(m, 5_000)));
    expect(attempts.length).toBe(400);
    expect(box.pending).toBe(400);
    // A node connecting: each recipient's node looked up, no message read from the store but by
    // the 8 attempts it starts (one read per waiting message before, whenever any node connected).
    const get = chat.get.bind(chat);
    let reads = 0;
    chat.get = (id) => {
      reads += 1;
      return get(id);
    };
    up = true;
    // A message's first attempt goes at once (deliverNow); retries go through the queue.
    most = 0;
    box.peerConnected('peer-b');
    chat.get = get;
    expect(reads).toBeLessThanOrEqual(8);
    const started = Date.now();
    while (box.pending > 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 20));
    expect(box.pending).toBe(0);
    // A message leaves the outbox when its last attempt ends, before its outcome is written: the
    // attempts under way record theirs by the time stop() resolves.
    await box.stop();
    expect(attempts.length).toBe(800);
    expect(most).toBeLessThanOrEqual(8);
    expect(ms.every((m) => chat.delivery(m.id)?.state === 'delivered')).toBe(true);
  });

  it('fails a refused message at once and one out of time, and retry() puts it back', async () => {
    const { chat } = open();
    let answer: Error | undefined = new ChatDeliveryError('refused', 'invalid envelope: nope');
    const { box } = outbox(chat, async () => {
      if (answer) throw answer;
    });
    box.start();
    const refused = await pending(chat, 'refused');
    expect(await box.deliverNow(refused, 1_000)).toMatchObject({
      state: 'failed',
      error: 'invalid envelope: nope',
    });
    box.options.maxAgeNs = 0n;
    answer = new ChatDeliveryError('unreachable', 'down');
    const late = await pending(chat, 'late');
    expect(await box.deliverNow(late, 1_000)).toMatchObject({ state: 'failed', error: 'down' });
    expect(await box.retry(late.id)).toMatchObject({ state: 'failed' });
    answer = undefined;
    expect(await box.retry(refused.id)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(await box.retry(refused.id)).toBeUndefined(); // only a failed one
  });

  it('resumes what it held from disk after a restart', async () => {
    const first = open();
    const { box } = outbox(first.chat, async () => {
      throw new ChatDeliveryError('unreachable', 'down');
    });
    box.start();
    const m = await pending(first.chat, 'across a restart');
    await box.deliverNow(m, 1_000);
    await box.stop();
    await first.store.close();
    const again = open(first.dir);
    const delivered: string[] = [];
    const next = new ChatOutbox(
      {
        store: again.chat,
        now: nowNs,
        resolve: () => 'peer-b',
        send: async (_p, msg) => void delivered.push(msg.id),
      },
      { backoffMs: 50 },
    );
    cleanup.push(() => next.stop());
    next.start();
    expect(next.pending).toBe(1);
    await new Promise((r) => setTimeout(r, 400));
    expect(delivered).toEqual([m.id]);
    expect(again.chat.delivery(m.id)).toMatchObject({ state: 'delivered', attempts: 2 });
  });
});
