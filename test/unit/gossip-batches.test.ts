import { describe, expect, it } from 'vitest';
import {
  blockJson,
  decodeBlockBatch,
  decodeBlockMessage,
  decodeVoteBatch,
  encodeBatchMessage,
  encodeBlockMessage,
  encodeVoteMessage,
  MAX_BATCH_ITEMS,
  voteJson,
} from '../../node-core/net/gossip.ts';
import { GossipBatcher } from '../../node-core/net/gossip-batcher.ts';
import { ZERO_HASH, type Block } from '../../node-core/protocol/block.ts';
import type { Vote } from '../../node-core/protocol/vote.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);
const h = (c: string) => c.repeat(64);

function block(i: number): Block {
  return {
    type: 'claim',
    account: h('a'),
    previous: ZERO_HASH,
    balance: 1000n + BigInt(i),
    timestamp: 1_700_000_000_000_000_000n + BigInt(i),
    asset: 'XE',
    amount: 1000n + BigInt(i),
    pub_key: h('b'),
    hash: h((i % 10).toString()),
    signature: 'c'.repeat(128),
    pow_nonce: 7n,
  } as Block;
}

const vote: Vote & { signature: string } = {
  rep_pub_key: h('1'),
  block_hash: h('2'),
  account: h('3'),
  previous: '0',
  timestamp: 1_700_000_000_000_000_000n,
  final: true,
  signature: 'ab'.repeat(64),
};

describe('gossip batch messages', () => {
  it('a batch of blocks decodes to the blocks single messages carry, in order', () => {
    const blocks = [block(1), block(2), block(3)];
    const batch = decodeBlockBatch(
      encodeBatchMessage(
        'blocks',
        blocks.map((b) => utf8(blockJson(b))),
      ),
    );
    expect(batch?.unknown).toBe(0);
    expect(batch?.blocks).toEqual(blocks.map((b) => decodeBlockMessage(encodeBlockMessage(b))));
  });

  it('refuses malformed batches whole: other keys, empty, too many, one bad block', () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    const one = blockJson(block(1));
    expect(decodeBlockBatch(enc(`{"blocks":[${one}],"x":1}`))).toBeUndefined();
    expect(decodeBlockBatch(enc('{"blocks":[]}'))).toBeUndefined();
    expect(
      decodeBlockBatch(
        enc(
          `{"blocks":[${Array(MAX_BATCH_ITEMS + 1)
            .fill(one)
            .join(',')}]}`,
        ),
      ),
    ).toBeUndefined();
    const bad = one.replace('"balance":1001', '"balance":-1');
    expect(bad).not.toBe(one);
    expect(decodeBlockBatch(enc(`{"blocks":[${one},${bad}]}`))).toBeUndefined();
    // A type of a newer network is left out, not held against the batch.
    const newer = one.replace('"type":"claim"', '"type":"teleport"');
    expect(decodeBlockBatch(enc(`{"blocks":[${one},${newer}]}`))).toEqual({
      blocks: [decodeBlockMessage(encodeBlockMessage(block(1)))],
      unknown: 1,
    });
  });

  it('votes in a batch keep their weight, so one passed on alone is the same message', () => {
    const items = decodeVoteBatch(
      encodeBatchMessage('votes', [utf8(voteJson(vote, 42n)), utf8(voteJson(vote, 7n))]),
    )!;
    expect(items.map((i) => i.weight)).toEqual([42n, 7n]);
    expect(Buffer.from(encodeVoteMessage(items[0]!.vote, items[0]!.weight))).toEqual(
      Buffer.from(encodeVoteMessage(vote, 42n)),
    );
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(
      decodeVoteBatch(enc(`{"votes":[${voteJson(vote, 1n).replace('"Final":true', '"Final":1')}]}`)),
    ).toBeUndefined();
  });
});

describe('gossip batcher', () => {
  function outlet(welcome: boolean) {
    const sent: { topic: string; data: string }[] = [];
    return {
      sent,
      publish: (topic: string, data: Uint8Array) =>
        sent.push({ topic, data: new TextDecoder().decode(data) }),
      welcomes: () => welcome,
    };
  }
  const topic = {
    batchTopic: 'batch',
    singleTopic: 'single',
    encodeBatch: (items: readonly Uint8Array[]) => encodeBatchMessage('blocks', items),
    maxItems: 3,
    maxBytes: 1000,
  };

  it('what is published in one turn goes out as batches of at most maxItems', async () => {
    const o = outlet(true);
    const b = new GossipBatcher(o, topic);
    for (let i = 0; i < 7; i++) b.add(`${i}`, () => new TextEncoder().encode(`single ${i}`));
    expect(o.sent).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(o.sent).toEqual([
      { topic: 'batch', data: '{"blocks":[0,1,2]}' },
      { topic: 'batch', data: '{"blocks":[3,4,5]}' },
      { topic: 'batch', data: '{"blocks":[6]}' },
    ]);
    expect(b.sent).toEqual({ batches: 3, batched_items: 7, singles: 0 });
  });

  it('where a peer does not take batches, and for a lone item, each goes out alone', async () => {
    const o = outlet(false);
    const b = new GossipBatcher(o, topic);
    b.add('0', () => new TextEncoder().encode('single 0'));
    b.add('1', () => new TextEncoder().encode('single 1'));
    await new Promise((r) => setImmediate(r));
    const lone = new GossipBatcher(outlet(true), topic);
    lone.add('9', () => new TextEncoder().encode('single 9'));
    lone.flush();
    expect(o.sent).toEqual([
      { topic: 'single', data: 'single 0' },
      { topic: 'single', data: 'single 1' },
    ]);
    expect(lone.sent).toEqual({ batches: 0, batched_items: 0, singles: 1 });
  });

  it('keeps a batch under maxBytes', () => {
    const o = outlet(true);
    const b = new GossipBatcher(o, { ...topic, maxItems: 100, maxBytes: 30 });
    for (const s of ['aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc']) b.add(`"${s}"`, () => new Uint8Array());
    b.flush();
    expect(o.sent.map((m) => m.data)).toEqual([
      '{"blocks":["aaaaaaaaaa","bbbbbbbbbb"]}',
      '{"blocks":["cccccccccc"]}',
    ]);
  });
});
