import type { Block } from '../protocol/block.ts';
import type { Keyset } from '../protocol/keys.ts';

/**
 * The ledger's stored records (their binary forms are in codec.ts). Heights are JS numbers: a chain
 * never nears 2^53 blocks.
 */
export interface AccountRecord {
  /** Blocks in the chain. */
  height: number;
  frontier: string;
  /** Raw per-asset balances after the frontier (assets never touched are absent). */
  balances: Record<string, bigint>;
  representative?: string;
  /** Opening key of a single-key account. */
  pub_key?: string;
  /** Keyset of a multisig account. */
  keyset?: Keyset;
  /** Finalized blocks from the start of the chain (no gaps). */
  final_height: number;
  /** Per-asset balances at the final height. */
  final_balances: Record<string, bigint>;
  last_timestamp: bigint;
  /** Claims still inside the faucet window: [timestamp, amount]. */
  claims?: [bigint, bigint][];
}

export interface BlockRecord {
  block: Block;
  height: number;
}

export interface PendingRecord {
  from: string;
  amount: bigint;
  asset: string;
  timestamp: bigint;
}
