import type { Vote } from '../protocol/vote.ts';
import { sha256Node } from '../fastpath/block-hash.ts';
import { encodeSignedVoteBatches } from '../protocol/vote-batch.ts';
import { everyTurn } from './flush-pacer.ts';

type SignedVote = Vote & { signature: string };

export interface VoteBatchOutlet {
  /** Publishes a batch-signed vote batch on its topic. */
  publish(data: Uint8Array): void;
  /** True while every connected peer takes batch-signed votes. */
  welcomes(): boolean;
  /** The way a vote goes where batch-signed ones are not taken (the single-signature batcher). */
  fallback(vote: SignedVote, weight: bigint): void;
}

/**
 * Gathers this node's own votes of one turn of the event loop (under a steady stream, of one gossip
 * window: net/flush-pacer.ts) into batch-signed messages
 * (protocol/vote-batch.ts, issue #18): receivers check one signature per batch instead of one per
 * vote. Only while every peer takes the format; otherwise, and for a lone vote (one signature
 * either way), each goes the single-signature way, as nodes that do not know the format expect.
 */
export class VoteBatchSigner {
  private readonly outlet: VoteBatchOutlet;
  private readonly repPubKey: string;
  private readonly sign: (message: Uint8Array) => Uint8Array;
  private readonly requestFlush: () => void;
  private queue: { vote: SignedVote; weight: bigint }[] = [];
  /** Batch-signed messages sent, the votes in them, and votes sent the single-signature way. */
  readonly sent = { batches: 0, batched_votes: 0, fallback: 0 };

  /** `requestFlush` asks for `flush` to be called (as for GossipBatcher); by default at the turn's end. */
  constructor(
    outlet: VoteBatchOutlet,
    repPubKey: string,
    sign: (message: Uint8Array) => Uint8Array,
    requestFlush?: () => void,
  ) {
    this.outlet = outlet;
    this.repPubKey = repPubKey;
    this.sign = sign;
    this.requestFlush = requestFlush ?? everyTurn(() => this.flush());
  }

  /** Queues a vote; false (not queued) when it is not this node's representative's. */
  add(vote: SignedVote, weight: bigint): boolean {
    if (vote.rep_pub_key !== this.repPubKey) return false;
    this.queue.push({ vote, weight });
    this.requestFlush();
    return true;
  }

  /** Signs and sends what is queued now; returns how many votes that was. */
  flush(): number {
    const items = this.queue;
    this.queue = [];
    if (items.length === 0) return 0;
    if (items.length === 1 || !this.outlet.welcomes()) {
      for (const it of items) this.outlet.fallback(it.vote, it.weight);
      this.sent.fallback += items.length;
      return items.length;
    }
    const batches = encodeSignedVoteBatches(this.repPubKey, items, this.sign, sha256Node);
    for (const b of batches) this.outlet.publish(b);
    this.sent.batches += batches.length;
    this.sent.batched_votes += items.length;
    return items.length;
  }
}
