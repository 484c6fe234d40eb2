import { describe, expect, it } from 'vitest';
import { type Conflict, ConflictBook } from '../../node-core/ledger/conflict-book.ts';
import type { SignedBlock } from '../../node-core/ledger/rules/index.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { ZERO_HASH } from '../../node-core/protocol/block.ts';
import { sealed } from '../helpers/ledger-kit.ts';
import { tempStores } from '../helpers/temp-stores.ts';
import { rng } from '../helpers/rng.ts';

/**
 * Every block of an account asks the conflict book whether the account has a conflict open, and a
 * settled conflict whose winner was swapped in looked at every open conflict again; with thousands
 * open (a fork flood) both walked them all. The book now keeps each account's open conflicts, and
 * staged receives by source, apart. Checked against the walks written out, on real stores: the
 * question through random openings, extensions, settlements, failed settlements (detach and
 * restore) and reloads; the sweep after a rollback against a sweep of every open conflict.
 */
describe('conflict book: open conflicts by account', () => {
  const stores = tempStores();
  const kit = { networkId: '00'.repeat(32), difficulty: 0n };

  const seeds = Array.from({ length: 12 }, (_, i) => new Uint8Array(32).fill(i + 1));
  const accounts = seeds.map((s) => keyPairFromSeed(s).address);
  let serial = 0n;
  /** A distinct signed block of account `a`: a candidate at some position. */
  const candidate = (a: number): SignedBlock =>
    sealed(
      {
        type: 'send',
        account: accounts[a]!,
        previous: ZERO_HASH,
        timestamp: ++serial,
        asset: 'XE',
        destination: 'ab'.repeat(32),
        amount: serial,
        balance: 1n,
      },
      seeds[a]!,
      kit,
    ) as SignedBlock;

  /** What `on` must answer, written out: any open conflict of the account. */
  const expectAgrees = (book: ConflictBook) => {
    const open = book.list();
    for (const account of accounts) {
      const c = book.on(account);
      const any = open.filter((o) => o.account === account);
      expect(c === undefined, account).toBe(any.length === 0);
      if (c) expect(any).toContain(c);
    }
  };

  for (const seed of [1, 2, 3])
    it(`answers as a walk over every open conflict would (seed ${seed})`, () => {
      const { store } = stores.open();
      let book = new ConflictBook(store);
      book.load();
      const random = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      let settled = 0;
      let restored = 0;
      for (let step = 0; step < 400; step++) {
        const r = random();
        const open = book.list();
        if (r < 0.45 || open.length === 0) {
          // A rival staged: a new conflict, or one more candidate at an open one.
          const a = Math.floor(random() * accounts.length);
          const height = 1 + Math.floor(random() * 3);
          const c: Conflict = book.at(accounts[a]!, height) ?? {
            account: accounts[a]!,
            height,
            previous: ZERO_HASH,
            candidates: new Set(),
            detected_at: BigInt(step),
          };
          store.root.transactionSync(() => book.stage(c, candidate(a), height));
        } else if (r < 0.85) {
          // A settlement: the conflict leaves memory while it runs, then is dropped or put back.
          const c = pick(open);
          const { conflict, restore } = book.detach(c.account, c.height);
          expect(book.at(c.account, c.height)).toBeUndefined();
          if (random() < 0.3) {
            restore();
            restored++;
          } else {
            store.root.transactionSync(() => book.drop(c.account, c.height, conflict, [...c.candidates][0]!));
            settled++;
          }
        } else {
          // A restart (or a failed group): memory rebuilt from the store.
          book = new ConflictBook(store);
          book.load();
        }
        expectAgrees(book);
      }
      // The walk above went through every kind of change.
      expect(settled).toBeGreaterThan(20);
      expect(restored).toBeGreaterThan(5);
      const reloaded = new ConflictBook(store);
      reloaded.load();
      expect(
        reloaded
          .list()
          .map((c) => `${c.account}:${c.height}`)
          .sort(),
      ).toEqual(
        book
          .list()
          .map((c) => `${c.account}:${c.height}`)
          .sort(),
      );
      expectAgrees(reloaded);
    });

  /** A staged receive of account `a` from `source`: a candidate that a rollback of its source ends. */
  const receive = (a: number, source: string): SignedBlock =>
    sealed(
      {
        type: 'receive',
        account: accounts[a]!,
        previous: ZERO_HASH,
        timestamp: ++serial,
        asset: 'XE',
        source,
        balance: serial,
      },
      seeds[a]!,
      kit,
    ) as SignedBlock;

  for (const seed of [4, 5, 6])
    it(`after a rollback, sweeps what a sweep of every open conflict would (seed ${seed})`, () => {
      const random = rng(seed);
      const hex = () =>
        Array.from({ length: 32 }, () =>
          Math.floor(random() * 256)
            .toString(16)
            .padStart(2, '0'),
        ).join('');
      // A ledger in miniature: each account's chain of hashes and its final height.
      const chains = accounts.map(() => Array.from({ length: 3 + Math.floor(random() * 5) }, hex));
      const finals = chains.map(() => Math.floor(random() * 2));
      const onChain = () => new Set(chains.flat());
      const reads = {
        getAccount: (a: string) => {
          const i = accounts.indexOf(a);
          return chains[i]!.length === 0
            ? undefined
            : { height: chains[i]!.length, final_height: finals[i]! };
        },
        hashAt: (a: string, h: number) => chains[accounts.indexOf(a)]![h - 1],
        getBlock: (h: string) => (onChain().has(h) ? {} : undefined),
      } as unknown as Parameters<ConflictBook['sweep']>[0];
      const books = [stores.open().store, stores.open().store].map((store) => {
        const book = new ConflictBook(store);
        book.load();
        return { store, book };
      });
      // Conflicts above the final heights: the block on chain and a staged rival, a receive from
      // another account's block in half of them.
      for (let n = 0; n < 30; n++) {
        const a = Math.floor(random() * accounts.length);
        const height = finals[a]! + 1 + Math.floor(random() * (chains[a]!.length - finals[a]!));
        const from = Math.floor(random() * accounts.length);
        const source = chains[from]![Math.floor(random() * chains[from]!.length)]!;
        const rival = random() < 0.5 ? receive(a, source) : candidate(a);
        for (const { store, book } of books) {
          const c: Conflict = book.at(accounts[a]!, height) ?? {
            account: accounts[a]!,
            height,
            previous: ZERO_HASH,
            candidates: new Set([chains[a]![height - 1]!]),
            detected_at: BigInt(n),
          };
          store.root.transactionSync(() => book.stage(c, rival, height));
        }
      }
      const state = (book: ConflictBook) =>
        book
          .list()
          .map((c) => `${c.account}:${c.height} ${[...c.candidates].sort().join(',')}`)
          .sort();
      expect(state(books[0]!.book)).toEqual(state(books[1]!.book));
      let dropped = 0;
      for (let round = 0; round < 8; round++) {
        // A rollback: an account's top blocks above its final height, and one of another's.
        const undone: { account: string; hash: string }[] = [];
        for (const a of [Math.floor(random() * accounts.length), Math.floor(random() * accounts.length)]) {
          const k = Math.min(chains[a]!.length - finals[a]!, 1 + Math.floor(random() * 2));
          for (let i = 0; i < k; i++) undone.push({ account: accounts[a]!, hash: chains[a]!.pop()! });
        }
        const [scoped, full] = books;
        scoped!.store.root.transactionSync(() => (dropped += scoped!.book.sweep(reads, undone)));
        full!.store.root.transactionSync(() => full!.book.sweep(reads));
        expect(state(scoped!.book)).toEqual(state(full!.book));
        expectAgrees(scoped!.book);
      }
      // The rollbacks reached conflicts both ways: their positions, and their receives' sources.
      expect(dropped).toBeGreaterThan(3);
    });
});
