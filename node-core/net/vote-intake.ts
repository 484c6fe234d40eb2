import type { VoteVerdict } from '../consensus/consensus.ts';
import type { AsyncVerifier } from '../ledger/ledger.ts';
import { hexToBytes } from '../protocol/hex.ts';
import { type Vote, voteMessage } from '../protocol/vote.ts';
import type { PreverifiedSignatures } from './preverified.ts';

type SignedVote = Vote & { signature: string };

export interface VoteIntakeDeps {
  consensus: { onVote(v: SignedVote): VoteVerdict };
  /** The verify pool (worker threads); without it consensus checks each signature itself. */
  verifier?: AsyncVerifier;
  preverified?: PreverifiedSignatures;
}

/**
 * Longest run of vote counting on the node's thread before it lets other work in (issue #18,
 * target 6: the thread is shared with the window). Counting a vote that finalizes a block costs a
 * few hundred µs with the write it schedules; a fixed count per slice (100) held the thread 35 ms.
 */
const SLICE_MS = 4;

/**
 * Many votes at once (a sync page's final votes, a gossiped batch): their signatures are checked
 * in the verify pool first, all together, and recorded as pre-verified, so consensus's own check on
 * the node's thread finds each one done (preverified.ts; a vote not recorded, or recorded with
 * other bytes, is checked as before). Then each is counted, in slices of at most SLICE_MS with a
 * turn of the event loop between. A verdict for each vote, in order.
 */
export async function countVotes(votes: SignedVote[], d: VoteIntakeDeps): Promise<VoteVerdict[]> {
  const { verifier, preverified } = d;
  if (verifier && preverified && votes.length > 0) {
    await Promise.all(
      votes.map(async (v) => {
        let sig: Uint8Array, msg: Uint8Array, pub: Uint8Array;
        try {
          sig = hexToBytes(v.signature, 64);
          msg = voteMessage(v);
          pub = hexToBytes(v.rep_pub_key, 32);
        } catch {
          return; // malformed: consensus refuses it on its own
        }
        if (await verifier.verify(sig, msg, pub)) preverified.add(sig, msg, pub);
      }),
    );
  }
  const out: VoteVerdict[] = [];
  let sliceStart = performance.now();
  for (const v of votes) {
    if (performance.now() - sliceStart >= SLICE_MS) {
      await new Promise((r) => setImmediate(r));
      sliceStart = performance.now();
    }
    out.push(d.consensus.onVote(v));
  }
  return out;
}
