import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  accountKey,
  blockRecordFinalFacts,
  chainKey,
  decodeAccount,
  decodeAccountHead,
  decodeBlockRecord,
  decodePending,
  encodeAccount,
  encodeBlockRecord,
  encodePending,
  hashKey,
  recordFinalHeight,
  recordFrontier,
  recordHeight,
  recordSigningKey,
  seqKey,
  writeSeq,
} from '../../node-core/ledger/codec.ts';
import { LedgerReads } from '../../node-core/ledger/reads.ts';
import type { AccountRecord } from '../../node-core/ledger/records.ts';
import { decodeBlock } from '../../node-core/protocol/block-json.ts';
import { bytesEqualHex, bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { Store } from '../../node-core/store/store.ts';
import { vectors } from '../helpers/vectors.ts';

/**
 * The prefix readers (codec.ts recordHeight/decodeAccountHead, blockRecordFinalFacts; LedgerReads
 * accountHead/heightOf/finalHeightOf/isFinal) read fields at fixed places instead of decoding whole
 * records: they must agree with the full decoders for every record variant, and see the same state
 * as the full reads inside and outside write transactions (an aborted unit included).
 */

const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);

/** Every optional part of an account record, alone and together, with heights past 2^31. */
const VARIANTS: [string, AccountRecord][] = [
  ['bare', { height: 1, final_height: 0, frontier: A, balances: {}, final_balances: {}, last_timestamp: 0n }],
  [
    'several balances',
    {
      height: 7,
      final_height: 5,
      frontier: B,
      balances: { XE: 12n, XUSD: 2n ** 64n - 1n },
      final_balances: { XE: 3n },
      last_timestamp: 1_700_000_000_000_000_000n,
    },
  ],
  [
    'rep and pub_key',
    {
      height: 2 ** 31 + 5,
      final_height: 2 ** 31 + 1,
      frontier: A,
      balances: { XE: 1n },
      final_balances: { XE: 1n },
      last_timestamp: -5n,
      representative: B,
      pub_key: A,
    },
  ],
  [
    'keyset',
    {
      height: 3,
      final_height: 3,
      frontier: B,
      balances: { XUSD: 9n },
      final_balances: { XUSD: 9n },
      last_timestamp: 9n,
      keyset: { keys: [A, B], threshold: 2 },
    },
  ],
  [
    // Asset names are written without an encoder when ASCII; anything else still as UTF-8.
    'a non-ASCII asset name',
    {
      height: 4,
      final_height: 4,
      frontier: A,
      balances: { XÉ: 8n, XE: 1n },
      final_balances: { XÉ: 8n },
      last_timestamp: 4n,
      representative: B,
      pub_key: A,
    },
  ],
  [
    'claims and everything',
    {
      height: 2 ** 32 - 1,
      final_height: 2 ** 32 - 2,
      frontier: A,
      balances: { XE: 5n, XUSD: 6n },
      final_balances: { XE: 4n, XUSD: 6n },
      last_timestamp: 77n,
      representative: A,
      pub_key: B,
      claims: [
        [1n, 2n],
        [3n, 4n],
      ],
    },
  ],
];

describe('account record prefix', () => {
  it.each(VARIANTS)('%s: the prefix readers equal the full decoder', (_name, rec) => {
    const bytes = encodeAccount(rec);
    const full = decodeAccount(bytes);
    expect(full).toEqual(rec);
    expect(decodeAccountHead(bytes)).toEqual({
      height: full.height,
      final_height: full.final_height,
      frontier: full.frontier,
    });
    expect(recordHeight(bytes)).toBe(full.height);
    expect(recordFinalHeight(bytes)).toBe(full.final_height);
    expect(recordFrontier(bytes)).toBe(full.frontier);
    expect(recordSigningKey(bytes)).toEqual({ pub_key: full.pub_key, multisig: full.keyset !== undefined });
    // At an offset inside a larger buffer, as a store's read buffer hands it out.
    const padded = new Uint8Array(bytes.length + 11);
    padded.set(bytes, 7);
    expect(decodeAccountHead(padded.subarray(7, 7 + bytes.length))).toEqual(decodeAccountHead(bytes));
  });
});

