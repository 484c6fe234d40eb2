import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountKey,
  chainKey,
  decodeAccount,
  decodePending,
  encodeAccount,
  encodePending,
  isPendingKey,
  isRecordKey,
  parseAccountKey,
  pendingKey,
} from '../../node-core/ledger/codec.ts';
import { LedgerReads } from '../../node-core/ledger/reads.ts';
import type { AccountRecord } from '../../node-core/ledger/records.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/** LedgerReads with what the account index is built from in view. */
class Reads extends LedgerReads {
  recordKeysNow(): string[] {
    return [...this.recordKeys()].map((k) => bytesToHex(k.subarray(0, 32)));
  }
}

/**
 * The accounts table holds each account's record, its chain entries (one a block) and the sends
 * pending to it, in that order; the account index holds the address of each record. Listings
 * (`/accounts`, `/frontiers`, `/pending`), frontier digests and the supply report are checked here
 * against a walk over every key, on a real store with accounts of no, few and many blocks, accounts
 * with only pending sends (no record yet), and pending sends sparse among them.
 */
describe('walks of the accounts table', () => {
  let dir: string;
  let store: Store;
  let reads: Reads;
  beforeAll(async () => {
    dir = tempDir();
    store = Store.open({ path: join(dir, 'store.lmdb') });
    reads = new Reads(store);
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const hex = (n: number) => n.toString(16).padStart(8, '0').repeat(8);
    await store.root.transaction(() => {
      for (let i = 0; i < 400; i++) {
        const address = hex(i * 7919 + 1);
        const blocks =
          next() < 0.3 ? 0 : next() < 0.5 ? 1 + Math.floor(next() * 8) : 9 + Math.floor(next() * 60);
        const pending = next() < 0.8 ? 0 : 1 + Math.floor(next() * 3);
        if (blocks > 0) {
          const rec: AccountRecord = {
            height: blocks,
            frontier: hex(i + 5),
            balances: { XE: BigInt(i) * 1_000n },
            final_height: blocks,
            final_balances: { XE: BigInt(i) * 1_000n },
            last_timestamp: BigInt(i),
          };
          store.accounts.putSync(accountKey(address), encodeAccount(rec));
          // As the ledger writes it beside an account's first record.
          store.accountIndex.putSync(hexToBytes(address, 32), new Uint8Array(0));
          for (let h = 1; h <= blocks; h++) store.accounts.putSync(chainKey(address, h), new Uint8Array(40));
        }
        for (let p = 0; p < pending; p++)
          store.accounts.putSync(
            pendingKey(address, hex(i * 31 + p)),
            encodePending({
              from: hex(p + 3),
              amount: BigInt(p + 1),
              asset: p === 2 ? 'XUSD' : 'XE',
              timestamp: 9n,
            }),
          );
      }
    });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every key, walked one by one: what the listings must answer. */
  const everyKey = () =>
    [...store.accounts.getRange({})].map(({ key, value }) => ({
      key: new Uint8Array(key),
      value: new Uint8Array(value),
    }));

  it('lists accounts at every offset as a walk over every key would', () => {
    const records = everyKey().filter((e) => isRecordKey(e.key));
    expect(records.length).toBeGreaterThan(200);
    for (const [offset, limit] of [
      [0, 1_000],
      [0, 7],
      [13, 50],
      [records.length - 3, 10],
      [records.length, 10],
      [records.length + 50, 10],
    ] as const) {
      const got = reads.listAccounts(offset, limit);
      expect(got.map((a) => a.address)).toEqual(
        records.slice(offset, offset + limit).map((e) => bytesToHex(e.key.subarray(0, 32))),
      );
      expect(got.map((a) => a.account)).toEqual(
        records.slice(offset, offset + limit).map((e) => decodeAccount(e.value)),
      );
    }
  });

  /** The records, as a walk over every key finds them: address and head fields. */
  const recordHeads = () =>
    everyKey()
      .filter((e) => isRecordKey(e.key))
      .map((e) => {
        const { height, final_height, frontier } = decodeAccount(e.value);
        return { address: bytesToHex(e.key.subarray(0, 32)), height, final_height, frontier };
      });

  it('walks frontiers after any address, and by bucket, as a walk over every key would', () => {
    const want = recordHeads();
    // More than a chunk of the index (256) in one walk.
    expect(want.length).toBeGreaterThan(256);
    const heads = (it: Iterable<[string, { height: number; final_height: number; frontier: string }]>) =>
      [...it].map(([address, h]) => ({
        address,
        height: h.height,
        final_height: h.final_height,
        frontier: h.frontier,
      }));
    const pendingOnly = everyKey()
      .map((e) => bytesToHex(e.key.subarray(0, 32)))
      .find((a) => !want.some((w) => w.address === a))!;
    expect(pendingOnly).toBeDefined();
    expect(heads(reads.allAccountHeads())).toEqual(want);
    for (const after of [
      want[0]!.address,
      want[255]!.address,
      want[256]!.address,
      pendingOnly,
      want.at(-1)!.address,
    ])
      expect(heads(reads.allAccountHeads(after)), after).toEqual(want.filter((w) => w.address > after));
    // Every address of this store begins with byte 0: one full bucket, the others empty.
    expect(heads(reads.accountHeadsInBucket(0))).toEqual(want);
    for (const b of [1, 128, 255]) expect(heads(reads.accountHeadsInBucket(b))).toEqual([]);
    expect([...reads.allAccounts(want[9]!.address)].map(([a]) => a)).toEqual(
      want.slice(10).map((w) => w.address),
    );
  });

  it('steps over no address that has pending sends only: each account is read once, no range of the table is opened', () => {
    const records = recordHeads().length;
    const addresses = new Set(everyKey().map((e) => bytesToHex(e.key.subarray(0, 32)))).size;
    expect(addresses - records).toBeGreaterThan(20); // pending-only addresses among them
    const counts = { ranges: 0, reads: 0 };
    const accounts = store.accounts as unknown as Record<string, (...a: unknown[]) => unknown>;
    const originals = {
      getRange: accounts.getRange!,
      getKeys: accounts.getKeys!,
      getBinaryFast: accounts.getBinaryFast!,
    };
    accounts.getRange = (...a) => (counts.ranges++, originals.getRange.apply(store.accounts, a));
    accounts.getKeys = (...a) => (counts.ranges++, originals.getKeys.apply(store.accounts, a));
    accounts.getBinaryFast = (...a) => (counts.reads++, originals.getBinaryFast.apply(store.accounts, a));
    try {
      expect([...reads.allAccountHeads()]).toHaveLength(records);
      expect([...reads.accountHeadsInBucket(0)]).toHaveLength(records);
    } finally {
      Object.assign(accounts, originals);
    }
    expect(counts).toEqual({ ranges: 0, reads: 2 * records });
  });

  it('finds the records the account index is built from in the table itself', () => {
    expect(reads.recordKeysNow()).toEqual(recordHeads().map((h) => h.address));
  });

  it('finds every pending send, in key order, and pages them', () => {
    const want = everyKey()
      .filter((e) => isPendingKey(e.key))
      .map((e) => {
        const k = parseAccountKey(e.key) as { destination: string; hash: string };
        return { ...decodePending(e.value), destination: k.destination, hash: k.hash };
      });
    expect(want.length).toBeGreaterThan(40);
    expect([...reads.allPending()]).toEqual(want);
    expect(reads.listPending(10, 15)).toEqual(want.slice(10, 25));
  });

  it('sums holdings as a walk over every key would', () => {
    const all = everyKey();
    const records = all.filter((e) => isRecordKey(e.key));
    const pending = all.filter((e) => isPendingKey(e.key)).map((e) => decodePending(e.value));
    const h = reads.sumHoldings();
    expect(h.accounts).toBe(records.length);
    expect(h.pending).toBe(pending.length);
    const inFlight: Record<string, bigint> = {};
    for (const p of pending) inFlight[p.asset] = (inFlight[p.asset] ?? 0n) + p.amount;
    expect(h.inFlight).toEqual(inFlight);
    expect(h.balances.XE).toBe(records.reduce((s, e) => s + (decodeAccount(e.value).balances.XE ?? 0n), 0n));
  });
});
