import type { Vote } from '../protocol/vote.ts';
import { RecencyQueue } from '../recency-queue.ts';

export type SignedVote = Vote & { signature: string };

/** Remote votes for one block hash: representative address -> true once its vote is final. */
interface HashVotes {
  votes: Map<string, boolean>;
  /** When the first vote for the hash arrived (ms): a hash whose body stays unknown is a phantom. */
  since: number;
}

/**
 * Votes the duplicate filter remembers at most (each about 190 bytes: 200,000 held 37.5 MB of the
 * heap). Past it the oldest goes first, not the whole filter: cleared at once, it let through a
 * second copy of every vote still in flight, checked and relayed again as new.
 */
const MAX_SEEN_VOTES = 200_000;
/** Entries looked at per vote for having left the window: the work stays constant per vote. */
const SEEN_PRUNE_STEP = 4;
const MAX_VOTED_HASHES = 50_000;
/** Signed votes kept per election (for vote_request answers), and elections kept at once. */
const MAX_BALLOTS_PER_POSITION = 64;
const MAX_BALLOT_POSITIONS = 50_000;
/** Hashes given up on as phantoms, remembered so their votes do not start the pulls over (C-05). */
const MAX_ABANDONED = 8_192;
/** Voted hashes looked at per phantom scan. */
const PHANTOM_SCAN = 4_096;

/** The vote window the duplicate filter may forget past: a clock (ns) and the window's half-width. */
export interface VoteWindow {
  now: () => bigint;
  /** A vote whose timestamp is further than this from `now` is refused before the filter is asked. */
  windowNs: bigint;
}

/**
 * The votes this node has counted from the network, as plain bookkeeping (no ledger, no signatures:
 * Consensus verifies a vote and decides whether it counts before it comes here). Positions are
 * `account:previous`; representatives are addresses; every map is bounded.
 *
 * - One slot per representative and position (reference-behavior.md 2.2): a newer converge vote
 *   moves the representative's weight from the block it voted for before; a final vote never moves.
 * - The signed votes themselves are kept per position, to hand to peers that ask (vote_request).
 * - Duplicates are recognized by representative, hash and phase, with the newest timestamp seen.
 */
export class VoteBook {
  private readonly byHash = new Map<string, HashVotes>();
  /** `repPubKey:hash:phase` -> the newest timestamp counted. */
  private readonly seen = new Map<string, bigint>();
  /**
   * The keys of `seen`, least recently counted first, stamped with the timestamp counted (a key
   * counted again always has a newer one: an older copy is a duplicate).
   */
  private readonly seenOrder = new RecencyQueue<string, bigint>(
    (key) => this.seen.get(key),
    () => this.seen.size,
  );
  private readonly window: VoteWindow | undefined;
  /** Signed votes by position and representative key, as they travelled. */
  private readonly ballots = new Map<string, Map<string, SignedVote>>();
  /**
   * The hashes voted for and the positions with ballots, oldest first, for dropping the oldest at
   * their bounds (stamped with the entry itself). Taking the first key of the Maps instead walked the
   * slots V8 keeps for their deleted entries: 53-82 µs a vote with 52,000 elections open, 8-9 below
   * the bound (recency-queue.ts).
   */
  private readonly hashOrder = new RecencyQueue<string, HashVotes>(
    (hash) => this.byHash.get(hash),
    () => this.byHash.size,
  );
  private readonly ballotOrder = new RecencyQueue<string, Map<string, SignedVote>>(
    (position) => this.ballots.get(position),
    () => this.ballots.size,
  );
  /** The position the votes for a hash named, so a vote naming another is not counted. */
  private readonly positions = new Map<string, string>();
  private readonly abandoned = new Set<string>();
  /** When each representative's last counted vote arrived (ms). */
  private readonly lastVoteAt = new Map<string, number>();

  /**
   * With `window`, the duplicate filter forgets votes once their timestamps have left the vote
   * window: a copy the filter would refuse (no newer than the vote remembered) is then refused by
   * the window itself (unless the clock stepped back meanwhile: then it is counted again, as any
   * vote the bound pushed out). A node counting 100 votes a second holds 30,000 of them, not 200,000.
   */
  constructor(window?: VoteWindow) {
    this.window = window;
  }

  /** The newest timestamp counted for this representative, hash and phase. */
  lastSeen(repPubKey: string, hash: string, final: boolean): bigint | undefined {
    return this.seen.get(seenKey(repPubKey, hash, final));
  }

  /** Notes a copy as seen without counting it (a re-affirmed vote at a decided position). */
  markSeen(v: SignedVote): void {
    // The filter stays ordered by when each vote was last counted.
    const key = seenKey(v.rep_pub_key, v.block_hash, v.final);
    this.seen.set(key, v.timestamp);
    this.seenOrder.touch(key, v.timestamp);
    this.pruneSeen();
  }

  /** Drops the oldest entries: over the bound, and (a few per call) those past the vote window. */
  private pruneSeen(): void {
    const cutoff = this.window ? this.window.now() - this.window.windowNs : undefined;
    let aged = 0;
    for (;;) {
      const oldest = this.seenOrder.oldest();
      if (oldest === undefined) break;
      const over = this.seen.size > MAX_SEEN_VOTES;
      // In counting order, not timestamp order: an entry still in the window stops the pass, and
      // older ones behind it wait for a later one (or for the bound).
      const expired = cutoff !== undefined && this.seen.get(oldest)! < cutoff && aged < SEEN_PRUNE_STEP;
      if (!over && !expired) break;
      if (expired) aged += 1;
      this.seen.delete(oldest);
      this.seenOrder.shift();
    }
  }