describe('keys and hash comparison', () => {
  it('builds account and chain keys as address, tag, big-endian height', () => {
    expect(bytesToHex(accountKey(A))).toBe(`${A}00`);
    for (const h of [0, 1, 258, 2 ** 31 + 7, 2 ** 32 - 1]) {
      expect(bytesToHex(chainKey(B, h))).toBe(`${B}01${h.toString(16).padStart(8, '0')}`);
    }
    expect(() => accountKey('zz'.repeat(32))).toThrow();
  });

  it('writes sequence numbers as 8 bytes big-endian, up to 2^53 - 1', () => {
    for (const seq of [0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER]) {
      const expected = new Uint8Array(8);
      new DataView(expected.buffer).setBigUint64(0, BigInt(seq));
      expect(seqKey(seq), String(seq)).toEqual(expected);
      // At an offset, leaving the bytes around it alone.
      const out = new Uint8Array(12).fill(0xee);
      writeSeq(out, 2, seq);
      expect([...out.subarray(0, 2), ...out.subarray(10)]).toEqual([0xee, 0xee, 0xee, 0xee]);
      expect(out.subarray(2, 10)).toEqual(expected);
    }
  });

  it("hands a record's bytes over as a copy, or shared until the next record is encoded", () => {
    const rec = VARIANTS[VARIANTS.length - 1]![1];
    const copy = encodeAccount(rec);
    const shared = encodeAccount(rec, 'shared');
    expect(shared).toEqual(copy);
    expect(shared.buffer).not.toBe(copy.buffer);
    // The next encoding writes over the shared bytes, never over a copy.
    const pending = { from: A, amount: 5n, asset: 'XE', timestamp: 9n };
    const sharedPending = encodePending(pending, 'shared');
    expect(sharedPending.buffer).toBe(shared.buffer);
    expect(shared.subarray(0, sharedPending.length)).toEqual(sharedPending);
    expect(shared).not.toEqual(copy);
    expect(decodeAccount(copy)).toEqual(rec);
    expect(decodePending(encodePending(pending))).toEqual(pending);
    // Each shared hand-over is a view of the same buffer; each copy has one of its own.
    expect(encodeAccount(rec).buffer).not.toBe(copy.buffer);
    expect(encodeAccount(rec, 'shared').buffer).toBe(shared.buffer);
  });

  it('bytesEqualHex is hex equality without the string', () => {
    const bytes = hexToBytes(`00ff10${A.slice(6)}`);
    expect(bytesEqualHex(bytes, bytesToHex(bytes))).toBe(true);
    expect(bytesEqualHex(bytes, `00ff11${A.slice(6)}`)).toBe(false);
    expect(bytesEqualHex(bytes, `00FF10${A.slice(6)}`)).toBe(false); // not lowercase
    expect(bytesEqualHex(bytes, bytesToHex(bytes).slice(2))).toBe(false);
    expect(bytesEqualHex(new Uint8Array(0), '')).toBe(true);
  });
});

describe('block record finalization fields', () => {
  it.each(vectors.vectors.map((v) => [v.name, v] as const))('%s: equal to the full decoder', (_name, v) => {
    const block = { ...decodeBlock(v.block), hash: v.hash };
    const bytes = encodeBlockRecord({ block, height: 42 });
    const full = decodeBlockRecord(bytes).block;
    expect(blockRecordFinalFacts(bytes)).toEqual({
      settle: full.type === 'lease_settle',
      asset: full.asset,
      balance: full.balance,
      previous: full.previous,
      hash: full.hash,
    });
  });
});

