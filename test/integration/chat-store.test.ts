import { fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatStore } from '../../node-core/chat/chat-store.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { chatEnvelopeId } from '../../node-core/protocol/payloads.ts';
import { Store } from '../../node-core/store/store.ts';
import { signedMessage } from '../helpers/chat-kit.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * The chat store (issue #13, first step) on a real LMDB store: stored once per id, both parties'
 * views newest first with `since` and paging, contacts, retention by count and by age, and nothing
 * acknowledged lost when the process is killed right after.
 */

const SECOND = 1_000_000_000n;
const T0 = 1_790_000_000n * SECOND;

describe('chat store (LMDB)', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close().catch(() => {});
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function open(
    dir = tempDir('chat-store-'),
    retention = {},
  ): { chat: ChatStore; store: Store; dir: string } {
    dirs.push(dir);
    const store = Store.open({ path: join(dir, 'store.lmdb') });
    stores.push(store);
    const chat = new ChatStore(
      {
        messages: store.chatMessages,
        index: store.chatIndex,
        deliveries: store.chatDelivery,
        transaction: (fn) => store.transaction(fn),
      },
      retention,
    );
    return { chat, store, dir };
  }

  it('stores a message once and shows it to both parties, newest first, with since and paging', async () => {
    const { chat } = open();
    const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
    const m1 = signedMessage(a, b, 'one', T0 + 1n * SECOND);
    const m2 = signedMessage(b, a, 'two', T0 + 2n * SECOND);
    const m3 = signedMessage(a, c, 'three', T0 + 3n * SECOND);
    expect(await chat.put(m1, T0)).toMatchObject({ id: chatEnvelopeId(m1), message: 'one' });
    expect(await chat.put(m1, T0)).toBe(false); // a duplicate
    await chat.put(m2, T0);
    await chat.put(m3, T0);

    const ofA = chat.list(a.pub_key);
    expect(ofA.total).toBe(3);
    expect(ofA.messages.map((m) => m.message)).toEqual(['three', 'two', 'one']);
    expect(chat.list(b.pub_key).messages.map((m) => m.message)).toEqual(['two', 'one']);
    expect(chat.list(a.pub_key, { since: T0 + 1n * SECOND }).messages.map((m) => m.message)).toEqual([
      'three',
      'two',
    ]);
    expect(chat.list(a.pub_key, { offset: 1, limit: 1 }).messages.map((m) => m.message)).toEqual(['two']);
    expect(chat.contacts(a.pub_key)).toEqual([
      { key: c.pub_key, last_timestamp: T0 + 3n * SECOND, count: 1 },
      { key: b.pub_key, last_timestamp: T0 + 2n * SECOND, count: 2 },
    ]);
    // Exact values come back: the timestamp as a bigint, the signature as signed.
    expect(chat.get(chatEnvelopeId(m2))).toEqual({ ...m2, id: chatEnvelopeId(m2), received_at: T0 });
  });

  it('keeps at most the count per account, dropping a message only when neither party keeps it', async () => {
    const { chat } = open(undefined, { maxPerAccount: 2 });
    const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
    const ab1 = signedMessage(a, b, 'ab1', T0 + 1n);
    const ab2 = signedMessage(a, b, 'ab2', T0 + 2n);
    const ac3 = signedMessage(a, c, 'ac3', T0 + 3n);
    for (const m of [ab1, ab2, ac3]) await chat.put(m, T0);
    // a keeps its 2 newest; ab1 falls out of a's view but b still holds it.
    expect(chat.list(a.pub_key).messages.map((m) => m.message)).toEqual(['ac3', 'ab2']);
    expect(chat.list(b.pub_key).messages.map((m) => m.message)).toEqual(['ab2', 'ab1']);
    expect(chat.has(chatEnvelopeId(ab1))).toBe(true);
    // Two more for b push ab1 out of b's view too: then it is gone.
    await chat.put(signedMessage(c, b, 'cb4', T0 + 4n), T0);
    await chat.put(signedMessage(c, b, 'cb5', T0 + 5n), T0);
    expect(chat.list(b.pub_key).messages.map((m) => m.message)).toEqual(['cb5', 'cb4']);
    expect(chat.has(chatEnvelopeId(ab1))).toBe(false);
    expect(chat.has(chatEnvelopeId(ab2))).toBe(true); // a still keeps it
  });

  it('prunes messages older than the retention age', async () => {
    const { chat } = open(undefined, { maxAgeNs: 60n * SECOND });
    const [a, b] = [generateKeyPair(), generateKeyPair()];
    const old = signedMessage(a, b, 'old', T0);
    const fresh = signedMessage(a, b, 'fresh', T0 + 100n * SECOND);
    await chat.put(old, T0);
    await chat.put(fresh, T0);
    expect(await chat.pruneOlderThan(T0 + 120n * SECOND)).toBe(1);
    expect(chat.list(a.pub_key).messages.map((m) => m.message)).toEqual(['fresh']);
    expect(chat.list(b.pub_key).total).toBe(1);
    expect(chat.has(chatEnvelopeId(old))).toBe(false);
  });

  it('loses nothing it acknowledged when the process is killed right after', async () => {
    const dir = tempDir('chat-crash-');
    dirs.push(dir);
    const child = fork(join(import.meta.dirname, '..', 'helpers', 'chat-writer.ts'), [dir, '200'], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const acked: string[] = [];
    await new Promise<void>((resolve) => {
      child.on('message', (m: { id: string }) => {
        acked.push(m.id);
        // Killed without warning after the 50th acknowledgement, in the middle of the writes.
        if (acked.length === 50) child.kill('SIGKILL');
      });
      child.on('exit', () => resolve());
    });
    expect(acked.length).toBeGreaterThanOrEqual(50);
    const { chat } = open(dir);
    for (const id of acked) expect(chat.has(id)).toBe(true);
    // Each was written with its outbox entry (for another node) in the same transaction: none lost.
    const outbox = new Set(chat.pendingDeliveries().map((p) => p.id));
    for (const id of acked) expect(outbox.has(id)).toBe(true);
  });

  it("keeps a forwarded message's delivery with it, and drops it with it", async () => {
    const { chat } = open(undefined, { maxPerAccount: 1 });
    const [a, b] = [generateKeyPair(), generateKeyPair()];
    const first = signedMessage(a, b, 'first', T0);
    await chat.put(first, T0, { state: 'pending', attempts: 0, updated_at: T0 });
    const id = chatEnvelopeId(first);
    expect(chat.pendingDeliveries().map((p) => p.id)).toEqual([id]);
    expect(await chat.setDelivery(id, { state: 'delivered', attempts: 1, updated_at: T0 + SECOND })).toBe(
      true,
    );
    expect(chat.delivery(id)).toEqual({ state: 'delivered', attempts: 1, updated_at: T0 + SECOND });
    expect(chat.pendingDeliveries()).toEqual([]);
    // Trimmed by the count: the message and its delivery go together; a later update finds nothing.
    await chat.put(signedMessage(a, b, 'second', T0 + SECOND), T0);
    expect(chat.has(id)).toBe(false);
    expect(chat.delivery(id)).toBeUndefined();
    expect(await chat.setDelivery(id, { state: 'failed', attempts: 2, updated_at: T0 })).toBe(false);
  });
});
