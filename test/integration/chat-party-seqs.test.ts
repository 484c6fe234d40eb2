import { describe, expect, it } from 'vitest';
import { ChatStore } from '../../node-core/chat/chat-store.ts';
import { generateKeyPair, type KeyPair } from '../../node-core/protocol/keys.ts';
import type { Store } from '../../node-core/store/store.ts';
import { signedMessage } from '../helpers/chat-kit.ts';
import { tempStores } from '../helpers/temp-stores.ts';

/**
 * One account's event stream reads that account's own sequence entries (issue #18, target 6): a
 * client resuming among many messages of other accounts no longer makes the node read every message
 * stored since its last id. On a real LMDB store: the right messages in storage order, paged; entries
 * going with their messages (retention, a restore); and a store without the entries (written before
 * them, or by a version without them since) indexed when opened.
 */

const T0 = 1_790_000_000_000_000_000n;

describe('chat sequence entries per party', () => {
  const stores = tempStores();
  const openStore = (): Store => stores.open().store;

  function chatOn(store: Store, retention = {}): ChatStore {
    return new ChatStore(
      {
        messages: store.chatMessages,
        index: store.chatIndex,
        seqs: store.chatSeq,
        transaction: (fn) => store.transaction(fn),
      },
      retention,
    );
  }

  let clock = 0n;
  function message(from: KeyPair, to: KeyPair, text: string) {
    clock += 1n;
    return signedMessage(from, to, text, T0 + clock);
  }

  /** 200 messages among other accounts, with p's five (sent, received, to itself) spread among them. */
  async function fill(chat: ChatStore, p: KeyPair): Promise<string[]> {
    const others = Array.from({ length: 8 }, () => generateKeyPair());
    const mine: string[] = [];
    for (let i = 0; i < 200; i++) {
      if (i % 40 === 7) {
        const k = mine.length;
        const m =
          k === 4
            ? message(p, p, `p${k}`)
            : k % 2 === 0
              ? message(p, others[k]!, `p${k}`)
              : message(others[k]!, p, `p${k}`);
        mine.push(m.message);
        await chat.put(m, T0);
      }
      await chat.put(message(others[i % 8]!, others[(i + 3) % 8]!, `o${i}`), T0);
    }
    return mine;
  }

  /** Reads every message of `party` after 0 in pages of `limit`, counting the messages decoded. */
  function replay(chat: ChatStore, party: string, limit = 2): { texts: string[]; decoded: number } {
    const get = chat.get.bind(chat);
    let decoded = 0;
    chat.get = (id) => {
      decoded += 1;
      return get(id);
    };
    try {
      const texts: string[] = [];
      let after = 0n;
      for (;;) {
        const page = chat.after(after, { party, limit });
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(limit);
        for (const m of page) {
          expect(m.seq).toBeGreaterThan(after);
          expect([m.from, m.to]).toContain(party);
          after = m.seq;
          texts.push(m.message);
        }
      }
      return { texts, decoded };
    } finally {
      chat.get = get;
    }
  }

  it("reads one account's messages in storage order, paged, without decoding the others'", async () => {
    const chat = chatOn(openStore());
    const p = generateKeyPair();
    const mine = await fill(chat, p);
    const { texts, decoded } = replay(chat, p.pub_key);
    expect(texts).toEqual(mine);
    // Its own five, not the 200 stored among them.
    expect(decoded).toBe(mine.length);
    // Every message, for the admin's stream, as before.
    expect(chat.after(0n, { limit: 1000 })).toHaveLength(205);
  });

  it('drops the entries with their message, and a restored message comes back under its new number', async () => {
    const store = openStore();
    const chat = chatOn(store, { maxPerAccount: 3 });
    const [p, q] = [generateKeyPair(), generateKeyPair()];
    for (let i = 0; i < 5; i++) await chat.put(message(p, q, `m${i}`), T0);
    // The count kept per account is 3: the two oldest went, with their entries.
    expect(replay(chat, p.pub_key).texts).toEqual(['m2', 'm3', 'm4']);
    expect(replay(chat, q.pub_key).texts).toEqual(['m2', 'm3', 'm4']);

    const snap = chat.snapshot();
    const [m4] = chat.after(4n, { party: p.pub_key, limit: 1 });
    expect(m4?.message).toBe('m4');
    // A later message trims m2; back to the snapshot, 'later' goes and m2 comes back, last, once.
    await chat.put(message(q, p, 'later'), T0);
    expect(replay(chat, p.pub_key).texts).toEqual(['m3', 'm4', 'later']);
    await chat.restore(snap);
    expect(replay(chat, p.pub_key).texts).toEqual(['m3', 'm4', 'm2']);
    // A snapshot without m4 removes it (its entries too); the full one brings it back under a new number.
    const without = new Map(snap);
    without.delete(m4!.id);
    await chat.restore(without);
    expect(replay(chat, q.pub_key).texts).toEqual(['m3', 'm2']);
    await chat.restore(snap);
    expect(replay(chat, p.pub_key).texts).toEqual(['m3', 'm2', 'm4']);
    expect(chat.after(0n, { party: p.pub_key, limit: 10 }).at(-1)!.seq).toBeGreaterThan(m4!.seq);
  });

  it('indexes a store without the entries when it is opened, and one a version without them wrote to', async () => {
    const store = openStore();
    const p = generateKeyPair();
    const mine = await fill(chatOn(store), p);
    const seqs = store.chatSeq;
    const dropEntries = async (keepUpTo: bigint | undefined) => {
      await store.transaction(() => {
        for (const key of [...seqs.getKeys({ start: 'p:', end: 'p;' })]) {
          if (keepUpTo === undefined || BigInt(key.slice(-20)) > keepUpTo) seqs.removeSync(key);
        }
        if (keepUpTo === undefined) seqs.removeSync('indexed');
        else seqs.putSync('indexed', keepUpTo.toString());
      });
    };

    // A store from before the entries: none, and no mark of how far they go.
    await dropEntries(undefined);
    expect(
      chatOn(store)
        .after(0n, { party: p.pub_key, limit: 10 })
        .map((m) => m.message),
    ).toEqual(mine);

    // Written since by a version without them: the entries stop at message 100.
    await dropEntries(100n);
    const reopened = chatOn(store);
    expect(replay(reopened, p.pub_key).texts).toEqual(mine);
    // Complete again: a message stored now keeps the mark moving, so the next open has nothing to do.
    const q = generateKeyPair();
    await reopened.put(message(p, q, 'new'), T0);
    expect(seqs.get('indexed')).toBe(reopened.lastSeq().toString());
    expect(replay(chatOn(store), p.pub_key).texts).toEqual([...mine, 'new']);
  });
});
