import type { Store } from '../store/store.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';

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

export interface Counters {
  blocks: number;
  accounts: number;
  delegation_underflows: number;
  supply: { XE: AssetSupply; XUSD: AssetSupply };
}

const KEY = 'counters';
const TERMS: (keyof AssetSupply)[] = [
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
    accounts: 0,
    delegation_underflows: 0,
    supply: { XE: emptyAsset(), XUSD: emptyAsset() },
  };
}

function decode(text: string | undefined): Counters {
  if (text === undefined) return emptyCounters();
  const o = parseJson(text) as Record<string, unknown>;
  const c = emptyCounters();
  c.blocks = Number(o.blocks);
  c.accounts = Number(o.accounts);
  c.delegation_underflows = Number(o.delegation_underflows ?? 0);
  const supply = (o.supply ?? {}) as Record<string, Record<string, unknown>>;
  for (const asset of ['XE', 'XUSD'] as const) {
    for (const t of TERMS) c.supply[asset][t] = BigInt((supply[asset]?.[t] as string | undefined) ?? '0');
  }
  return c;
}

function encode(c: Counters): string {
  const supply: Record<string, Record<string, string>> = {};
  for (const asset of ['XE', 'XUSD'] as const) {
    supply[asset] = Object.fromEntries(TERMS.map((t) => [t, c.supply[asset][t].toString()]));
  }
  return stringifyJson({
    blocks: c.blocks,
    accounts: c.accounts,
    delegation_underflows: c.delegation_underflows,
    supply,
  });
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
    return decode(this.store.meta.get(KEY));
  }

  /** Read-modify-write inside a write transaction. */
  update(fn: (c: Counters) => void): void {
    const c = this.read();
    fn(c);
    this.store.meta.putSync(KEY, encode(c));
  }
}
