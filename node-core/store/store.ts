import { type Database, open, type RootDatabase } from 'lmdb';
import { parseJson, stringifyJson } from '../protocol/json.ts';

/**
 * The node's durable store: one LMDB environment with named databases. Values are lossless JSON text
 * (64-bit integers keep every digit); keys use LMDB's ordered encoding so ranges come back sorted.
 *
 * Writes go through `transaction`: the callback runs inside LMDB's batched write transaction (it
 * sees every earlier write of the batch), aborts alone if it throws, and the returned promise
 * resolves only once the batch is committed AND flushed to disk. That is the point at which the node
 * may acknowledge a block: nothing acknowledged can be lost by a crash, nothing half-applied survives.
 */
export type ChainKey = [account: string, height: number];
export type PendingKey = [destination: string, sendHash: string];
export type TimeKey = [timestamp: number, hash: string];

export interface StoreOptions {
  path: string;
  /** Initial map size in bytes; LMDB grows it as needed. */
  mapSize?: number;
}

export class Store {
  readonly root: RootDatabase;
  /** Small named records: genesis, counters, state-chain tip. */
  readonly meta: Database<string, string>;
  /** block hash -> {h: height, b: block JSON} */
  readonly blocks: Database<string, string>;
  /** [account, height] -> block hash (1-based heights) */
  readonly chains: Database<string, ChainKey>;
  /** address -> account record */
  readonly accounts: Database<string, string>;
  /** [destination, send hash] -> pending entry */
  readonly pending: Database<string, PendingKey>;
  /** [timestamp, hash] -> '' : blocks by time, for /blocks/recent */
  readonly byTime: Database<string, TimeKey>;
  /** representative address -> delegated XE weight (digits) */
  readonly reps: Database<string, string>;
  /** accounts whose final height is below their height -> '' (re-driven at start) */
  readonly unfinal: Database<string, string>;
  /** state-chain index -> state block JSON (op values verbatim) */
  readonly stateBlocks: Database<string, number>;
  /** state-chain key -> value JSON text, verbatim */
  readonly kv: Database<string, string>;

  private constructor(root: RootDatabase) {
    this.root = root;
    const db = <K extends string | number | ChainKey | PendingKey | TimeKey>(name: string) =>
      root.openDB<string, K>(name, { encoding: 'string' });
    this.meta = db<string>('meta');
    this.blocks = db<string>('blocks');
    this.chains = db<ChainKey>('chains');
    this.accounts = db<string>('accounts');
    this.pending = db<PendingKey>('pending');
    this.byTime = db<TimeKey>('by_time');
    this.reps = db<string>('reps');
    this.unfinal = db<string>('unfinal');
    this.stateBlocks = db<number>('state_blocks');
    this.kv = db<string>('kv');
  }

  static open(opts: StoreOptions): Store {
    const root = open({
      path: opts.path,
      mapSize: opts.mapSize ?? 256 * 1024 * 1024,
      maxDbs: 16,
      // Child transactions (an abortable unit per block) need no shared cache and no write map.
      cache: false,
      useWritemap: false,
    });
    return new Store(root);
  }

  /**
   * Runs `fn` as one atomic unit inside the next batched write transaction and resolves with its
   * result once durable. If `fn` throws, its writes are rolled back and the promise rejects with
   * that error; other units of the batch are unaffected.
   */
  async transaction<T>(fn: () => T): Promise<T> {
    const result = await this.root.childTransaction(fn);
    await this.root.flushed;
    return result;
  }

  getJson<T>(db: Database<string, string>, key: string): T | undefined {
    const text = db.get(key);
    return text === undefined ? undefined : (parseJson(text) as T);
  }

  async close(): Promise<void> {
    await this.root.flushed;
    await this.root.close();
  }
}

export function toJsonText(value: unknown): string {
  return stringifyJson(value);
}

export function fromJsonText<T>(text: string): T {
  return parseJson(text) as T;
}
