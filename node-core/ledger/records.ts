import type { Block } from '../protocol/block.ts';
import { blockToJson, decodeBlock } from '../protocol/block-json.ts';
import type { Keyset } from '../protocol/keys.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';

/**
 * Stored records and their text form. Integers are written with every digit and read back as
 * bigint whatever size they are; heights are JS numbers (a chain never nears 2^53 blocks).
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

const big = (v: unknown): bigint => (typeof v === 'bigint' ? v : BigInt(v as number | string));

function balancesFrom(o: unknown): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [k, v] of Object.entries((o ?? {}) as Record<string, unknown>)) out[k] = big(v);
  return out;
}

function balancesTo(b: Record<string, bigint>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(b)) out[k] = v.toString();
  return out;
}

export function encodeAccount(a: AccountRecord): string {
  return stringifyJson({
    height: a.height,
    frontier: a.frontier,
    balances: balancesTo(a.balances),
    representative: a.representative,
    pub_key: a.pub_key,
    keyset: a.keyset,
    final_height: a.final_height,
    final_balances: balancesTo(a.final_balances),
    last_timestamp: a.last_timestamp,
    claims: a.claims?.map(([t, v]) => [t.toString(), v.toString()]),
  });
}

export function decodeAccount(text: string): AccountRecord {
  const o = parseJson(text) as Record<string, unknown>;
  const rec: AccountRecord = {
    height: Number(o.height),
    frontier: o.frontier as string,
    balances: balancesFrom(o.balances),
    final_height: Number(o.final_height),
    final_balances: balancesFrom(o.final_balances),
    last_timestamp: big(o.last_timestamp),
  };
  if (o.representative) rec.representative = o.representative as string;
  if (o.pub_key) rec.pub_key = o.pub_key as string;
  if (o.keyset) rec.keyset = o.keyset as Keyset;
  if (Array.isArray(o.claims)) rec.claims = (o.claims as [string, string][]).map(([t, v]) => [big(t), big(v)]);
  return rec;
}

export function encodeBlockRecord(r: BlockRecord): string {
  return stringifyJson({ h: r.height, b: blockToJson(r.block, 'node') });
}

export function decodeBlockRecord(text: string): BlockRecord {
  const o = parseJson(text) as { h: number; b: unknown };
  return { height: o.h, block: decodeBlock(o.b) };
}

export function encodePending(p: PendingRecord): string {
  return stringifyJson({ from: p.from, amount: p.amount.toString(), asset: p.asset, timestamp: p.timestamp });
}

export function decodePending(text: string): PendingRecord {
  const o = parseJson(text) as Record<string, unknown>;
  return { from: o.from as string, amount: big(o.amount), asset: o.asset as string, timestamp: big(o.timestamp) };
}
