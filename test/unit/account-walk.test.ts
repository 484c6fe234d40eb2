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
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * The accounts table holds each account's record, its chain entries (one a block) and the sends
 * pending to it, in that order. Listings (`/accounts`, `/frontiers`, `/pending`) and the supply
 * report skip long runs of chain entries instead of stepping over each: checked here against a
 * walk over every key, on a real store with accounts of no, few and many blocks, accounts with
 * only pending sends (no record yet), and pending sends sparse among them.
 */
describe('walks of the accounts table', () => {
  let dir: string;
  let store: Store;
  let reads: LedgerReads;
  beforeAll(async () => {
    dir = tempDir();
    store = Store.open({ path: join(dir, 'store.lmdb') });
    reads = new LedgerReads(store);
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
