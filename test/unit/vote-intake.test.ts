import { describe, expect, it } from 'vitest';
import { PreverifiedSignatures } from '../../node-core/net/preverified.ts';
import { countVotes } from '../../node-core/net/vote-intake.ts';
import type { Vote } from '../../node-core/protocol/vote.ts';

type SignedVote = Vote & { signature: string };

const vote = (i: number, final: boolean): SignedVote => ({
  rep_pub_key: 'aa'.repeat(32),
  block_hash: i.toString(16).padStart(64, '0'),
  account: 'bb'.repeat(32),
  previous: '0',
  timestamp: 1n,
  final,
  signature: 'cc'.repeat(64),
});

describe('counting many votes', () => {
  it('checks ahead only the final votes consensus will look at; converge votes wait for their budget (C-07)', async () => {
    const checked: string[] = [];
    const counted: string[] = [];
    const votes = [vote(1, true), vote(2, false), vote(3, true), vote(4, false)];
    const verdicts = await countVotes(votes, {
      consensus: {
        // Vote 3 is a duplicate: consensus would set it aside before any signature work.
        worthChecking: (v) => v.block_hash !== vote(3, true).block_hash,
        onVote: (v) => {
          counted.push(v.block_hash);
          return v.final ? 'accept' : 'ignore';
        },
      },
      verifier: {
        verify: (_s, msg) => {
          checked.push(Buffer.from(msg.subarray(33, 65)).toString('hex'));
          return Promise.resolve(true);
        },
      },
      preverified: new PreverifiedSignatures(),
    });
    expect(checked).toEqual([vote(1, true).block_hash]);
    expect(counted).toEqual(votes.map((v) => v.block_hash));
    expect(verdicts).toEqual(['accept', 'ignore', 'accept', 'ignore']);
  });

  it('counts in slices: other work runs between them', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const slow = (v: SignedVote) => {
      const end = performance.now() + 1;
      while (performance.now() < end);
      return v.final ? ('accept' as const) : ('ignore' as const);
    };
    await countVotes(
      Array.from({ length: 40 }, (_, i) => vote(i, true)),
      { consensus: { onVote: slow } },
    );
    clearInterval(timer);
    // 40 ms of counting in slices of at most 4 ms: the timer ran between them.
    expect(ticks).toBeGreaterThanOrEqual(5);
  });
});
