import { describe, expect, it } from 'vitest';
import { BlockCache, type BlockSource, type HeldBlock } from '../../node-core/consensus/block-cache.ts';
import type { SignedBlock } from '../../node-core/ledger/ledger.ts';

/** A chain store that can roll a height back and put another block there. */
function fakeChain() {
  const blocks = new Map<string, HeldBlock>();
  const chain = new Map<string, string>();
  let reads = 0;
  const put = (hash: string, account: string, height: number) => {
    blocks.set(hash, { block: { hash, account } as unknown as SignedBlock, height });
    chain.set(`${account}:${height}`, hash);
  };
  const remove = (hash: string) => {
    const b = blocks.get(hash)!;
    blocks.delete(hash);
    chain.delete(`${b.block.account}:${b.height}`);
  };
  const source: BlockSource = {
    getBlock: (h) => {
      reads += 1;
      return blocks.get(h);
    },
    hashAt: (a, h) => chain.get(`${a}:${h}`),
    hashIsAt: (a, h, hash) => chain.get(`${a}:${h}`) === hash,
  };
  return { put, remove, source, reads: () => reads };
}

describe('consensus block cache', () => {
  it('decodes a block once while it stays on chain', () => {
    const c = fakeChain();
    c.put('h1', 'acct', 1);
    const cache = new BlockCache(c.source);
    expect(cache.get('h1')?.height).toBe(1);
    expect(cache.get('h1')?.height).toBe(1);
    expect(cache.onChain('h1', 'acct', 1)?.block.hash).toBe('h1');
    expect(c.reads()).toBe(1);
    expect(cache.hits).toBe(2);
  });

  it('does not serve a block a rollback took off the chain, nor its stale height', () => {
    const c = fakeChain();
    c.put('loser', 'acct', 2);
    const cache = new BlockCache(c.source);
    expect(cache.get('loser')).toBeDefined();
    c.remove('loser');
    c.put('winner', 'acct', 2);
    expect(cache.get('loser')).toBeUndefined();
    expect(cache.get('winner')?.block.hash).toBe('winner');
    // Re-applied later at another height: read afresh, not the old height.
    c.put('loser', 'acct', 3);
    expect(cache.get('loser')?.height).toBe(3);
  });

  it('serves a block remembered at its commit without reading it, until a rollback takes it off', () => {
    const c = fakeChain();
    c.put('b1', 'acct', 1);
    const cache = new BlockCache(c.source);
    const block = { hash: 'b1', account: 'acct' } as unknown as SignedBlock;
    cache.remember(block, 1);
    expect(cache.onChain('b1', 'acct', 1)?.block).toBe(block);
    expect(cache.get('b1')?.block).toBe(block);
    expect(c.reads()).toBe(0);
    // Rolled back and another block put there: the remembered one is not served.
    c.remove('b1');
    c.put('b2', 'acct', 1);
    expect(cache.get('b1')).toBeUndefined();
    expect(cache.onChain('b2', 'acct', 1)?.block.hash).toBe('b2');
    expect(c.reads()).toBe(2);
  });

  it('an unknown hash is not remembered as absent', () => {
    const c = fakeChain();
    const cache = new BlockCache(c.source);
    expect(cache.get('later')).toBeUndefined();
    c.put('later', 'acct', 1);
    expect(cache.get('later')?.height).toBe(1);
  });
});
