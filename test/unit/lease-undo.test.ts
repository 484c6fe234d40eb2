import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../node-core/ledger/codec.ts';
import { LeaseBook } from '../../node-core/leasing/lease-book.ts';
import type { LeaseRecord, LeaseRenewal } from '../../node-core/leasing/records.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { Store } from '../../node-core/store/store.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * Undo entries of lease-family blocks in a real store: a lease held by a renewal every minute has
 * thousands of renewals, and each renewal's undo entry used to carry a copy of all before it (a
 * quadratic amount of disk: about 11 GB in a week of 10,000). The entry now keeps their count and
 * a rollback takes that many back from the record.
 */
describe('lease undo entries', () => {
  let dir: string;
  let store: Store;
  let book: LeaseBook;
  beforeAll(() => {
    dir = tempDir();
    store = Store.open({ path: join(dir, 'store.lmdb') });
    book = new LeaseBook(store);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const hex = (n: number, tag: number) =>
    (tag.toString(16).padStart(8, '0') + n.toString(16).padStart(8, '0')).padEnd(64, '0');
  const renewal = (k: number): LeaseRenewal => ({
    renew_hash: hex(k, 0xfeed),
    duration: 60n,
    cost: 1_000n + BigInt(k),
    start_time: 1_700_000_000_000_000_000n + BigInt(k) * 60_000_000_000n,
    locked_r: 5n,
    locked_payout_cap: 9n,
    locked_twap_milli: 1_000n,
  });
  const lease = (hash: string, renewals: number): LeaseRecord => ({
    lease_hash: hash,
    state: 'accepted',
    consumer: 'c'.repeat(64),
    provider: 'p'.repeat(64),
    vcpus: 2n,
    memory_mb: 2048n,
    disk_gb: 10n,
    duration: 60n * BigInt(renewals + 1),
    cost: 1_000n,
    stake: 100n,
    start_time: 1_700_000_000_000_000_000n,
    settled: false,
    renewals: Array.from({ length: renewals }, (_, k) => renewal(k)),
    created_at: 1_699_999_999_000_000_000n,
  });
  const undoBytes = (block: string) => (store.leaseUndo.get(hashKey(block)) as unknown as string).length;

  it('an entry stays the same size however many renewals came before, and a rollback restores each', () => {
    const hash = hex(1, 0xaaaa);
    const R = 300;
    book.put(lease(hash, 0));
    // Renewal k's block: the record before it (k renewals) is its before-image.
    for (let k = 0; k < R; k++) {
      book.putUndo(hex(k, 0xb10c), { lease_hash: hash, before: lease(hash, k), supply: [] });
      book.put(lease(hash, k + 1));
    }
    const sizes = Array.from({ length: R }, (_, k) => undoBytes(hex(k, 0xb10c)));
    // A copy of 300 renewals is about 60 KB; what differs is the digits of the count and duration.
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(6);
    expect(Math.max(...sizes)).toBeLessThan(1_000);

    // Looking at an entry leaves it; the before-image is whole.
    expect(book.peekUndo(hex(150, 0xb10c))?.before).toEqual(lease(hash, 150));
    // Rolled back newest first, as the ledger does: each before-image exactly as it was.
    for (let k = R - 1; k >= 0; k--) {
      const u = book.takeUndo(hex(k, 0xb10c));
      expect(u?.before).toEqual(lease(hash, k));
      book.put(u!.before!);
      expect(book.peekUndo(hex(k, 0xb10c))).toBeUndefined();
    }
    expect(book.get(hash)?.renewals).toEqual([]);
  });

  it('reads entries written with a copy of the renewals (before the count)', () => {
    const hash = hex(2, 0xaaaa);
    book.put(lease(hash, 3));
    const old = { lease_hash: hash, before: lease(hash, 2), supply: [] };
    store.leaseUndo.putSync(hashKey(hex(2, 0x01d)), stringifyJson(old) as never);
    expect(book.takeUndo(hex(2, 0x01d))?.before).toEqual(lease(hash, 2));
  });

  it('an entry naming more renewals than the record holds is an error, not a silent loss', () => {
    const hash = hex(3, 0xaaaa);
    book.put(lease(hash, 5));
    book.putUndo(hex(3, 0xb10c), { lease_hash: hash, before: lease(hash, 5), supply: [] });
    book.put(lease(hash, 4)); // not how the ledger writes: a renewal vanished from the record
    expect(() => book.peekUndo(hex(3, 0xb10c))).toThrow(/names 5 renewals, the record holds 4/);
  });
});