  /** Votes the duplicate filter holds (diagnostics, tests). */
  get seenCount(): number {
    return this.seen.size;
  }

  isAbandoned(hash: string): boolean {
    return this.abandoned.has(hash);
  }

  /** The position votes for this hash named, if any were counted. */
  positionOf(hash: string): string | undefined {
    return this.positions.get(hash);
  }

  /** Notes that a representative with weight was heard from (for readiness's active weight). */
  heardFrom(rep: string): void {
    if (this.lastVoteAt.size >= MAX_VOTED_HASHES && !this.lastVoteAt.has(rep)) this.lastVoteAt.clear();
    this.lastVoteAt.set(rep, Date.now());
  }

  /** True when `rep` was heard from at or after `cutoffMs`. */
  heardSince(rep: string, cutoffMs: number): boolean {
    return (this.lastVoteAt.get(rep) ?? -Infinity) >= cutoffMs;
  }

  /**
   * Counts a verified vote of `rep` at `position`; false when it changes nothing: the
   * representative's slot there holds a final vote for another block, or a newer converge vote,
   * or this is a converge vote after its final one.
   */
  record(v: SignedVote, rep: string, position: string): boolean {
    const prior = this.ballots.get(position)?.get(v.rep_pub_key);
    if (prior && prior.block_hash !== v.block_hash) {
      if (prior.final || v.timestamp < prior.timestamp) return false;
      this.byHash.get(prior.block_hash)?.votes.delete(rep);
    }
    this.positions.set(v.block_hash, position);
    this.markSeen(v);
    this.keepBallot(position, v);
    let entry = this.byHash.get(v.block_hash);
    if (!entry) {
      if (this.byHash.size >= MAX_VOTED_HASHES) {
        this.forgetHash(this.hashOrder.oldest()!);
        this.hashOrder.shift();
      }
      this.byHash.set(v.block_hash, (entry = { votes: new Map(), since: Date.now() }));
      this.hashOrder.touch(v.block_hash, entry);
    }
    if (entry.votes.get(rep) === true && !v.final) return false;
    entry.votes.set(rep, v.final);
    return true;
  }

  /** Positions signed votes are kept for (diagnostics, tests). */
  get ballotPositions(): number {
    return this.ballots.size;
  }

  /** Keeps a representative's newest signed vote at a position (a final one is never replaced). */
  keepBallot(position: string, v: SignedVote): void {
    let at = this.ballots.get(position);
    if (!at) {
      if (this.ballots.size >= MAX_BALLOT_POSITIONS) {
        this.ballots.delete(this.ballotOrder.oldest()!);
        this.ballotOrder.shift();
      }
      this.ballots.set(position, (at = new Map()));
      this.ballotOrder.touch(position, at);
    }
    const prior = at.get(v.rep_pub_key);
    if (prior?.final && !v.final) return;
    if (!prior && at.size >= MAX_BALLOTS_PER_POSITION) return;
    at.set(v.rep_pub_key, v);
  }

  /** The signed votes kept at a position. */
  ballotsAt(position: string): Iterable<SignedVote> {
    return this.ballots.get(position)?.values() ?? [];
  }

  /** Representatives counted for a hash, with whether their vote is final. */
  votesFor(hash: string): Iterable<[string, boolean]> {
    return this.byHash.get(hash)?.votes ?? [];
  }

  /** Voted hashes, oldest first vote first, whose body `holds` says is missing, older than `olderThanMs`. */
  phantoms(olderThanMs: number, limit: number, holds: (hash: string) => boolean): string[] {
    const cutoff = Date.now() - olderThanMs;
    const out: string[] = [];
    // In order of their first vote, so the scan stops at the first young one; a bounded number of
    // lookups per call keeps a stuck network from making it costly.
    let budget = PHANTOM_SCAN;
    for (const [hash, entry] of this.byHash) {
      if (out.length >= limit || entry.since > cutoff || budget-- <= 0) break;
      if (!holds(hash)) out.push(hash);
    }
    return out;
  }

  /** Gives up on a phantom: its votes are forgotten and later ones for it ignored (C-05). */
  abandon(hash: string): void {
    const position = this.positions.get(hash);
    this.forgetHash(hash);
    if (position) {
      const at = this.ballots.get(position);
      for (const [k, vote] of at ?? []) if (vote.block_hash === hash) at!.delete(k);
      if (at?.size === 0) this.ballots.delete(position);
    }
    if (this.abandoned.size >= MAX_ABANDONED) this.abandoned.delete(this.abandoned.values().next().value!);
    this.abandoned.add(hash);
  }

  /** Forgets the votes for a hash. */
  forgetHash(hash: string): void {
    this.byHash.delete(hash);
    this.positions.delete(hash);
  }

  /** Forgets the signed votes kept at a position. */
  forgetPosition(position: string): void {
    this.ballots.delete(position);
  }

  /** Removes what is kept for positions `settled` says are decided; returns how many records went. */
  sweep(settled: (position: string) => boolean, onPosition: (position: string) => void): number {
    let swept = 0;
    for (const [hash, position] of this.positions) {
      if (!settled(position)) continue;
      this.forgetHash(hash);
      swept += 1;
    }
    for (const position of this.ballots.keys()) {
      if (!settled(position)) continue;
      this.ballots.delete(position);
      onPosition(position);
      swept += 1;
    }
    return swept;
  }
}

function seenKey(repPubKey: string, hash: string, final: boolean): string {
  return `${repPubKey}:${hash}:${final ? 1 : 0}`;
}