describe('LedgerReads prefix readers on a real store', () => {
  let dir: string | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    store = dir = undefined;
  });

  function open(): { s: Store; reads: LedgerReads } {
    dir = mkdtempSync(join(tmpdir(), 'record-prefix-'));
    store = Store.open({ path: join(dir, 'db') });
    return { s: store, reads: new LedgerReads(store) };
  }

  /** One account with one stored block, as the ledger lays them out. */
  function put(s: Store, rec: AccountRecord, blockHeight: number): { hash: string; account: string } {
    const v = vectors.vectors[0]!;
    const block = { ...decodeBlock(v.block), hash: v.hash };
    const seq = seqKey(1);
    s.blocks.putSync(seq, encodeBlockRecord({ block, height: blockHeight }));
    s.hashes.putSync(hashKey(block.hash), seq);
    const entry = new Uint8Array(40);
    entry.set(seq);
    entry.set(hashKey(block.hash), 8);
    s.accounts.putSync(chainKey(block.account, blockHeight), entry);
    s.accounts.putSync(accountKey(block.account), encodeAccount(rec));
    return { hash: block.hash, account: block.account };
  }

  const heads = (reads: LedgerReads, account: string) => {
    const full = reads.getAccount(account);
    return {
      full: full && { height: full.height, final_height: full.final_height, frontier: full.frontier },
      head: reads.accountHead(account),
      height: reads.heightOf(account),
      final: reads.finalHeightOf(account),
    };
  };

  it('agree with getAccount and getBlock: committed, inside the write, after an aborted unit', async () => {
    const { s, reads } = open();
    const account = decodeBlock(vectors.vectors[0]!.block).account;
    // Unknown account and block.
    expect(reads.accountHead(account)).toBeUndefined();
    expect(reads.heightOf(account)).toBe(0);
    expect(reads.finalHeightOf(account)).toBe(0);
    expect(reads.isFinal(vectors.vectors[0]!.hash)).toBe(false);

    const base = { ...VARIANTS[4]![1], height: 1, final_height: 0 };
    let hash = '';
    await s.childTransaction(() => {
      hash = put(s, base, 1).hash;
      // Inside the write the readers see its writes, as getAccount does.
      const h = heads(reads, account);
      expect(h.head).toEqual(h.full);
      expect(h.height).toBe(1);
      expect(reads.isFinal(hash)).toBe(false);
    });
    expect(reads.isFinal(hash)).toBe(false);
    expect(reads.getBlock(hash)?.finalized).toBe(false);
    expect(reads.hashAt(account, 1)).toBe(hash);
    expect(reads.hashIsAt(account, 1, hash)).toBe(true);
    expect(reads.hashIsAt(account, 1, A)).toBe(false);
    expect(reads.hashIsAt(account, 2, hash)).toBe(false);

    // An aborted unit leaves the committed record: the readers do not see its write.
    await expect(
      s.childTransaction(() => {
        s.accounts.putSync(accountKey(account), encodeAccount({ ...base, final_height: 1 }));
        expect(reads.finalHeightOf(account)).toBe(1);
        expect(reads.isFinal(hash)).toBe(true);
        throw new Error('abort this unit');
      }),
    ).rejects.toThrow('abort this unit');
    let h = heads(reads, account);
    expect(h.head).toEqual(h.full);
    expect(h.final).toBe(0);
    expect(reads.isFinal(hash)).toBe(false);

    // Committed finality: every reader sees it.
    await s.childTransaction(() => {
      s.accounts.putSync(accountKey(account), encodeAccount({ ...base, final_height: 1 }));
    });
    h = heads(reads, account);
    expect(h.head).toEqual(h.full);
    expect(h.final).toBe(1);
    expect(reads.isFinal(hash)).toBe(true);
    expect(reads.getBlock(hash)?.finalized).toBe(true);
  });

  it('allAccountHeads walks the same accounts as allAccounts, with their prefixes', async () => {
    const { s, reads } = open();
    await s.childTransaction(() => {
      VARIANTS.forEach(([, rec], i) => {
        const address = `${i}`.padStart(2, '0').repeat(32);
        s.accounts.putSync(accountKey(address), encodeAccount(rec));
        s.accountIndex.putSync(hexToBytes(address, 32), new Uint8Array(0)); // as the ledger indexes an account
        s.accounts.putSync(chainKey(address, 1), new Uint8Array(40)); // sorts between records
      });
    });
    const full = [...reads.allAccounts()].map(([a, r]) => [
      a,
      { height: r.height, final_height: r.final_height, frontier: r.frontier },
    ]);
    expect(full).toHaveLength(VARIANTS.length);
    expect([...reads.allAccountHeads()]).toEqual(full);
    expect([...reads.allAccountHeads('01'.repeat(32))]).toEqual(full.slice(2));
  });

  it('each read is independent of the shared read buffer the previous one used', async () => {
    const { s, reads } = open();
    const other = 'c3'.repeat(32);
    let account = '';
    await s.childTransaction(() => {
      account = put(s, { ...VARIANTS[1]![1], height: 4, final_height: 2 }, 1).account;
      s.accounts.putSync(accountKey(other), encodeAccount({ ...VARIANTS[2]![1] }));
    });
    const first = reads.accountHead(account);
    const second = reads.accountHead(other);
    expect(first).toEqual({ height: 4, final_height: 2, frontier: B });
    expect(second).toEqual({ height: 2 ** 31 + 5, final_height: 2 ** 31 + 1, frontier: A });
    expect(reads.heightOf(account)).toBe(4);
    expect(reads.finalHeightOf(other)).toBe(2 ** 31 + 1);
  });
});
