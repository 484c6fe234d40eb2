import type { ChainBlock, LedgerClient } from '../../../node-core/client/client.ts';
import type { Block, BlockType } from '../../../node-core/protocol/block.ts';
import { formatUnits } from '../../../node-core/protocol/units.ts';

/**
 * An account's history as rows: one per block of its chain, with the direction of the money, the
 * counterparty and memo (for a receive, from the send it received), and a CSV export with exact
 * micro-unit amounts next to human units.
 */
export type Direction = 'in' | 'out' | 'none';

export interface HistoryRow {
  /** 1-based position in the chain. */
  height: number;
  hash: string;
  type: BlockType;
  direction: Direction;
  asset: string;
  /** Micro-units moved; undefined when not known (a receive whose send could not be read). */
  amount: bigint | undefined;
  /** Balance of `asset` after the block. */
  balance: bigint;
  counterparty: string | undefined;
  memo: string | undefined;
  /** Unix nanoseconds. */
  timestamp: bigint;
  finalized: boolean;
  /** For a receive: the send it took in. */
  source: string | undefined;
}

const IN_TYPES = new Set<BlockType>(['claim', 'receive', 'mint']);
const OUT_TYPES = new Set<BlockType>(['send', 'burn']);

export function directionOf(type: BlockType): Direction {
  return IN_TYPES.has(type) ? 'in' : OUT_TYPES.has(type) ? 'out' : 'none';
}

/** A row for a block; `source` is the send block a receive took in, when known. */
export function rowOf(cb: ChainBlock, height: number, source?: Block): HistoryRow {
  const b = cb.block;
  const row: HistoryRow = {
    height,
    hash: b.hash ?? '',
    type: b.type,
    direction: directionOf(b.type),
    asset: b.asset,
    amount: b.amount,
    balance: b.balance,
    counterparty: undefined,
    memo: b.memo,
    timestamp: b.timestamp,
    finalized: cb.finalized,
    source: b.source,
  };
  if (b.type === 'send') row.counterparty = b.destination;
  if (b.type === 'receive') {
    row.amount = source?.amount;
    row.counterparty = source?.account;
    row.memo = source?.memo;
  }
  return row;
}

export interface HistoryFilter {
  type: 'all' | BlockType;
  direction: 'all' | Direction;
}

export function filterRows(rows: readonly HistoryRow[], f: HistoryFilter): HistoryRow[] {
  return rows.filter(
    (r) => (f.type === 'all' || r.type === f.type) && (f.direction === 'all' || r.direction === f.direction),
  );
}

/** Unix nanoseconds as an ISO-8601 UTC time (millisecond precision). */
export function isoTime(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

export const CSV_COLUMNS = [
  'height',
  'time_utc',
  'timestamp_ns',
  'type',
  'direction',
  'asset',
  'amount_micro',
  'amount',
  'balance_micro',
  'balance',
  'counterparty',
  'memo',
  'hash',
  'finalized',
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. Text that a
 * spreadsheet would run as a formula (a memo anyone can write starting with = + - @) gets a leading
 * apostrophe, the usual guard against formula injection.
 */
export function csvField(v: string): string {
  let s = v;
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV text of rows (oldest first in the file, as a ledger reads), CRLF line ends. */
export function historyCsv(rows: readonly HistoryRow[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  const sorted = [...rows].sort((a, b) => a.height - b.height);
  for (const r of sorted) {
    lines.push(
      [
        String(r.height),
        isoTime(r.timestamp),
        r.timestamp.toString(),
        r.type,
        r.direction,
        r.asset,
        r.amount === undefined ? '' : r.amount.toString(),
        r.amount === undefined ? '' : formatUnits(r.amount, 6),
        r.balance.toString(),
        formatUnits(r.balance, 6),
        r.counterparty ?? '',
        r.memo ?? '',
        r.hash,
        r.finalized ? 'true' : 'false',
      ]
        .map(csvField)
        .join(','),
    );
  }
  return lines.join('\r\n') + '\r\n';
}

/** Runs `fn` over items with at most `limit` running at once. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The whole chain with the sends its receives took in: for the CSV export. */
export async function fetchFullHistory(client: LedgerClient, address: string): Promise<HistoryRow[]> {
  const blocks: ChainBlock[] = [];
  for (let offset = 0; ;) {
    const page = await client.chain(address, offset, 1000);
    if (!page) break;
    blocks.push(...page.blocks);
    offset += page.blocks.length;
    if (page.blocks.length === 0 || offset >= page.total) break;
  }
  const sources = await mapLimited(blocks, 6, async (cb) =>
    cb.block.type === 'receive' && cb.block.source ? (await client.block(cb.block.source))?.block : undefined,
  );
  return blocks.map((cb, i) => rowOf(cb, i + 1, sources[i]));
}

/** Starts a browser download of text as a file. */
export function downloadText(filename: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
