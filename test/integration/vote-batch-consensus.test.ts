import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countVoteBatch } from '../../node-core/net/vote-intake.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { generateKeyPair, signBytes } from '../../node-core/protocol/keys.ts';
import { signVote, type Vote } from '../../node-core/protocol/vote.ts';
import { decodeSignedVoteBatch, encodeSignedVoteBatch } from '../../node-core/protocol/vote-batch.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

type SignedVote = Vote & { signature: string };

/**
 * A batch-signed vote batch is counted as the same votes arriving singly (protocol/vote-batch.ts):
 * the same verdicts, the same finality, duplicates and weightless keys set aside alike; a bad batch
 * signature counts none of its votes. Node b is on the network of a, whose representative holds all
 * the weight; its votes reach b's consensus through the receiving path (net/vote-intake.ts).
 */
describe('batch-signed votes in consensus', () => {
  let a: TestNode;
  let b: TestNode;

  beforeAll(async () => {
    a = await startTestNode();
    b = await startTestNode({ genesisDir: join(a.dataDir, 'genesis') });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const seed = () => hexToBytes(a.node.nodeKey.seed_hex);
  const voteFor = (block: Block, final = true, s = seed(), key = a.node.nodeKey.pub_key): SignedVote =>
    signVote(
      {
        rep_pub_key: key,
        block_hash: block.hash!,
        account: block.account,
        previous: '0',
        timestamp: b.node.now(),
        final,
      },
      s,
    );
  const batchOf = (votes: SignedVote[], sign = (m: Uint8Array) => signBytes(m, seed())) =>
    decodeSignedVoteBatch(encodeSignedVoteBatch(votes[0]!.rep_pub_key, 0n, votes, sign));
  const count = (votes: SignedVote[], sign?: (m: Uint8Array) => Uint8Array) =>
    countVoteBatch(batchOf(votes, sign), { consensus: b.node.consensus, verifier: b.node.verifyPool });

  async function claims(n: number): Promise<Block[]> {
    return Promise.all(
      Array.from({ length: n }, async () =>
        (await b.wallet()).prepare({ type: 'claim', asset: 'XE', amount: 10n, balance: 10n }),
      ),
    );
  }
  const isFinal = (blk: Block) => b.node.ledger.getBlock(blk.hash!)?.finalized === true;

  it('final votes in one batch finalize their blocks as the same single votes do', async () => {
    const [x, y, z] = await claims(3);
    // x by a single vote, y and z by one batch: the same verdicts, the same outcome.
    const vx = voteFor(x!);
    const vyz = [voteFor(y!), voteFor(z!)];
    expect(b.node.consensus.onVote(vx)).toBe('accept');
    expect(await count(vyz)).toEqual(['accept', 'accept']);
    // The same votes again, singly or batched: duplicates, set aside alike.
    expect(b.node.consensus.onVote(vyz[0]!)).toBe('ignore');
    expect(await count([vx])).toEqual(['ignore']);
    expect(await count(vyz)).toEqual(['ignore', 'ignore']);
    for (const blk of [x!, y!, z!]) {
      const r = await b.node.ledger.submit(blk, { live: true });
      expect(r.finalized).toBe(true);
    }
    // Blocks already held: the batch's votes drive them to finality too.
    const [u, v] = await claims(2);
    for (const blk of [u!, v!])
      expect((await b.node.ledger.submit(blk, { live: true })).finalized).toBeFalsy();
    expect(await count([voteFor(u!), voteFor(v!)])).toEqual(['accept', 'accept']);
    await waitFor(() => Promise.resolve(isFinal(u!) && isFinal(v!)), 5000, 'final by the batch');
  });

  it('a bad batch signature counts none of its votes, even with good single signatures', async () => {
    const [x, y] = await claims(2);
    const forged = await count([voteFor(x!), voteFor(y!)], (m) =>
      signBytes(m, hexToBytes(generateKeyPair().seed_hex)),
    );
    expect(forged).toBeUndefined();
    expect(b.node.consensus.votersFor(x!.hash!)).toEqual([]);
    for (const blk of [x!, y!])
      expect((await b.node.ledger.submit(blk, { live: true })).finalized).toBeFalsy();
    // Not poisoned: the real votes are counted afterwards (C-10).
    expect(await count([voteFor(x!), voteFor(y!)])).toEqual(['accept', 'accept']);
    await waitFor(() => Promise.resolve(isFinal(x!) && isFinal(y!)), 5000, 'final');
  });

  it('counts a vote on the batch signature alone; singly, a bad own signature is refused', async () => {
    const [x] = await claims(1);
    const garbled = { ...voteFor(x!), signature: '00'.repeat(64) };
    expect(b.node.consensus.onVote(garbled)).toBe('reject');
    expect(await count([garbled])).toEqual(['accept']);
    expect((await b.node.ledger.submit(x!, { live: true })).finalized).toBe(true);
  });

  it('converge votes and weightless keys count as they do singly', async () => {
    const [x, y] = await claims(2);
    expect(await count([voteFor(x!, false), voteFor(y!, false)])).toEqual(['accept', 'accept']);
    expect((await b.node.ledger.submit(x!, { live: true })).finalized).toBeFalsy();
    const nobody = generateKeyPair();
    const s = hexToBytes(nobody.seed_hex);
    const theirs = [voteFor(x!, true, s, nobody.pub_key), voteFor(y!, true, s, nobody.pub_key)];
    expect(b.node.consensus.onVote(theirs[0]!)).toBe('ignore');
    expect(await count([theirs[1]!], (m) => signBytes(m, s))).toEqual(['ignore']);
    expect(isFinal(x!)).toBe(false);
  });
});
