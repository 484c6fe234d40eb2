import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eligibleWeights, hasQuorum } from '../../node-core/consensus/weights.ts';
import { keyPairFromSeed, signVote, type Vote } from '../../node-core/protocol/index.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/** Vote handling against reference-behavior.md 9.2 (C-10, C-13, C-17) on a real node. */
describe('remote votes', () => {
  let t: TestNode;
  const repSeed = new Uint8Array(32).fill(42);
  const rep = keyPairFromSeed(repSeed);
  let block: { hash: string; account: string; previous: string };
  let other: { hash: string; account: string; previous: string };

  beforeAll(async () => {
    t = await startTestNode();
    // Give a second representative some weight: an account delegates to it.
    const treasury = await t.wallet(seedOf(t.keys.treasury.seed_hex));
    const holder = await t.wallet();
    const s = await treasury.send(holder.address, 1_000_000_000n);
    holder.delegateTo(rep.address);
    await holder.receive({
      hash: s.hash!,
      from: treasury.address,
      amount: 1_000_000_000n,
      asset: 'XE',
      timestamp: s.timestamp,
    });
    const w = await t.wallet();
    const claim = await w.claim(5n);
    block = { hash: claim.hash!, account: claim.account, previous: '0' };
    const claim2 = await (await t.wallet()).claim(6n);
    other = { hash: claim2.hash!, account: claim2.account, previous: '0' };
  });
  afterAll(async () => {
    await t?.stop();
  });

  const vote = (over: Partial<Vote> = {}): Vote => ({
    rep_pub_key: rep.pub_key,
    block_hash: block.hash,
    account: block.account,
    previous: block.previous,
    timestamp: t.node.now(),
    final: true,
    ...over,
  });

  it('a forged vote is rejected and does not block the genuine one (C-10)', () => {
    const genuine = signVote(vote(), repSeed);
    const forged = { ...genuine, signature: 'ab'.repeat(64) };
    expect(t.node.consensus.onVote(forged)).toBe('reject');
    expect(t.node.consensus.onVote(genuine)).toBe('accept');
    expect(t.node.consensus.onVote(genuine)).toBe('ignore'); // a duplicate is counted once
    expect(t.node.consensus.votersFor(block.hash)).toContain(rep.address);
  });

  it('a vote naming another chain position than its block is not counted (C-13)', () => {
    const at = { block_hash: other.hash, account: other.account };
    const wrong = signVote(vote({ ...at, previous: 'cd'.repeat(32) }), repSeed);
    expect(t.node.consensus.onVote(wrong)).toBe('ignore');
    expect(t.node.consensus.votersFor(other.hash)).toEqual([]);
    const right = signVote(vote({ ...at, previous: other.previous }), repSeed);
    expect(t.node.consensus.onVote(right)).toBe('accept');
  });

  it('ignores votes from representatives without weight and votes outside the 5-minute window', () => {
    const nobody = new Uint8Array(32).fill(7);
    const fromNobody = signVote(
      { ...vote({ final: false }), rep_pub_key: keyPairFromSeed(nobody).pub_key },
      nobody,
    );
    expect(t.node.consensus.onVote(fromNobody)).toBe('ignore');
    const stale = signVote(vote({ final: false, timestamp: t.node.now() - 301_000_000_000n }), repSeed);
    expect(t.node.consensus.onVote(stale)).toBe('ignore');
  });
});

describe('eligibility and quorum (C-17)', () => {
  const w = new Map([
    ['a', 60n],
    ['b', 40n],
    ['z', 0n],
  ]);
  it('counts only allow-listed representatives with weight', () => {
    const e = eligibleWeights(w, { mode: 'allowlist', addresses: ['a'] });
    expect([...e.weights.keys()]).toEqual(['a']);
    expect(e.total).toBe(60n);
    expect(e.ineligibleTotal).toBe(40n);
    expect(e.failedOpen).toBe(false);
  });
  it('fails open when the allowlist matches no weight at all', () => {
    const e = eligibleWeights(w, { mode: 'allowlist', addresses: ['nobody'] });
    expect(e.failedOpen).toBe(true);
    expect(e.total).toBe(100n);
  });
  it('quorum is 67/100 exactly, and zero weight never reaches it', () => {
    expect(hasQuorum(67n, 100n)).toBe(true);
    expect(hasQuorum(66n, 100n)).toBe(false);
    expect(hasQuorum(0n, 0n)).toBe(false);
  });
});
