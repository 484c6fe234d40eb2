import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeBlockMessage,
  unknownBlockType,
  decodeStateMessage,
  decodeVoteMessage,
  encodeBlockMessage,
  encodeStateMessage,
  encodeVoteMessage,
  MAX_GOSSIP_BYTES,
} from '../../node-core/net/gossip.ts';
import { decodeHello, encodeHello, incompatibility } from '../../node-core/net/netcheck.ts';
import {
  blockHash,
  decodeBlock,
  keyPairFromSeed,
  signVote,
  stateBlockHash,
  parseStateBlock,
} from '../../node-core/protocol/index.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { vectors } from '../helpers/vectors.ts';

const hello = { network_id: 'devnet-1', version: '1.0.0', features: [], genesis_hash: 'ab'.repeat(32) };

describe('netcheck', () => {
  it('round-trips a hello and refuses garbage', () => {
    expect(decodeHello(encodeHello(hello))).toEqual(hello);
    for (const bad of ['', '{', '[]', '{"network_id":1}', 'x'.repeat(5000)]) {
      expect(decodeHello(new TextEncoder().encode(bad))).toBeUndefined();
    }
  });

  it('refuses another network or genesis, and an empty network id', () => {
    expect(incompatibility(hello, hello)).toBeUndefined();
    expect(incompatibility(hello, { ...hello, network_id: 'devnet-2' })).toMatch(/network devnet-2/);
    expect(incompatibility(hello, { ...hello, genesis_hash: 'cd'.repeat(32) })).toMatch(/genesis/);
    expect(incompatibility(hello, { ...hello, network_id: '' })).toMatch(/empty/);
  });
});

describe('gossip payloads', () => {
  it('carry blocks, votes and state blocks losslessly', () => {
    const v = vectors.vectors[1]!;
    const block = decodeBlock(v.block);
    const back = decodeBlockMessage(encodeBlockMessage(block))!;
    expect(blockHash(back, v.network_id)).toBe(v.hash);

    const rep = keyPairFromSeed(new Uint8Array(32).fill(5));
    const vote = signVote(
      {
        rep_pub_key: rep.pub_key,
        block_hash: v.hash,
        account: v.address,
        previous: '0',
        timestamp: 18446744073709551n,
        final: true,
      },
      new Uint8Array(32).fill(5),
    );
    expect(decodeVoteMessage(encodeVoteMessage(vote, 42n))).toEqual(vote);

    const state = parseStateBlock(
      `{"index":1,"prev_hash":"${'00'.repeat(32)}","timestamp":5,"ops":[{"type":"set","key":"a","value": { "x" :1 }}]}`,
    );
    const sb = decodeStateMessage(encodeStateMessage(state))!;
    expect(stateBlockHash(sb)).toBe(stateBlockHash(state));
  });

  it('property: random bytes and mutated payloads never throw, and decode to nothing or to a valid shape', () => {
    const good = encodeVoteMessage(
      signVote(
        {
          rep_pub_key: 'ab'.repeat(32),
          block_hash: 'cd'.repeat(32),
          account: 'ef'.repeat(32),
          previous: '0',
          timestamp: 1n,
          final: false,
        },
        new Uint8Array(32).fill(1),
      ),
      1n,
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(), fc.nat(255), (junk, pos, val) => {
        for (const dec of [decodeBlockMessage, decodeVoteMessage, decodeStateMessage])
          expect(() => dec(junk)).not.toThrow();
        const m = Uint8Array.from(good);
        m[pos % m.length] = val;
        expect(() => decodeVoteMessage(m)).not.toThrow();
      }),
      { numRuns: 2000 },
    );
  });

  it('L-19: tells a block of an unknown type (a newer network) from a malformed message', () => {
    const enc = new TextEncoder();
    const v = vectors.vectors[1]!;
    const known = encodeBlockMessage(decodeBlock(v.block));
    expect(unknownBlockType(known)).toBeUndefined();
    const newer = enc.encode(stringifyJson({ block: { ...(v.block as object), type: 'lease_v2' } }));
    expect(decodeBlockMessage(newer)).toBeUndefined();
    expect(unknownBlockType(newer)).toBe('lease_v2');
    for (const bad of [
      '{"block":{"type":7}}',
      '{"block":{"type":"Not A Type"}}',
      '{"block":{"type":""}}',
      '{"block":"lease_v2"}',
      '{"block":{"type":"lease_v2"},"extra":1}',
      'not json',
    ])
      expect(unknownBlockType(enc.encode(bad)), bad).toBeUndefined();
    expect(unknownBlockType(new Uint8Array(MAX_GOSSIP_BYTES + 1))).toBeUndefined();
  });

  it('refuses oversized messages and unknown vote fields', () => {
    expect(decodeBlockMessage(new Uint8Array(MAX_GOSSIP_BYTES + 1))).toBeUndefined();
    const withExtra = new TextEncoder().encode('{"vote":{"RepPubKey":"' + 'ab'.repeat(32) + '","Extra":1}}');
    expect(decodeVoteMessage(withExtra)).toBeUndefined();
  });
});
