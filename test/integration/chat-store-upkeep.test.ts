import type { Database } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { ChatStore } from '../../node-core/chat/chat-store.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { generateKeyPair, type KeyPair } from '../../node-core/protocol/keys.ts';
import { signChatEnvelope } from '../../node-core/protocol/payloads.ts';
import type { Store } from '../../node-core/store/store.ts';
import { tempStores } from '../helpers/temp-stores.ts';

const SECOND = 1_000_000_000n;
const T0 = 1_790_000_000n * SECOND;

function message(from: KeyPair, to: KeyPair, text: string, timestamp: bigint) {
  return signChatEnvelope(
    { from: from.pub_key, to: to.pub_key, message: text, timestamp },
    hexToBytes(from.seed_hex),
  );
}

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
 * The chat store's upkeep at scale (issue #18): the hourly retention pass reads only what is past
 * it, and the admin's account list seeks from account to account.
 */
describe('chat store upkeep reads what it needs', () => {
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

  it('retention pass and account list at 3 accounts x 60 messages', async () => {
    const { store } = temp.open();
    const { chat, index, transactions } = open(store);
    const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
    // 60 from a to b and 60 from b to c, one a second; the first 5 of each are over an hour old.
    for (let i = 0n; i < 60n; i++) {
      await chat.put(message(a, b, `ab ${i}`, T0 + i * SECOND), T0);
      await chat.put(message(b, c, `bc ${i}`, T0 + i * SECOND), T0);
    }
    const now = T0 + 3_605n * SECOND;

    index.entries = 0;
    expect(chat.accounts()).toEqual([a.pub_key, b.pub_key, c.pub_key].sort());
    // One seek per account, then one past the last: not the 240 entries.
    expect(index.entries).toBe(3);

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
});
