import type { Database } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { ChatStore, type Delivery } from '../../node-core/chat/chat-store.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import type { Store } from '../../node-core/store/store.ts';
import { signedMessage } from '../helpers/chat-kit.ts';
import { tempStores } from '../helpers/temp-stores.ts';

const SECOND = 1_000_000_000n;
const T0 = 1_790_000_000n * SECOND;

/** A database whose range reads count the entries they yield. */
function counted(db: Database<string, string>) {
  const reads = { entries: 0 };
  const wrap = <T>(it: Iterable<T>): Iterable<T> => ({
    *[Symbol.iterator]() {
      for (const x of it) {
        reads.entries += 1;
        yield x;
      }
    },
  });
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (prop === 'getKeys' || prop === 'getRange')
        return (opts: object) => wrap((target[prop] as (o: object) => Iterable<unknown>).call(target, opts));
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { db: proxy, reads };
}

/**
 * The chat store at scale (issue #18): a page of an account's messages reads that page, the hourly
 * retention pass reads only what is past it, and the admin's account list seeks from account to
 * account.
 */
describe('chat store at scale reads what it needs', () => {
  const temp = tempStores();

  function open(store: Store) {
    const index = counted(store.chatIndex);
    const transactions = { count: 0 };
    const chat = new ChatStore(
      {
        messages: store.chatMessages,
        index: index.db,
        transaction: (fn) => {
          transactions.count += 1;
          return store.transaction(fn);
        },
      },
      { maxAgeNs: 3_600n * SECOND },
    );
    return { chat, index: index.reads, transactions };
  }

  it('a page, the retention pass and the account list at 3 accounts x 60 messages', async () => {
    const { store } = temp.open();
    const { chat, index, transactions } = open(store);
    const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
    // 60 from a to b and 60 from b to c, one a second; the first 5 of each are over an hour old.
    for (let i = 0n; i < 60n; i++) {
      await chat.put(signedMessage(a, b, `ab ${i}`, T0 + i * SECOND), T0);
      await chat.put(signedMessage(b, c, `bc ${i}`, T0 + i * SECOND), T0);
    }
    const now = T0 + 3_605n * SECOND;

    index.entries = 0;
    expect(chat.accounts()).toEqual([a.pub_key, b.pub_key, c.pub_key].sort());
    // One seek per account, then one past the last: not the 240 entries.
    expect(index.entries).toBe(3);

    // A page of an account's messages: LMDB counts them and skips to the page.
    index.entries = 0;
    const page = chat.list(b.pub_key, { offset: 100, limit: 10 });
    expect(page.total).toBe(120);
    // Newest first, two a second (their order within a second is their ids').
    expect(page.messages.map((m) => m.timestamp)).toEqual(
      [9n, 9n, 8n, 8n, 7n, 7n, 6n, 6n, 5n, 5n].map((i) => T0 + i * SECOND),
    );
    expect(index.entries).toBe(10);

    // Nothing past retention yet: the accounts, a look before each one's cutoff, no write.
    index.entries = 0;
    transactions.count = 0;
    expect(await chat.pruneOlderThan(T0)).toBe(0);
    expect(index.entries).toBe(3);
    expect(transactions.count).toBe(0);

    index.entries = 0;
    expect(await chat.pruneOlderThan(now)).toBe(10);
    // The look (the accounts, a's first old entry), then the accounts (3) and the entries before the
    // cutoff: a 5, b 10, c 5.
    expect(index.entries).toBe(4 + 3 + 20);
    expect(transactions.count).toBe(1);
    expect(chat.list(b.pub_key).total).toBe(110);
    expect(chat.list(a.pub_key).total).toBe(55);
  });

  it('contacts read the parties from the stored text, whatever the message says', async () => {
    const { store } = temp.open();
    const { chat } = open(store);
    const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
    // A message naming other keys the way the stored JSON names its parties.
    const tricky = `"from":"${c.pub_key}","to":"${c.pub_key}"`;
    const m = signedMessage(a, b, tricky, T0 + SECOND);
    const stored = await chat.put(m, T0);
    await chat.put(signedMessage(c, a, 'hello', T0), T0);
    // The stored text names its parties as the contacts read them (compact JSON, the key first).
    const text = store.chatMessages.get((stored as { id: string }).id)!;
    expect(text).toContain(`"from":"${a.pub_key}"`);
    expect(text).toContain(`"to":"${b.pub_key}"`);
    expect(chat.contacts(a.pub_key)).toEqual([
      { key: b.pub_key, last_timestamp: T0 + SECOND, count: 1 },
      { key: c.pub_key, last_timestamp: T0, count: 1 },
    ]);
    expect(chat.contacts(b.pub_key)).toEqual([{ key: a.pub_key, last_timestamp: T0 + SECOND, count: 1 }]);
    expect(chat.get((stored as { id: string }).id)!.message).toBe(tricky);
  });

  it('the outbox at start: pending deliveries only, whatever an error message says', async () => {
    const { store } = temp.open();
    const chat = new ChatStore({
      messages: store.chatMessages,
      index: store.chatIndex,
      deliveries: store.chatDelivery,
      transaction: (fn) => store.transaction(fn),
    });
    const [a, b] = [generateKeyPair(), generateKeyPair()];
    const pending = { state: 'pending' as const, attempts: 1, updated_at: T0, next_at: T0 + SECOND };
    const first = await chat.put(signedMessage(a, b, 'one', T0), T0, pending);
    const second = await chat.put(signedMessage(a, b, 'two', T0 + 1n), T0, pending);
    const third = await chat.put(signedMessage(a, b, 'three', T0 + 2n), T0, pending);
    const ids = [first, second, third].map((m) => (m as { id: string }).id);
    await chat.setDelivery(ids[1]!, { state: 'delivered', attempts: 2, updated_at: T0 + SECOND });
    // A failure whose message quotes the pending state's JSON.
    const error = 'peer said {"state":"pending"}';
    await chat.setDelivery(ids[2]!, { state: 'failed', attempts: 5, updated_at: T0 + SECOND, error });
    expect(chat.delivery(ids[2]!)?.error).toBe(error);
    expect(chat.pendingDeliveries()).toEqual([{ id: ids[0], delivery: pending }]);
  });

  /** A chat store with every database, its delivery database's range reads counted. */
  function withOutbox(store: Store) {
    const deliveries = counted(store.chatDelivery);
    const chat = new ChatStore({
      messages: store.chatMessages,
      index: store.chatIndex,
      seqs: store.chatSeq,
      deliveries: deliveries.db,
      transaction: (fn) => store.transaction(fn),
    });
    return { chat, reads: deliveries.reads };
  }

  const pendingAt = (t: bigint) => ({
    state: 'pending' as const,
    attempts: 1,
    updated_at: t,
    next_at: t + SECOND,
  });
  const delivered = { state: 'delivered' as const, attempts: 1, updated_at: T0 + SECOND };

  it('the outbox at start reads the pending entries, kept in step with every delivery write', async () => {
    const { store } = temp.open();
    const { chat, reads } = withOutbox(store);
    const [a, b] = [generateKeyPair(), generateKeyPair()];
    const ids: string[] = [];
    for (let i = 0n; i < 40n; i++)
      ids.push(
        ((await chat.put(signedMessage(a, b, `m ${i}`, T0 + i), T0, pendingAt(T0))) as { id: string }).id,
      );
    // 36 delivered, one failed and put back in the outbox (a retry), one failed for good.
    for (const id of ids.slice(0, 36)) await chat.setDelivery(id, delivered);
    const failed = { state: 'failed' as const, attempts: 5, updated_at: T0, error: 'refused' };
    await chat.setDelivery(ids[36]!, failed);
    await chat.setDelivery(ids[36]!, pendingAt(T0 + SECOND));
    await chat.setDelivery(ids[37]!, failed);
    const expected = (list: string[]) => list.sort().map((id) => ({ id, delivery: chat.delivery(id) }));

    reads.entries = 0;
    expect(chat.pendingDeliveries()).toEqual(expected([ids[36]!, ids[38]!, ids[39]!]));
    // Three entries read, not the 40 deliveries kept (with their entries).
    expect(reads.entries).toBe(3);

    // A rollback to a checkpoint without one pending message takes its entry with it; putting it
    // back (its delivery pending as the snapshot had it) brings the entry back.
    const snapshot = chat.snapshot();
    const without = new Map(snapshot);
    without.delete(ids[39]!);
    await chat.restore(without);
    reads.entries = 0;
    expect(chat.pendingDeliveries().map((p) => p.id)).toEqual([ids[36]!, ids[38]!].sort());
    expect(reads.entries).toBe(2);
    await chat.restore(snapshot);
    expect(chat.pendingDeliveries().map((p) => p.id)).toEqual([ids[36]!, ids[38]!, ids[39]!].sort());
    // A kept message whose delivery the snapshot has otherwise gets that record, entry included.
    const later = new Map(snapshot);
    later.set(ids[38]!, { ...snapshot.get(ids[38]!)!, delivery: store.chatDelivery.get(ids[0]!)! });
    await chat.restore(later);
    expect(chat.pendingDeliveries().map((p) => p.id)).toEqual([ids[36]!, ids[39]!].sort());
  });

  it('opening a store from before the pending entries, or one a version without them wrote to', async () => {
    const { dir, store } = temp.open();
    const { chat } = withOutbox(store);
    const [a, b] = [generateKeyPair(), generateKeyPair()];
    const put = async (c: ChatStore, i: bigint, d: Delivery = pendingAt(T0)) =>
      ((await c.put(signedMessage(a, b, `m ${i}`, T0 + i), T0, d)) as { id: string }).id;
    const pending = [await put(chat, 0n), await put(chat, 1n)];
    const done = await put(chat, 2n, delivered);
    const entries = (s: Store) => [...s.chatDelivery.getKeys({ start: '~' })];
    expect(entries(store)).toEqual(['~indexed', ...pending.map((id) => `~p:${id}`).sort()]);

    // A store from before the entries: none, and no mark. Opening it looks at every record once.
    for (const key of entries(store)) await store.chatDelivery.remove(key);
    await temp.close(store);
    const { store: second } = temp.open(dir);
    const reopened = withOutbox(second);
    expect(reopened.chat.pendingDeliveries().map((p) => p.id)).toEqual([...pending].sort());
    expect(second.chatDelivery.get('~indexed')).toBe('3');

    // A version without the entries then stores a pending message (numbered past the mark, which it
    // does not move) and delivers an earlier one (leaving its entry behind).
    const newer = await put(reopened.chat, 9n);
    await second.chatDelivery.remove(`~p:${newer}`);
    await second.chatDelivery.put('~indexed', '3');
    await second.chatDelivery.put(pending[0]!, second.chatDelivery.get(done)!);
    await temp.close(second);
    const { store: third } = temp.open(dir);
    const last = withOutbox(third);
    expect(last.chat.pendingDeliveries().map((p) => p.id)).toEqual([pending[1]!, newer].sort());
    expect(third.chatDelivery.get('~indexed')).toBe('4');
  });
});
