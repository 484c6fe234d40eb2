import { decodeBlockRecord } from './codec.ts';
import type { BlockRecord } from './records.ts';
import type { SignedBlock } from './rules/index.ts';

/**
 * When the network started, for people (issue #16: "genesis shows its real time"). Genesis blocks
 * carry timestamp 0 by the protocol (protocol.md 10), so the time comes from elsewhere: the moment
 * this node created the network (a development network, recorded then), or else the earliest
 * timestamp among the first blocks stored after genesis (on a joined network, its first activity
 * this node knows of). Null while there is neither.
 */
export const NETWORK_CREATED_META = 'network_created_ns';
/** Blocks looked at from the start of the store: commit order follows time closely. */
const FIRST_BLOCKS = 200;

export interface NetworkStartReads {
  meta: { get(key: string): string | undefined };
  blocks: { getRange(opts: { limit: number }): Iterable<{ value: Uint8Array }> };
}

export function networkStartedAt(store: NetworkStartReads): bigint | null {
  const recorded = store.meta.get(NETWORK_CREATED_META);
  if (recorded !== undefined && /^\d+$/.test(recorded)) return BigInt(recorded);
  let earliest: bigint | null = null;
  for (const { value } of store.blocks.getRange({ limit: FIRST_BLOCKS })) {
    const t = (decodeBlockRecord(value) as BlockRecord & { block: SignedBlock }).block.timestamp;
    if (t > 0n && (earliest === null || t < earliest)) earliest = t;
  }
  return earliest;
}
