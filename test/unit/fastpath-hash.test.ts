import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Block,
  blockHashBytes,
  bytesToHex,
  decodeBlock,
  encodeCanonical,
  U64_MAX,
} from '../../node-core/protocol/index.ts';
import { blockHashBytesNode, hashBlockNode } from '../../node-core/fastpath/block-hash.ts';
import { vectors } from '../helpers/vectors.ts';

describe('the Node fast path hashes blocks exactly as the isomorphic code', () => {
  it('on every vector', () => {
    for (const v of vectors.vectors) {
      const b = decodeBlock(v.block);
      expect(bytesToHex(blockHashBytesNode(b, v.network_id))).toBe(v.hash);
      expect(bytesToHex(blockHashBytes(b, v.network_id))).toBe(v.hash);
      // The canonical bytes it hands on (the ledger stores them) are the block's own.
      expect(bytesToHex(hashBlockNode(b, v.network_id).canonical)).toBe(bytesToHex(encodeCanonical(b)));
    }
  });

  it('property: on random send and claim blocks under random network ids', () => {
    const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(bytesToHex);
    const u64 = fc.bigInt({ min: 0n, max: U64_MAX });
    fc.assert(
      fc.property(
        hex32,
        hex32,
        u64,
        u64,
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (acct, other, bal, amt, net, isSend) => {
          const b: Block = isSend
            ? {
                type: 'send',
                account: acct,
                previous: other,
                balance: bal,
                timestamp: 1n,
                asset: 'XE',
                destination: other,
                amount: amt,
                memo: 'm',
              }
            : {
                type: 'claim',
                account: acct,
                previous: '0'.repeat(64),
                balance: bal,
                timestamp: 2n,
                asset: 'XE',
                amount: amt,
                pub_key: other,
              };
          expect(bytesToHex(blockHashBytesNode(b, net))).toBe(bytesToHex(blockHashBytes(b, net)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
