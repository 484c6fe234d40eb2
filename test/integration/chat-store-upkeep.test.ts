import type { Database } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { ChatStore } from '../../node-core/chat/chat-store.ts';
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
});
