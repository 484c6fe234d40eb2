import type { VoteVerdict } from '../consensus/consensus.ts';
import type { AsyncVerifier } from '../ledger/ledger.ts';
import { hexToBytes } from '../protocol/hex.ts';
import { type Vote, voteMessage } from '../protocol/vote.ts';
import { decodeSignedVoteBatch, type SignedVoteBatch, verifyVoteBatch } from '../protocol/vote-batch.ts';
import { sha256Node } from '../fastpath/block-hash.ts';
import { verifyBytesNode } from '../fastpath/ed25519.ts';
import type { PreverifiedSignatures } from './preverified.ts';

type SignedVote = Vote & { signature: string };

export interface VoteIntakeDeps {
  consensus: {
    onVote(v: SignedVote, authenticated?: boolean): VoteVerdict;
    worthChecking?(v: SignedVote): boolean;
  };
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

/** What a vote's own signature check takes, or undefined for a malformed vote. */
export function voteCheckBytes(
  v: SignedVote,
): { sig: Uint8Array; msg: Uint8Array; pub: Uint8Array } | undefined {
  try {
    return { sig: hexToBytes(v.signature, 64), msg: voteMessage(v), pub: hexToBytes(v.rep_pub_key, 32) };
  } catch {
    return undefined;
  }
}

/**
 * Many votes at once (a sync page's final votes, a gossiped batch): the signatures of the final
 * votes consensus will look at are checked in the verify pool first, all together, and recorded as
 * pre-verified, so consensus's own check on the node's thread finds each one done (preverified.ts;
 * a vote not recorded, or recorded with other bytes, is checked as before). Then each is counted,
 * in slices of at most SLICE_MS with a turn of the event loop between. A verdict for each vote, in
 * order.
 */
export async function countVotes(votes: SignedVote[], d: VoteIntakeDeps): Promise<VoteVerdict[]> {
  const slice = new Slicer();
  const { verifier, preverified } = d;
  if (verifier && preverified && votes.length > 0) {
    // Preparing the checks is sliced too: 500 votes' messages and keys took ~50 ms in one go.
    const checks: Promise<void>[] = [];
    for (const v of votes) {
      await slice.yieldIfDue();
      // Only final votes consensus will look at: a converge vote's budget (C-07) is charged as
      // consensus counts it, so converge votes are checked there, after the budget, as ever.
      if (!v.final || d.consensus.worthChecking?.(v) === false) continue;
      const bytes = voteCheckBytes(v);
      if (bytes === undefined) continue; // malformed: consensus refuses it on its own
      const { sig, msg, pub } = bytes;
      checks.push(
        verifier.verify(sig, msg, pub).then((ok) => {
          if (ok) preverified.add(sig, msg, pub);
        }),
      );
    }
    await Promise.all(checks);
    slice.restart();
  }
  return countChecked(votes, d, slice, false);
}

async function countChecked(
  votes: SignedVote[],
  d: VoteIntakeDeps,
  slice: Slicer,
  authenticated: boolean,
): Promise<VoteVerdict[]> {
  const out: VoteVerdict[] = [];
  for (const v of votes) {
    await slice.yieldIfDue();
    out.push(d.consensus.onVote(v, authenticated));
  }
  return out;
}

/**
 * A batch-signed vote batch (protocol/vote-batch.ts): its one signature is checked (in the verify
 * pool when there is one), then its votes are counted exactly as the same votes arriving singly,
 * minus each one's own signature check: the same duplicate, window, budget (C-07), weight, position
 * and conflict rules in consensus. A bad batch signature counts none of them: undefined.
 */
export async function countVoteBatch(
  batch: SignedVoteBatch,
  d: VoteIntakeDeps,
): Promise<VoteVerdict[] | undefined> {
  const ok = d.verifier
    ? await d.verifier.verify(batch.signature, batch.message, hexToBytes(batch.rep_pub_key, 32))
    : verifyVoteBatch(batch, verifyBytesNode);
  if (!ok) return undefined;
  return countChecked(batch.votes, d, new Slicer(), true);
}

/**
 * Batch-signed vote batches as a sync peer sends them (base64 strings, `final_votes` with
 * `batches`), each counted by countVoteBatch. One that is not a string, not base64 of a well-formed
 * batch or whose batch signature fails counts nothing and is skipped: the votes it held are asked
 * of the next peer as any missing vote is. The number of votes counted.
 */
export async function countEncodedVoteBatches(encoded: unknown[], d: VoteIntakeDeps): Promise<number> {
  let counted = 0;
  for (const e of encoded) {
    if (typeof e !== 'string') continue;
    let batch: SignedVoteBatch;
    try {
      batch = decodeSignedVoteBatch(Buffer.from(e, 'base64'), sha256Node);
    } catch {
      continue;
    }
    counted += (await countVoteBatch(batch, d))?.length ?? 0;
  }
  return counted;
}

/** Runs of work on the node's thread of at most SLICE_MS, with a turn of the event loop between. */
export class Slicer {
  private start = performance.now();

  restart(): void {
    this.start = performance.now();
  }

  /** Resolves at once within the slice; past it, after a turn of the event loop. */
  async yieldIfDue(): Promise<void> {
    if (performance.now() - this.start < SLICE_MS) return;
    await new Promise((r) => setImmediate(r));
    this.start = performance.now();
  }
}
