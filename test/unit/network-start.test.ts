import { describe, expect, it } from 'vitest';
import { encodeBlockRecord } from '../../node-core/ledger/codec.ts';
import { NETWORK_CREATED_META, networkStartedAt } from '../../node-core/ledger/network-start.ts';
import { decodeBlock } from '../../node-core/protocol/block-json.ts';
import { vectors } from '../helpers/vectors.ts';

/** When the network began (genesis says 0): the recorded creation, else the first blocks' earliest time. */
function storeWith(meta: Record<string, string>, timestamps: bigint[]) {
  // A real block (a protocol vector) at each timestamp, stored as the ledger stores blocks.
  const block = decodeBlock(vectors.vectors[0]!.block);
  const values = timestamps.map((timestamp, i) => ({
    value: encodeBlockRecord({ height: i + 1, block: { ...block, timestamp } } as never),
  }));
  return {
    meta: { get: (k: string) => meta[k] },
    blocks: { getRange: ({ limit }: { limit: number }) => values.slice(0, limit) },
  };
}

describe('networkStartedAt', () => {
  it('prefers the creation this node recorded', () => {
    expect(networkStartedAt(storeWith({ [NETWORK_CREATED_META]: '123' }, [0n, 5n]))).toBe(123n);
  });
  it('else takes the earliest non-zero time among the first blocks, genesis (0) left out', () => {
    expect(networkStartedAt(storeWith({}, [0n, 900n, 700n, 800n]))).toBe(700n);
  });
  it('is null when only genesis is there', () => {
    expect(networkStartedAt(storeWith({}, [0n]))).toBeNull();
  });
});
