import { U64_MAX } from '../protocol/int.ts';
import type { Store } from '../store/store.ts';
import { LedgerError } from './errors.ts';

/**
 * Running totals kept in one store record and updated inside each block's transaction, so they are
 * exactly as durable as the blocks they count: block and account counts, and the supply terms of
 * each asset (reference-behavior.md section 3.5; `faucet` counts claims, decisions D6).
 */
export interface AssetSupply {
  genesis: bigint;
  faucet: bigint;
  minted: bigint;
  emitted: bigint;
  burned: bigint;
  escrow_burned: bigint;
  stake_forfeited: bigint;
}

export type SupplyAsset = 'XE' | 'XUSD';
export type SupplyTerm = keyof AssetSupply;

/** One change of one supply term, as a block's effects state it (checked before it is applied). */
export interface SupplyDelta {
  asset: SupplyAsset;
  term: SupplyTerm;
  amount: bigint;
}

export interface Counters {
  blocks: number;
  /** Next block sequence number (blocks undone by a conflict leave gaps: it never goes back). */
  next_seq: number;
  accounts: number;
  delegation_underflows: number;
  supply: { XE: AssetSupply; XUSD: AssetSupply };
  /**
   * The store's account index (store.ts accountIndex) holds every account record's address. A record
   * written by a version without the index lacks the flag, so the index is built again at the next
   * start (Ledger.start) rather than trusted after accounts were opened or undone without it.
   */
  indexed: boolean;
}

const KEY = 'counters';
const U32_MAX = 0xffff_ffff;
const CREATION_TERMS: readonly SupplyTerm[] = ['genesis', 'faucet', 'minted', 'emitted'];
const TERMS: SupplyTerm[] = [
  'genesis',
  'faucet',
  'minted',
  'emitted',
  'burned',
  'escrow_burned',
  'stake_forfeited',
];

function emptyAsset(): AssetSupply {
  return {
    genesis: 0n,
    faucet: 0n,
    minted: 0n,
    emitted: 0n,
    burned: 0n,
    escrow_burned: 0n,
    stake_forfeited: 0n,
  };
}

export function emptyCounters(): Counters {
  return {
    blocks: 0,
    next_seq: 0,
    accounts: 0,
    delegation_underflows: 0,
    supply: { XE: emptyAsset(), XUSD: emptyAsset() },
    // An empty ledger's empty index is complete.
    indexed: true,
  };
}

/**
 * Binary form: three u32 counts, the supply terms of XE and XUSD as u64s in TERMS order, then the
 * next sequence number as u32 (absent in older records: it then equals the block count), then one
 * byte, 1 while the account index is kept (absent in older records).
 */
export function decodeCounters(bytes: Uint8Array | undefined): Counters {
  const c = emptyCounters();
  if (bytes === undefined) return c;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  c.blocks = v.getUint32(0);
  c.accounts = v.getUint32(4);
  c.delegation_underflows = v.getUint32(8);
  let off = 12;
  for (const asset of ['XE', 'XUSD'] as const) {
    for (const t of TERMS) {
      c.supply[asset][t] = v.getBigUint64(off);
      off += 8;
    }
  }
  c.next_seq = bytes.byteLength >= off + 4 ? v.getUint32(off) : c.blocks;
  c.indexed = bytes.byteLength >= off + 5 && v.getUint8(off + 4) === 1;
  return c;
}

/**
 * Adds each delta to its term, refusing (a deterministic 400) any block after which a term or the
 * asset's total ever created would exceed 2^64-1. Bounding the created total bounds every other
 * figure of the supply identity too (balances, pending and destroyed amounts never exceed it), so no
 * client that reads them as u64 can see them wrap. A decrease (undoing a block) must not go below 0.
 * All or nothing: a refused list leaves every term as it was.
 */
export function addSupply(c: Counters, deltas: readonly SupplyDelta[]): void {
  const next = { XE: { ...c.supply.XE }, XUSD: { ...c.supply.XUSD } };
  for (const delta of deltas) {
    const s = next[delta.asset];
    const term = s[delta.term] + delta.amount;
    if (term < 0n) throw new RangeError(`supply term ${delta.asset}.${delta.term} would go below 0`);
    const created = CREATION_TERMS.reduce((sum, t) => sum + (t === delta.term ? term : s[t]), 0n);
    if (term > U64_MAX || created > U64_MAX) {
      throw new LedgerError(
        'overflow',
        `${delta.asset} supply would exceed 2^64-1 (${delta.term} ${s[delta.term]} + ${delta.amount})`,
      );
    }
    s[delta.term] = term;
  }
  c.supply = next;
}

/**
 * The last line of defence: `setUint32`/`setBigUint64` silently wrap, so a value out of range (a
 * bug, since every change goes through checked arithmetic) aborts the write transaction instead.
 */
function checkRange(name: string, value: bigint | number, max: bigint | number): void {
  if (value < 0 || value > max) throw new RangeError(`counter ${name} out of range: ${value}`);
}

export function encodeCounters(c: Counters): Uint8Array {
  checkRange('blocks', c.blocks, U32_MAX);
  checkRange('accounts', c.accounts, U32_MAX);
  checkRange('delegation_underflows', c.delegation_underflows, U32_MAX);
  checkRange('next_seq', c.next_seq, U32_MAX);
  const out = new Uint8Array(12 + 2 * TERMS.length * 8 + 5);
  const v = new DataView(out.buffer);
  v.setUint32(0, c.blocks);
  v.setUint32(4, c.accounts);
  v.setUint32(8, c.delegation_underflows);
  let off = 12;
  for (const asset of ['XE', 'XUSD'] as const) {
    for (const t of TERMS) {
      checkRange(`${asset}.${t}`, c.supply[asset][t], U64_MAX);
      v.setBigUint64(off, c.supply[asset][t]);
      off += 8;
    }
  }
  v.setUint32(off, c.next_seq);
  v.setUint8(off + 4, c.indexed ? 1 : 0);
  return out;
}

export class CountersBook {
  private readonly store: Store;
  /** The last committed values (refreshed after commits). */
  current: Counters = emptyCounters();

  constructor(store: Store) {
    this.store = store;
  }

  load(): void {
    this.current = this.read();
  }

  /** Reads the record as the current transaction sees it. */
  read(): Counters {
    return decodeCounters(this.store.ledgerMeta.get(KEY));
  }

  /** Writes the record inside a write transaction. */
  write(c: Counters): void {
    this.store.ledgerMeta.putSync(KEY, encodeCounters(c));
  }
}
