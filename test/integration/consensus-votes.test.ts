import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eligibleWeights, hasQuorum } from '../../node-core/consensus/weights.ts';
import { RepWeights } from '../../node-core/ledger/rep-weights.ts';
import { keyPairFromSeed, signVote, type Vote } from '../../node-core/protocol/index.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/** Vote handling against reference-behavior.md 9.2 (C-10, C-13, C-17) on a real node. */
describe('remote votes', () => {
  let t: TestNode;
  const repSeed = new Uint8Array(32).fill(42);
  const rep = keyPairFromSeed(repSeed);
  let block: { hash: string; account: string; previous: string };
  let other: { hash: string; account: string; previous: string };

  beforeAll(async () => {
    // Records of finalized positions are swept twice a second here (30 s by default).
    t = await startTestNode({ consensusTiming: { lingerSweepMs: 500 } });
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

  /** A random 32-byte hex value (a block hash or account no one has). */
  const randomHex = () => Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(32))).toString('hex');

  it('throttles a storm of converge votes per representative and election, before verifying them; final votes pass (C-07)', () => {
    const c = t.node.consensus;
    const election = { account: randomHex(), previous: '0' };
    const before = c.votesThrottled;
    const verdicts = Array.from({ length: 20 }, () =>
      c.onVote(signVote(vote({ ...election, block_hash: randomHex(), final: false }), repSeed)),
    );
    // The default budget is 8 converge votes per representative per election per 10 s.
    expect(verdicts.filter((v) => v === 'accept')).toHaveLength(8);
    expect(verdicts.slice(8).every((v) => v === 'ignore')).toBe(true);
    expect(c.votesThrottled - before).toBe(12);
    // Over budget, a vote is dropped before its signature is checked: a forged one is not even
    // rejected (verification would say 'reject').
    const forged = { ...signVote(vote({ ...election, block_hash: randomHex(), final: false }), repSeed) };
    forged.signature = 'ab'.repeat(64);
    expect(c.onVote(forged)).toBe('ignore');
    // Final votes are never throttled.
    expect(c.onVote(signVote(vote({ ...election, block_hash: randomHex(), final: true }), repSeed))).toBe(
      'accept',
    );
    // Another election has a budget of its own.
    const fresh = { account: randomHex(), previous: '0' };
    expect(c.onVote(signVote(vote({ ...fresh, block_hash: randomHex(), final: false }), repSeed))).toBe(
      'accept',
    );
  });

  it("forged votes do not use up a representative's budget (C-07 with C-10)", () => {
    const c = t.node.consensus;
    const election = { account: randomHex(), previous: '0' };
    for (let i = 0; i < 20; i++) {
      const forged = signVote(vote({ ...election, block_hash: randomHex(), final: false }), repSeed);
      expect(c.onVote({ ...forged, signature: 'cd'.repeat(64) })).toBe('reject');
    }
    for (let i = 0; i < 8; i++) {
      const genuine = signVote(vote({ ...election, block_hash: randomHex(), final: false }), repSeed);
      expect(c.onVote(genuine)).toBe('accept');
    }
  });

  it('a re-affirmed copy of a counted vote (fresher timestamp) is relayed, not recounted; older copies are not (C-08)', () => {
    const c = t.node.consensus;
    const open = { account: randomHex(), previous: '0', block_hash: randomHex(), final: true };
    const first = signVote(vote({ ...open, timestamp: t.node.now() - 2_000_000_000n }), repSeed);
    expect(c.onVote(first)).toBe('accept');
    const again = signVote(vote({ ...open }), repSeed);
    expect(c.onVote(again)).toBe('accept'); // relayed for nodes that missed the first copy
    expect(c.votersFor(open.block_hash)).toEqual([rep.address]);
    expect(c.lastVoteTimestamp(rep.pub_key, open.block_hash, true)).toBe(again.timestamp);
    expect(c.onVote(again)).toBe('ignore');
    expect(c.onVote(first)).toBe('ignore'); // a replay of the older copy
  });

  it('one vote slot per representative and position: a newer converge vote moves its weight; an older one, or any after a final vote, does not (2.2)', () => {
    const c = t.node.consensus;
    const at = { account: randomHex(), previous: '0' };
    const [x, y] = [randomHex(), randomHex()];
    const now = t.node.now();
    const cast = (hash: string, dt: bigint, final: boolean) =>
      c.onVote(signVote(vote({ ...at, block_hash: hash, final, timestamp: now + dt }), repSeed));
    expect(cast(x, 0n, false)).toBe('accept');
    expect(c.votersFor(x)).toEqual([rep.address]);
    expect(cast(y, 1n, false)).toBe('accept'); // the newer converge vote moves the weight to y
    expect(c.votersFor(x)).toEqual([]);
    expect(c.votersFor(y)).toEqual([rep.address]);
    expect(cast(x, -5n, false)).toBe('ignore'); // an older converge vote arriving late changes nothing
    expect(c.votersFor(x)).toEqual([]);
    expect(cast(y, 2n, true)).toBe('accept'); // final: irrevocable
    expect(cast(x, 3n, false)).toBe('ignore');
    expect(cast(x, 4n, true)).toBe('ignore');
    expect(c.votersFor(x)).toEqual([]);
    expect(c.votersFor(y)).toEqual([rep.address]);
  });

  it('the phantom scan finds held blocks by the index, reading no block (issue #18)', async () => {
    const c = t.node.consensus;
    const claim = await (await t.wallet()).claim(7n);
    const held = { account: claim.account, previous: '0', block_hash: claim.hash! };
    expect(c.onVote(signVote(vote(held), repSeed))).toBe('accept');
    const cache = (c as unknown as { blocks: { hits: number; misses: number } }).blocks;
    const before = [cache.hits, cache.misses];
    const phantoms = c.phantoms(0, 4096);
    expect(phantoms).not.toContain(claim.hash);
    // The hashes voted for above that no block has: phantoms, found without a block read either.
    expect(phantoms.length).toBeGreaterThan(10);
    expect([cache.hits, cache.misses]).toEqual(before);
  });

  it('the throttle count is shown in GET /node', async () => {
    const info = await t.client.get<{ consensus: { votes_throttled: number } }>('/node');
    expect(info.consensus.votes_throttled).toBe(t.node.consensus.votesThrottled);
    expect(info.consensus.votes_throttled).toBeGreaterThan(0);
  });

  it('a periodic sweep removes vote records of positions that are already finalized (C-14)', async () => {
    const c = t.node.consensus;
    const claim = await (await t.wallet()).claim(7n);
    expect((await t.client.block(claim.hash!))?.finalized).toBe(true);
    const late = signVote(vote({ block_hash: claim.hash!, account: claim.account, previous: '0' }), repSeed);
    expect(c.onVote(late)).toBe('accept');
    expect(c.votersFor(claim.hash!)).toContain(rep.address);
    const swept = c.stats.records_swept;
    await waitFor(() => c.votersFor(claim.hash!).length === 0, 3000, 'sweep of the finalized position');
    expect(c.stats.records_swept).toBeGreaterThan(swept);
    // An open position's records stay.
    const open = { account: randomHex(), previous: '0', block_hash: randomHex() };
    expect(c.onVote(signVote(vote({ ...open, final: false }), repSeed))).toBe('accept');
    await new Promise((r) => setTimeout(r, 1200));
    expect(c.votersFor(open.block_hash)).toEqual([rep.address]);
  });
});

describe('eligibility and quorum (C-17)', () => {
  const w = RepWeights.from([
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
