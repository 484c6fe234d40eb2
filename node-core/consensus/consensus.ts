import { ZERO_HASH } from '../protocol/block.ts';
import { signVote, verifyVote, type Vote } from '../protocol/vote.ts';
import { addressFromPublicKey, signBytes, type Verifier } from '../protocol/keys.ts';
import { encodeSignedVoteBatches, type Sha256 } from '../protocol/vote-batch.ts';
import { LedgerError } from '../ledger/errors.ts';
import type { CommittedBlock, Ledger, SignedBlock } from '../ledger/ledger.ts';
import type { AccountRecord } from '../ledger/records.ts';
import type { WeightLookup, WeightView } from '../ledger/rep-weights.ts';
import type { RepresentativePolicy } from '../statechain/sys.ts';
import type { StateChain } from '../statechain/statechain.ts';
import { BlockCache } from './block-cache.ts';
import { RedriveSchedule } from './redrive-schedule.ts';
import { type SignedVote, VoteBook } from './vote-book.ts';
import { VoteThrottle, type VoteThrottleOptions } from './vote-throttle.ts';
import {
  type Eligibility,
  eligibility,
  eligibleCount,
  eligibleWeights,
  type EligibleWeights,
  hasQuorum,
  weightOf,
} from './weights.ts';

/**
 * Finality by representative votes (reference-behavior.md section 2, decisions D8).
 *
 * Every committed block opens an election at its chain position. A representative votes for a block
 * once its dependencies are final (the previous block of its chain and, for a receive, the source
 * send): first a converge vote, then, when converge votes reach the quorum of 67% of eligible
 * delegated weight, a final vote; the block is final when final votes reach the quorum. Heights only
 * rise and finalized history has no gaps.
 *
 * The tally is written for many representatives. On a network where this node's representative
 * holds the quorum on its own (a development network), its own votes finalize each block at once.
 * Votes are signed only when there is somewhere to send them (a network attached as `sink`).
 */
export interface LocalRepresentative {
  seed: Uint8Array;
  pubKey: string;
  address: string;
}

export type { SignedVote };

export interface VoteSink {
  broadcast(vote: SignedVote, weight: bigint): void;
}

export type VoteVerdict = 'accept' | 'reject' | 'ignore';

/** Votes further than this from the node clock are not counted (reference-behavior.md 2.2). */
export const VOTE_WINDOW_NS = 300_000_000_000n;
/** A finalized position answers at most this many laggard votes (C-08), so answers cannot ping-pong. */
const MAX_ANSWERS_PER_POSITION = 3;
const MAX_ANSWERED_POSITIONS = 50_000;
/** Final votes signed on request are reused this long (and this many are kept). */
const RECENT_FINAL_MS = 1_000;
const MAX_RECENT_FINALS = 10_000;
/** A winner whose promotion failed deterministically is passed over this long (2.3 point 5). */
const QUARANTINE_MS = 30_000;
const MAX_QUARANTINED = 50_000;

/**
 * Timings of the liveness loops (reference-behavior.md 2.3 points 3 and 7); injectable so tests can
 * run them in a fraction of a second.
 */
export interface ConsensusTiming {
  /** The local representative re-sends its vote at unresolved positions this often (default 15 s). */
  reaffirmMs?: number;
  /** After this long without a quorum, more than half of the weight decides (default 10 s). */
  fallbackMs?: number;
  /** A finalized position answers a laggard's vote at most this often (default 5 s). */
  answerEveryMs?: number;
  /** Records of positions finalized meanwhile are swept this often (default 30 s). */
  lingerSweepMs?: number;
  /**
   * At a contested position, no final vote until this long after the last new candidate appeared
   * (default 3 s; reference-behavior.md 2.3 (a), C-09).
   */
  stabilityMs?: number;
}

export interface ConsensusDeps {
  ledger: Ledger;
  statechain: StateChain;
  localRep?: LocalRepresentative;
  sink?: VoteSink;
  now: () => bigint;
  /** Signature check of remote votes (node:crypto's in the node). */
  verify?: Verifier;
  /** Signer of this node's votes (node:crypto's in the node). */
  sign?: (message: Uint8Array, seed: Uint8Array) => Uint8Array;
  onError?: (err: unknown) => void;
  timing?: ConsensusTiming;
  /** The per-election converge-vote throttle (C-07). */
  throttle?: VoteThrottleOptions;
}

/** One candidate's election; its voters are counted afresh each time (votes can move, 2.2). */
interface Tally {
  hash: string;
  /** When the election opened (ms), for the fallback rule. */
  since: number;
  account: string;
  previous: string;
}

/**
 * The local representative's vote slot at an unresolved position (one per position, 2.2): a converge
 * vote moves with the preference; a final vote is the commit-lock and never moves. Re-affirmed until
 * the position resolves.
 */
interface OwnVote {
  hash: string;
  account: string;
  previous: string;
  final: boolean;
}

/**
 * After this long without a quorum, a position may lock and finalize with more than half of the
 * eligible weight (reference-behavior.md 2.3, the finality wall C-01): a network that lost some of
 * its representatives keeps finalizing as long as a majority votes.
 */
export const FALLBACK_MS = 10_000;
const SWEEP_MS = 1_000;
/** The stalled-election schedule's resolution: how late a fallback or stability deadline may act. */
const REDRIVE_TICK_MS = 250;
/** A stalled election is looked at again at least this often (for weights drifting toward a quorum). */
const MAX_REDRIVE_BACKOFF_MS = 8_000;
/** Open positions re-affirmed in one turn of the event loop (about 50 µs each). */
const REAFFIRM_SLICE = 200;

export interface FinalityStats {
  finality_advances: number;
  /**
   * Of those, blocks made final in the write that applied them (finalOnApply): the rest took a
   * second write. On a node without votes of its own, it shows whether the votes came with the blocks.
   */
  final_on_apply: number;
  last_finality_ns: bigint;
  /** Votes this node's representative re-sent with a fresh timestamp (C-08). */
  votes_reaffirmed: number;
  /** Laggard votes for finalized positions answered with this node's final vote (C-08). */
  laggards_answered: number;
  /** Election and vote records removed because their position was finalized meanwhile (C-14). */
  records_swept: number;
  /** Phantom hashes given up on (C-05). */
  phantoms_dropped: number;
}

export class Consensus {
  private readonly ledger: Ledger;
  private readonly sc: StateChain;
  private readonly localRep: LocalRepresentative | undefined;
  private sink: VoteSink | undefined;
  private readonly verify: Verifier | undefined;
  private readonly sign: ((message: Uint8Array, seed: Uint8Array) => Uint8Array) | undefined;
  /** The network's votes as counted here: slots, signed copies, duplicates, phantoms. */
  private readonly book = new VoteBook({ now: () => this.now(), windowNs: VOTE_WINDOW_NS });
  /** Addresses of the representative keys votes came from. */
  private readonly repAddresses = new Map<string, string>();
  /** Blocks on chain as consensus reads them, decoded once (block-cache.ts). */
  private readonly blocks: BlockCache;
  /** The local representative's vote slot by position `account:previous`. */
  private readonly own = new Map<string, OwnVote>();
  /** Finalized positions that answered laggards: answers given and when the last one went (ms). */
  private readonly answered = new Map<string, { count: number; at: number }>();
  /** Final votes signed on request, by hash, with when they were signed (ms). */
  private readonly recentFinals = new Map<string, { vote: SignedVote; at: number }>();
  private readonly throttle: VoteThrottle;
  private readonly reaffirmMs: number;
  private readonly fallbackMs: number;
  private readonly answerEveryMs: number;
  private readonly lingerSweepMs: number;
  /** Staged winners being swapped in. */
  private readonly resolving = new Set<string>();
  /** When a position last gained a held candidate (ms), for the stability window. */
  private readonly candidateAt = new Map<string, number>();
  /**
   * When each block not final on apply was committed here (ms), by `account:height`: where its
   * position is uncontested, its fallback delay runs from then (see electionStart).
   */
  private readonly appliedAt = new Map<string, number>();
  /** Winners whose promotion failed deterministically, passed over until the time given (ms). */
  private readonly quarantine = new Map<string, number>();
  /**
   * Positions (`account:height`) whose winner by final votes could not be promoted: the block on
   * chain there, promotable by being applied, is finalized in its place (2.3 point 5).
   */
  private readonly substituted = new Set<string>();
  private readonly stabilityMs: number;
  private readonly now: () => bigint;
  private readonly onError: (err: unknown) => void;
  /** Heights decided final in memory, not yet written (account -> height). */
  private readonly decided = new Map<string, number>();
  /** Open elections by position key `account:height`. */
  private readonly tallies = new Map<string, Tally>();
  /** Accounts waiting for another account's finality (a receive's source). */
  private readonly waiters = new Map<string, Set<string>>();
  /** Accounts whose election stalled, each looked at again when it is due (redrive-schedule.ts). */
  private readonly stalled = new RedriveSchedule({
    tickMs: REDRIVE_TICK_MS,
    backoffMs: SWEEP_MS,
    maxBackoffMs: MAX_REDRIVE_BACKOFF_MS,
  });
  private queue = new Map<string, number>();
  private flushing: Promise<void> | undefined;
  /** The eligibility of the committed weights, with the view, version and policy it was taken of. */
  private weightsCache:
    { view: WeightView; version: number; policy: RepresentativePolicy; e: Eligibility } | undefined;
  private running = false;
  private sweeper: NodeJS.Timeout | undefined;
  private reaffirmer: NodeJS.Timeout | undefined;
  /** A re-affirmation pass is under way (it runs in slices). */
  private reaffirming = false;
  private lingerSweeper: NodeJS.Timeout | undefined;
  readonly stats: FinalityStats = {
    finality_advances: 0,
    final_on_apply: 0,
    last_finality_ns: 0n,
    votes_reaffirmed: 0,
    laggards_answered: 0,
    records_swept: 0,
    phantoms_dropped: 0,
  };

  constructor(deps: ConsensusDeps) {
    this.ledger = deps.ledger;
    this.blocks = new BlockCache(deps.ledger);
    this.sc = deps.statechain;
    this.localRep = deps.localRep;
    this.sink = deps.sink;
    this.verify = deps.verify;
    this.sign = deps.sign;
    this.now = deps.now;
    this.onError = deps.onError ?? (() => {});
    this.throttle = new VoteThrottle(deps.throttle);
    this.reaffirmMs = deps.timing?.reaffirmMs ?? 15_000;
    this.fallbackMs = deps.timing?.fallbackMs ?? FALLBACK_MS;
    this.answerEveryMs = deps.timing?.answerEveryMs ?? 5_000;
    this.lingerSweepMs = deps.timing?.lingerSweepMs ?? 30_000;
    this.stabilityMs = deps.timing?.stabilityMs ?? 3_000;
  }

  /** Converge votes dropped by the per-election throttle (C-07). */
  get votesThrottled(): number {
    return this.throttle.dropped;
  }

  /** Positions signed votes are kept for, this node's own included (diagnostics, tests). */
  get heldBallotPositions(): number {
    return this.book.ballotPositions;
  }

  /** Attaches the network: from now on the local representative's votes are signed and sent. */
  setSink(sink: VoteSink): void {
    this.sink = sink;
  }

  /**
   * A vote from the network. Its signature is checked before anything is remembered of it (a forged
   * vote must not poison the duplicate filter, reference-behavior.md 9.2 C-10); it counts with the
   * representative's current eligible weight; a vote for a block not yet known is kept until the
   * block arrives. Converge votes over their representative's budget in the election are dropped
   * before any signature work (C-07); final votes never are. A laggard's vote for a position this
   * node has finalized is answered with this node's final vote there (C-08). `authenticated`: the
   * vote came in a batch whose one signature by its representative was checked (protocol/vote-batch.ts),
   * so its own signature is not checked again; everything else is as for a single vote.
   */
  onVote(v: SignedVote, authenticated = false): VoteVerdict {
    const admitted = this.admit(v);
    if (admitted === undefined) return 'ignore';
    const { last, position } = admitted;
    if (!authenticated && !verifyVote(v, this.verify)) return 'reject';
    // Charged only once verified, so forged votes cannot spend a real representative's budget.
    if (!v.final) this.throttle.charge(v.rep_pub_key, position);
    const rep = this.repAddress(v.rep_pub_key);
    if (this.weights().weight(rep) === 0n) return 'ignore';
    this.book.heardFrom(rep);
    const settled = this.settledAtPosition(v.account, v.previous === '0' ? ZERO_HASH : v.previous);
    if (settled !== undefined) this.answerLaggard(position, settled, v, last !== undefined);
    // One for the wrong position is not counted (C-13).
    const onChain = this.blocks.get(v.block_hash);
    const held = onChain?.block ?? this.ledger.stagedBlock(v.block_hash)?.block;
    if (held && position !== `${held.account}:${held.previous}`) return 'ignore';
    const known = this.book.positionOf(v.block_hash);
    if (known !== undefined && known !== position) return 'ignore';
    if (settled !== undefined && last !== undefined) {
      // A re-affirmed vote at a decided position: answered above, nothing left to count or relay.
      this.book.markSeen(v);
      return 'ignore';
    }
    // Remembered only once it counts: neither a forged nor a misplaced vote can shadow a real one.
    // One slot per representative and position: a final vote never moves, a newer converge one does.
    if (!this.book.record(v, rep, position)) return 'ignore';
    const b = onChain;
    const written = b && this.ledger.finalHeightOf(b.block.account) >= b.height;
    if (b && !written && this.running) this.drive(b.block.account);
    else if (!b && this.running) this.considerStaged(v.block_hash);
    // A re-affirmed vote (fresher copy of one already counted) is relayed for nodes that missed it.
    return 'accept';
  }

  /** A representative's address from its key, derived once per key (a hash per vote otherwise). */
  private repAddress(pubKey: string): string {
    let a = this.repAddresses.get(pubKey);
    if (a === undefined) {
      a = addressFromPublicKey(pubKey);
      if (this.repAddresses.size >= 4096) this.repAddresses.clear();
      this.repAddresses.set(pubKey, a);
    }
    return a;
  }

  /**
   * False when onVote sets a vote aside before any signature work: an exact duplicate or a replay
   * of an older copy, a timestamp outside the window, a vote for an abandoned phantom, a converge
   * vote over its representative's budget in the election (C-07). Callers that check signatures
   * ahead of onVote (net/vote-intake.ts) ask first, so no one can buy signature work this way.
   */
  worthChecking(v: SignedVote): boolean {
    return this.admit(v) !== undefined;
  }

  /**
   * worthChecking's question, answered with what onVote goes on with: the newest copy of the vote
   * counted before (undefined: none) and the vote's position; undefined when it is set aside.
   */
  private admit(v: SignedVote): { last: bigint | undefined; position: string } | undefined {
    const last = this.book.lastSeen(v.rep_pub_key, v.block_hash, v.final);
    if (last !== undefined && v.timestamp <= last) return undefined;
    const now = this.now();
    if (v.timestamp > now + VOTE_WINDOW_NS || v.timestamp < now - VOTE_WINDOW_NS) return undefined;
    if (this.book.isAbandoned(v.block_hash) && !this.holds(v.block_hash)) return undefined;
    // A vote names its block's chain position (account:previous): the election it belongs to.
    const position = `${v.account}:${v.previous === '0' ? ZERO_HASH : v.previous}`;
    if (!v.final && !this.throttle.allows(v.rep_pub_key, position)) return undefined;
    return { last, position };
  }

  /**
   * The hash finalized at a position (`account:previous`), or undefined while it is open here. A
   * decided height not yet written counts as finalized.
   */
  private finalizedAt(position: string): string | undefined {
    const [account, previous] = position.split(':') as [string, string];
    return this.settledAtPosition(account, previous);
  }

  /**
   * finalizedAt for a position given as its account and `previous` (in full, zeros for an opening
   * block): onVote has them apart, and splitting the position again cost a vote two strings.
   *
   * A vote names its block's parent, which is nearly always the chain's frontier (the vote came
   * before its block) or the block under it: found by the account record and one index read.
   * Reading the parent block itself cost a receiving node ~40 µs per vote in the three-node
   * benchmark (issue #18); any other block goes through the block cache as before.
   */
  private settledAtPosition(account: string, previous: string): string | undefined {
    if (previous === ZERO_HASH) return this.settledAt(account, 1);
    const acct = this.ledger.accountHead(account);
    if (!acct) return undefined;
    if (acct.frontier === previous) return this.settledAt(account, acct.height + 1);
    if (acct.height > 1 && this.ledger.hashIsAt(account, acct.height - 1, previous))
      return this.settledAt(account, acct.height);
    const parent = this.blocks.get(previous);
    return parent && parent.block.account === account
      ? this.settledAt(account, parent.height + 1)
      : undefined;
  }

  /** The hash at `height` of `account`'s chain if that height is final here (or decided), else undefined. */
  private settledAt(account: string, height: number): string | undefined {
    return height > this.finalHeight(account) ? undefined : this.ledger.hashAt(account, height);
  }

  /**
   * A vote at a position finalized here may come from a node that has not finalized it (it missed
   * the votes): such a node gets this node's final vote for the finalized block, published so every
   * laggard hears it. Its signs are a vote for another block there (it prefers a loser) or a
   * re-affirmed copy of a vote (it is still waiting); a first copy of a vote for the finalized block
   * is ordinary traffic that crossed the decision and is not answered, so a healthy network pays
   * nothing. Answers per position are spaced and capped, so two finalized nodes cannot keep
   * answering each other and one vote cannot be amplified into many.
   */
  private answerLaggard(position: string, settled: string, v: SignedVote, repeat: boolean): void {
    if (v.block_hash === settled && !repeat) return;
    const sink = this.sink;
    if (!sink) return;
    const nowMs = Date.now();
    const a = this.answered.get(position);
    if (a && (a.count >= MAX_ANSWERS_PER_POSITION || nowMs - a.at < this.answerEveryMs)) return;
    const answer = this.finalVoteFor(settled);
    if (!answer) return;
    if (a) {
      a.count += 1;
      a.at = nowMs;
    } else {
      if (this.answered.size >= MAX_ANSWERED_POSITIONS) this.answered.clear();
      this.answered.set(position, { count: 1, at: nowMs });
    }
    this.stats.laggards_answered += 1;
    sink.broadcast(answer.vote, answer.weight);
  }

  /**
   * The signed votes this node holds for an election (`vote_request`, C-14): what it kept from the
   * network and its own representative's latest vote there; at a position finalized here, a fresh
   * final vote for the finalized block first. At most `limit` votes.
   */
  votesAt(account: string, previous: string, limit = 32): { vote: SignedVote; weight: bigint }[] {
    const position = `${account}:${previous === '0' ? ZERO_HASH : previous}`;
    const out: { vote: SignedVote; weight: bigint }[] = [];
    const settled = this.finalizedAt(position);
    const mine = settled !== undefined ? this.finalVoteFor(settled) : undefined;
    if (mine) out.push(mine);
    const w = this.weights();
    for (const vote of this.book.ballotsAt(position)) {
      if (out.length >= limit) break;
      if (mine && vote.rep_pub_key === mine.vote.rep_pub_key) continue;
      const weight = w.weight(addressFromPublicKey(vote.rep_pub_key));
      if (weight > 0n) out.push({ vote, weight });
    }
    return out;
  }

  /**
   * Elections open here for longer than `olderThanMs` (past the fallback: votes were probably
   * missed), oldest first, for pulling votes from peers.
   */
  stalledElections(olderThanMs: number, limit = 16): { account: string; previous: string }[] {
    const cutoff = Date.now() - olderThanMs;
    const out: { account: string; previous: string; since: number }[] = [];
    const seen = new Set<string>();
    for (const t of this.tallies.values()) {
      const pos = `${t.account}:${t.previous}`;
      if (t.since > cutoff || seen.has(pos)) continue;
      seen.add(pos);
      out.push({ account: t.account, previous: t.previous === ZERO_HASH ? '0' : t.previous, since: t.since });
    }
    return out
      .sort((a, b) => a.since - b.since)
      .slice(0, limit)
      .map(({ account, previous }) => ({ account, previous }));
  }

  /** Voted hashes whose block this node has not seen for longer than `olderThanMs` (phantoms). */
  phantoms(olderThanMs: number, limit = 64): string[] {
    return this.book.phantoms(olderThanMs, limit, (hash) => this.holds(hash));
  }

  /**
   * Gives up on a phantom (no peer could supply its block): its votes are forgotten, and later
   * votes for it are ignored, so it cannot be pulled for ever (C-05).
   */
  abandonPhantom(hash: string): void {
    if (this.holds(hash)) return;
    this.book.abandon(hash);
    this.stats.phantoms_dropped += 1;
  }

  /**
   * True when this node has the block's body, on chain or staged as a conflict candidate. An index
   * lookup: the phantom scan asks this of up to 4,096 voted hashes every 5 s, and reading each block
   * through the block cache (2,048 held) took 49-90 ms a scan, evicting what consensus had cached;
   * 8-12 ms this way (scratch, 20,000 blocks).
   */
  private holds(hash: string): boolean {
    return this.ledger.hasBlock(hash) || this.ledger.stagedBlock(hash) !== undefined;
  }

  /** The newest timestamp seen on a representative's vote (tests, diagnostics). */
  lastVoteTimestamp(repPubKey: string, hash: string, final: boolean): bigint | undefined {
    return this.book.lastSeen(repPubKey, hash, final);
  }

  /**
   * Representatives whose votes for a block this node has seen; with the block's position, this
   * node's own representative's too.
   */
  votersFor(hash: string, at?: { account: string; previous: string }): string[] {
    const voters = new Set([...this.book.votesFor(hash)].map(([rep]) => rep));
    // This node's own representative votes through `own` (by position), not through the book.
    const rep = this.localRep;
    if (rep && at && this.own.get(`${at.account}:${at.previous}`)?.hash === hash) voters.add(rep.address);
    return [...voters];
  }

  /**
   * A staged conflict candidate whose final votes reach the quorum wins its position: the ledger
   * swaps it in (undoing the sibling and what was built on it), then it is finalized as usual.
   */
  private considerStaged(hash: string): void {
    const st = this.ledger.stagedBlock(hash);
    if (!st || this.resolving.has(hash)) return;
    const w = this.weights();
    const finals = [...this.book.votesFor(hash)].filter(([, final]) => final).map(([rep]) => rep);
    if (hasQuorum(weightOf(new Set(finals), w), w.total)) this.swapIn(st.block.account, st.height, hash);
    // Otherwise this node's own representative may still have to vote in the conflict.
    else this.drive(st.block.account);
  }

  /**
   * This node's representative's final votes on `hashes` (finalVoteFor each; a block not final here
   * has none) as batch-signed vote batches (protocol/vote-batch.ts encodeSignedVoteBatches): a node
   * catching up checks one signature per batch instead of one per vote (issue #18: a catch-up of
   * 100,000 blocks cost the joining node 280 µs a block, 211-214 with). Empty when this node
   * represents no weight. `digest` is SHA-256 (the node passes node:crypto's).
   */
  finalVoteBatches(hashes: string[], digest?: Sha256): Uint8Array[] {
    const rep = this.localRep;
    if (!rep) return [];
    // A hash asked twice gets one vote (its copy would only start another batch).
    const votes = [...new Set(hashes)].flatMap((h) => this.finalVoteFor(h) ?? []);
    return encodeSignedVoteBatches(rep.pubKey, votes, (m) => (this.sign ?? signBytes)(m, rep.seed), digest);
  }

  /**
   * A freshly signed final vote of this node's representative for a block it holds as final (for a
   * peer catching up on history whose votes it missed); undefined when there is none to give.
   */
  finalVoteFor(hash: string): { vote: Vote & { signature: string }; weight: bigint } | undefined {
    const rep = this.localRep;
    if (!rep) return undefined;
    const weight = this.weights().weight(rep.address);
    if (weight === 0n) return undefined;
    const b = this.ledger.getBlock(hash);
    if (!b?.finalized) return undefined;
    // Peers' requests (vote_request, final_votes) trigger these signatures: one signed in the last
    // second is reused, so requests cannot make this node sign without bound.
    const nowMs = Date.now();
    const cached = this.recentFinals.get(hash);
    if (cached && nowMs - cached.at < RECENT_FINAL_MS) return { vote: cached.vote, weight };
    const vote: Vote = {
      rep_pub_key: rep.pubKey,
      block_hash: hash,
      account: b.block.account,
      previous: b.block.previous === ZERO_HASH ? '0' : b.block.previous,
      timestamp: this.now(),
      final: true,
    };
    const signed = signVote(vote, rep.seed, this.sign);
    if (this.recentFinals.size >= MAX_RECENT_FINALS) this.recentFinals.clear();
    this.recentFinals.set(hash, { vote: signed, at: nowMs });
    return { vote: signed, weight };
  }

  /** Subscribes to commits and re-drives every account left unfinalized by a previous run. */
  start(unfinalized: Iterable<string>): void {
    this.running = true;
    // Liveness: stalled elections are looked at again when due, so the fallback rule can apply
    // without waiting for the next block.
    this.sweeper = setInterval(() => {
      for (const a of this.stalled.takeDue(Date.now())) this.drive(a);
    }, REDRIVE_TICK_MS);
    this.sweeper.unref();
    this.reaffirmer = setInterval(() => this.reaffirm(), this.reaffirmMs);
    this.reaffirmer.unref();
    this.lingerSweeper = setInterval(() => this.sweepLingering(), this.lingerSweepMs);
    this.lingerSweeper.unref();
    this.ledger.onCommitted((batch) => this.onCommitted(batch));
    // A new candidate restarts the stability window at its position; one staged after its votes
    // arrived may already have won.
    this.ledger.onStaged((hash) => {
      const st = this.ledger.stagedBlock(hash);
      if (st) this.candidateAt.set(`${st.block.account}:${st.block.previous}`, Date.now());
      this.considerStaged(hash);
    });
    // Commit-locks survive restarts: this representative's final votes stay where they were cast.
    for (const [position, hash] of this.ledger.voteLocks()) {
      const at = position.lastIndexOf(':');
      this.own.set(position, {
        hash,
        account: position.slice(0, at),
        previous: position.slice(at + 1),
        final: true,
      });
    }
    this.ledger.setInlineFinality((block, before, weights) => this.finalOnApply(block, before, weights));
    for (const account of unfinalized) this.drive(account);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.reaffirmer) clearInterval(this.reaffirmer);
    if (this.lingerSweeper) clearInterval(this.lingerSweeper);
    await this.flushing;
  }

  /**
   * Eligible weight of the representatives heard from within `withinMs` (default 10 minutes; this
   * node's own counts while it has weight): what `/ready` can count on for a quorum.
   */
  activeWeight(withinMs = 600_000): { weight: bigint; reps: number } {
    const cutoff = Date.now() - withinMs;
    let weight = 0n;
    let reps = 0;
    const e = this.weights();
    for (const [rep] of this.ledger.repWeightView().entries()) {
      const w = e.weight(rep);
      if (w <= 0n) continue;
      if (rep !== this.localRep?.address && !this.book.heardSince(rep, cutoff)) continue;
      weight += w;
      reps += 1;
    }
    return { weight, reps };
  }

  /**
   * Eligible weight of the committed weights, asked with every vote: taken again only when a commit
   * moved weight or the policy changed (under an allowlist that is a pass over the allowlist).
   */
  weights(): Eligibility {
    const view = this.ledger.repWeightView();
    const policy = this.sc.representatives;
    const c = this.weightsCache;
    if (c?.view === view && c.version === view.version && c.policy === policy) return c.e;
    const e = eligibility(view, policy);
    this.weightsCache = { view, version: view.version, policy, e };
    return e;
  }

  /** How many representatives count now (GET /node, readiness). */
  eligibleReps(): number {
    return eligibleCount(this.ledger.repWeightView(), this.sc.representatives);
  }

  /** Every representative's weight, eligible or not (GET /delegation): a pass over all of them. */
  weightListing(): EligibleWeights {
    return eligibleWeights(this.ledger.repWeightView(), this.sc.representatives);
  }

  /**
   * A block is final the moment it is applied when the block's dependencies are final already (the
   * previous block of its chain and, for a receive, the source send) and either this node's
   * representative alone holds the quorum (its converge and final votes would decide at once) or,
   * on a node with no vote to give, final votes reaching the quorum came before the block did
   * (gossip carries a block and its representatives' votes side by side; issue #18): what drive
   * would decide right after the commit, decided in the commit's own write instead of a second.
   */
  private finalOnApply(
    block: SignedBlock,
    before: AccountRecord | undefined,
    weights: () => WeightLookup,
  ): boolean {
    if (!this.running) return false;
    if (before && before.final_height < before.height) return false;
    const w = eligibility(weights(), this.sc.representatives);
    const mine = this.localRep ? w.weight(this.localRep.address) : 0n;
    // A representative with weight but short of the quorum takes part in the election (its votes,
    // its commit-lock): only a node that has no vote to give finalizes on others' votes here.
    if (
      !hasQuorum(mine, w.total) &&
      !(mine === 0n && this.finalVotesHeld(block, (before?.height ?? 0) + 1, w))
    )
      return false;
    if (block.type === 'receive' && block.source) {
      const src = this.ledger.getBlock(block.source);
      if (!src?.finalized) return false;
    }
    return true;
  }

  /**
   * Final votes counted here for `block` at its position reach the quorum (with the weights as the
   * block leaves them, as drive would count them after the commit). Not at a contested position:
   * there the election decides as usual.
   */
  private finalVotesHeld(block: SignedBlock, height: number, w: Eligibility): boolean {
    const hash = block.hash;
    const position = `${block.account}:${block.previous}`;
    if (this.book.positionOf(hash) !== position || this.own.has(position)) return false;
    const finals = new Set<string>();
    for (const [voter, isFinal] of this.book.votesFor(hash)) if (isFinal) finals.add(voter);
    if (finals.size === 0) return false;
    if (this.ledger.conflictAt(block.account, height)) return false;
    return hasQuorum(weightOf(finals, w), w.total);
  }

  private onCommitted(batch: CommittedBlock[]): void {
    if (!this.running) return;
    for (const c of batch) this.blocks.remember(c.block, c.height);
    const finalized = batch.filter((c) => c.finalized);
    if (finalized.length > 0) {
      this.stats.finality_advances += finalized.length;
      this.stats.final_on_apply += finalized.length;
      this.stats.last_finality_ns = this.now();
      const rep = this.localRep;
      const voting = rep !== undefined && this.weights().weight(rep.address) > 0n;
      for (const c of finalized) {
        // One final vote says it all: receivers count a final vote as a converge vote too. A block
        // final by others' votes (this node has no weight) gets none.
        if (voting)
          this.emit({
            rep,
            hash: c.block.hash,
            account: c.block.account,
            previous: c.block.previous,
            final: true,
          });
        this.settled(c.block.account, c.height, c.block.hash, c.block.previous);
        this.wakeWaiters(c.block.account);
      }
    }
    const nowMs = Date.now();
    const accounts = new Set<string>();
    for (const c of batch) {
      if (c.finalized) continue;
      accounts.add(c.block.account);
      // A block announced here is new at its height (one undone there earlier had its own time).
      this.appliedAt.set(`${c.block.account}:${c.height}`, nowMs);
    }
    for (const a of accounts) this.drive(a);
  }

  private finalHeight(account: string): number {
    const d = this.decided.get(account);
    const f = this.ledger.finalHeightOf(account);
    return d !== undefined && d > f ? d : f;
  }

  /**
   * Votes on consecutive unfinalized blocks of an account for as long as their dependencies are
   * final, deciding each one whose final votes reach quorum. Where an election stalls, the account
   * is looked at again when due (or sooner, by a vote or its source's finality).
   */
  private drive(account: string): void {
    const stall = this.advance(account);
    if (stall) this.stalled.add(account, stall.height, Date.now(), stall.wakeAtMs);
    else this.stalled.forget(account);
  }

  /** drive's work: where the account's elections stalled, if they did for want of votes or time. */
  private advance(account: string): { height: number; wakeAtMs?: number } | undefined {
    const height = this.ledger.heightOf(account);
    let h = this.finalHeight(account) + 1;
    while (h <= height) {
      const hash = this.ledger.hashAt(account, h);
      if (hash === undefined) return undefined;
      const block = this.blocks.onChain(hash, account, h)?.block;
      if (!block) return undefined;
      const source = this.sourceState(account, block);
      if (source === 'unknown') return { height: h };
      if (source === 'waiting') return undefined;
      // In a conflict every representative prefers the lowest hash among the candidates
      // (reference-behavior.md 2.3), so first-seen splits cannot stall the election.
      const conflict = this.ledger.conflictAt(account, h);
      const nowMs = Date.now();
      const preferred = conflict
        ? ([...conflict.candidates].filter((c) => !((this.quarantine.get(c) ?? 0) > nowMs)).sort()[0] ?? hash)
        : hash;
      if (preferred === hash && conflict && this.substituted.has(`${account}:${h}`)) {
        // The position was decided for a winner that cannot be promoted, and its parent is final
        // (drive only reaches the first open height): the block on chain takes its place.
        this.decide(account, h);
        h++;
        continue;
      }
      if (preferred !== hash) {
        // The emission gate holds for the candidate voted for too: a staged receive gets this
        // node's vote only once its source is final here.
        const staged = this.ledger.stagedBlock(preferred)?.block;
        if (staged) {
          const stagedSource = this.sourceState(account, staged);
          if (stagedSource === 'unknown') return { height: h };
          if (stagedSource === 'waiting') return undefined;
        }
        // This node's votes go to the preferred (staged) candidate, but the one on chain may still
        // win by the others' votes: both tallies are counted.
        const stagedKey = `${account}:${h}:${preferred}`;
        if (this.tally(stagedKey, account, preferred, block.previous, true)) {
          // The swap drives the account again once it is done.
          this.swapIn(account, h, preferred);
          return { height: h };
        }
        if (!this.tally(`${account}:${h}`, account, hash, block.previous, false))
          return {
            height: h,
            wakeAtMs: this.wakeAt(account, block.previous, [stagedKey, `${account}:${h}`]),
          };
      } else if (!this.vote(account, h, hash, block.previous)) {
        return { height: h, wakeAtMs: this.wakeAt(account, block.previous, [`${account}:${h}`]) };
      }
      this.decide(account, h);
      h++;
    }
    return undefined;
  }

  /**
   * When a stalled election's tally could change with no vote arriving: the earliest of its
   * tallies' fallback delay and its position's stability window running out, if still ahead.
   */
  private wakeAt(account: string, previous: string, keys: string[]): number {
    const nowMs = Date.now();
    let at = Infinity;
    for (const key of keys) {
      const since = this.tallies.get(key)?.since;
      if (since !== undefined && since + this.fallbackMs > nowMs) at = Math.min(at, since + this.fallbackMs);
    }
    const candidate = this.candidateAt.get(`${account}:${previous}`);
    if (candidate !== undefined && candidate + this.stabilityMs > nowMs)
      at = Math.min(at, candidate + this.stabilityMs);
    return at;
  }

  /**
   * The emission gate's source half (2.3 point 2): 'final' unless `block` is a receive whose source
   * is not final here. 'waiting': `account` is driven again when the source's account advances;
   * 'unknown' (the source is not held): it is looked at again when due.
   */
  private sourceState(account: string, block: SignedBlock): 'final' | 'waiting' | 'unknown' {
    if (block.type !== 'receive' || !block.source) return 'final';
    const src = this.blocks.get(block.source);
    if (!src) return 'unknown';
    if (src.height <= this.finalHeight(src.block.account)) return 'final';
    let set = this.waiters.get(src.block.account);
    if (!set) this.waiters.set(src.block.account, (set = new Set()));
    set.add(account);
    return 'waiting';
  }

  /** Casts the local representative's votes at a position; true when the block reached finality. */
  private vote(account: string, height: number, hash: string, previous: string): boolean {
    return this.tally(`${account}:${height}`, account, hash, previous, true);
  }

  /** A staged candidate that won its election is swapped in by the ledger (once). */
  private swapIn(account: string, height: number, hash: string): void {
    if (this.resolving.has(hash)) return;
    this.resolving.add(hash);
    this.ledger
      .resolveConflict(account, height, hash)
      .then(() => {
        this.tallies.delete(`${account}:${height}:${hash}`);
        this.drive(account);
      })
      .catch((err: unknown) => {
        // A winner that cannot be promoted for a deterministic reason is passed over for a while,
        // so the election can settle on the next candidate instead of retrying it for ever (C-12).
        if (err instanceof LedgerError && !err.retryable) {
          if (this.quarantine.size >= MAX_QUARANTINED) this.quarantine.clear();
          this.quarantine.set(hash, Date.now() + QUARANTINE_MS);
          this.substituted.add(`${account}:${height}`);
          this.onError(new Error(`winner ${hash} could not be promoted (${err.reason}); substituting`));
          this.drive(account);
        } else this.onError(err);
      })
      .finally(() => this.resolving.delete(hash));
  }

  /**
   * The election for one candidate at a position (its tally kept under `key`): remote votes merged,
   * the local representative's converge vote, its final vote once converge weight decides; true
   * when final weight decides (67 %, or more than half after the fallback delay).
   */
  private tally(key: string, account: string, hash: string, previous: string, castLocal: boolean): boolean {
    let t = this.tallies.get(key);
    const position = `${account}:${previous}`;
    if (!t || t.hash !== hash)
      this.tallies.set(key, (t = { hash, since: this.electionStart(key, position), account, previous }));
    const w = this.weights();
    const fallback = Date.now() - t.since >= this.fallbackMs;
    const decides = (voters: Set<string>) => {
      const weight = weightOf(voters, w);
      return hasQuorum(weight, w.total) || (fallback && weight * 2n > w.total);
    };
    const converge = new Set<string>();
    const final = new Set<string>();
    const votedAt = this.book.positionOf(hash);
    if (votedAt === undefined || votedAt === position) {
      for (const [voter, isFinal] of this.book.votesFor(hash)) {
        converge.add(voter);
        if (isFinal) final.add(voter);
      }
    }
    const rep = this.localRep;
    let mine = this.own.get(position);
    const weight = rep ? w.weight(rep.address) : 0n;
    // This representative's slot moves here from any earlier preference.
    const moved = rep !== undefined && castLocal && weight > 0n && mine?.hash !== hash && !mine?.final;
    if (moved) this.own.set(position, (mine = { hash, account, previous, final: false }));
    if (rep && mine?.hash === hash) {
      converge.add(rep.address);
      if (!mine.final && castLocal && weight > 0n && this.stable(position) && decides(converge)) {
        // Its final vote says what a converge vote would (one slot per representative and position:
        // receivers count a final vote as converge weight too), so when the move decides at once, as
        // it does wherever this representative completes the quorum, no converge copy is signed or
        // sent first: a representative holding the quorum alone signed, sent and had every peer
        // check and keep two votes a block (issue #18).
        mine.final = true;
        this.lockAndEmitFinal(rep, mine);
      } else if (moved) {
        this.emit({ rep, hash, account, previous, final: false });
      }
      if (mine.final) final.add(rep.address);
    }
    return decides(final);
  }

  /** True unless the position gained a candidate within the stability window (2.3 (a)). */
  /**
   * When an election's fallback delay starts (2.3 point 4b: from conflict detection, or from the
   * oldest vote at an uncontested position). The emission gate holds every vote at a position until
   * its parent is final, so measured from the first vote, a chain of blocks that cannot reach the
   * quorum waited one delay after another: 50 blocks of one account 500 s. Here an uncontested
   * position's delay runs from when its block was committed here, as if the gate had not held
   * its votes: the chain decides together. A contested one's runs from now (its conflict was
   * detected no later), and so does any after a restart.
   */
  private electionStart(key: string, position: string): number {
    const nowMs = Date.now();
    if (this.candidateAt.has(position)) return nowMs;
    return Math.min(nowMs, this.appliedAt.get(key) ?? nowMs);
  }

  private stable(position: string): boolean {
    const at = this.candidateAt.get(position);
    return at === undefined || Date.now() - at >= this.stabilityMs;
  }

  /**
   * The commit-lock goes to disk before the final vote goes out (2.2): whatever happens next, a
   * restart, a new preference, this representative never final-votes a second block there.
   */
  private lockAndEmitFinal(rep: LocalRepresentative, o: OwnVote): void {
    this.ledger
      .lockVote(o.account, o.previous, o.hash)
      .then(() => {
        if (this.running)
          this.emit({ rep, hash: o.hash, account: o.account, previous: o.previous, final: true });
      })
      .catch((err: unknown) => this.onError(err));
  }

  private emit(v: {
    rep: LocalRepresentative;
    hash: string;
    account: string;
    previous: string;
    final: boolean;
  }): void {
    if (!this.sink) return;
    const vote: Vote = {
      rep_pub_key: v.rep.pubKey,
      block_hash: v.hash,
      account: v.account,
      previous: v.previous === ZERO_HASH ? '0' : v.previous,
      timestamp: this.now(),
      final: v.final,
    };
    const weight = this.weights().weight(v.rep.address);
    const signed = signVote(vote, v.rep.seed, this.sign);
    // Kept like any representative's vote, so vote_request answers carry this node's too.
    this.book.keepBallot(`${v.account}:${v.previous}`, signed);
    this.sink.broadcast(signed, weight);
  }

  /**
   * Re-sends the local representative's vote at every position still open, signed again with a
   * fresh timestamp (C-08): a node that missed the first copy (it was offline, its clock was off,
   * gossip lost it) gets another, and a fresh timestamp keeps it inside receivers' 5-minute window
   * and makes it a new gossip message rather than a duplicate the mesh drops.
   *
   * In slices of REAFFIRM_SLICE positions, one per turn of the event loop: with a large
   * representative offline every block's election stays open for the fallback's 10 s, and a pass
   * over all of them in one go (about 50 µs each, a signature and the reads that it is still open)
   * held the thread, which the desktop app shares with its window, for 148 ms at 3,000 (issue #18).
   */
  private reaffirm(): void {
    const rep = this.localRep;
    if (!rep || !this.sink || !this.running || this.reaffirming) return;
    const positions = [...this.own.keys()];
    this.reaffirming = true;
    const slice = (from: number) => {
      const end = Math.min(from + REAFFIRM_SLICE, positions.length);
      for (let i = from; i < end; i++) {
        const position = positions[i]!;
        const o = this.own.get(position);
        if (!o) continue; // decided meanwhile
        // Settled, or gone with a rollback (the block it names is held no more): nothing to re-affirm.
        if (this.finalizedAt(position) !== undefined || !this.holds(o.hash)) {
          this.own.delete(position);
          continue;
        }
        this.stats.votes_reaffirmed += 1;
        this.emit({ rep, hash: o.hash, account: o.account, previous: o.previous, final: o.final });
      }
      if (end < positions.length && this.running) setImmediate(() => slice(end));
      else this.reaffirming = false;
    };
    slice(0);
  }

  /**
   * Removes records left behind for positions finalized meanwhile (C-14): tallies, votes, signed
   * ballots and throttle windows of elections that were decided by another path (sync, a swap, a
   * restart), and answer counters of positions long settled.
   *
   * An open position has a tally, votes, a ballot and this node's own vote: each is asked about once
   * (with thousands of elections open, a large representative offline, asking four times took
   * 9-15 ms of the thread at 3,000 every 30 s).
   */
  sweepLingering(): number {
    const answers = new Map<string, boolean>();
    const decided = (position: string) => {
      let a = answers.get(position);
      if (a === undefined) answers.set(position, (a = this.finalizedAt(position) !== undefined));
      return a;
    };
    let swept = 0;
    for (const [key, t] of this.tallies) {
      if (!decided(`${t.account}:${t.previous}`)) continue;
      this.tallies.delete(key);
      swept += 1;
    }
    swept += this.book.sweep(decided, (position) => this.throttle.forget(position));
    // Commit times of blocks final by now (by sync, or undone by a rollback and decided since).
    const finalHeights = new Map<string, number>();
    for (const key of this.appliedAt.keys()) {
      const at = key.lastIndexOf(':');
      const account = key.slice(0, at);
      let f = finalHeights.get(account);
      if (f === undefined) finalHeights.set(account, (f = this.finalHeight(account)));
      if (Number(key.slice(at + 1)) > f) continue;
      this.appliedAt.delete(key);
      swept += 1;
    }
    for (const position of this.own.keys()) {
      if (!decided(position)) continue;
      this.own.delete(position);
      this.candidateAt.delete(position);
      swept += 1;
    }
    const nowMs = Date.now();
    for (const [hash, until] of this.quarantine) if (until <= nowMs) this.quarantine.delete(hash);
    const old = Date.now() - 10 * 60_000;
    for (const [position, a] of this.answered) if (a.at < old) this.answered.delete(position);
    this.stats.records_swept += swept;
    return swept;
  }

  /** Forgets the election records of a position decided in the ledger's own write (finalOnApply). */
  private settled(account: string, height: number, hash: string, previous: string): void {
    const position = `${account}:${previous}`;
    // Always: the final vote this node just cast there was kept as a ballot (emit), and a decided
    // position answers vote requests with a fresh final vote anyway. Left to the 30 s sweep, the
    // representative's node held a ballot per block and the sweep looked each one up again
    // (~30 µs a block of its thread in the three-node benchmark, issue #18).
    this.book.forgetPosition(position);
    if (!this.book.positionOf(hash) && !this.tallies.has(`${account}:${height}`)) return;
    this.book.forgetHash(hash);
    this.throttle.forget(position);
    this.own.delete(position);
    this.candidateAt.delete(position);
    this.tallies.delete(`${account}:${height}`);
  }

  private decide(account: string, height: number): void {
    const t = this.tallies.get(`${account}:${height}`);
    if (t) {
      this.book.forgetHash(t.hash);
      const position = `${t.account}:${t.previous}`;
      this.book.forgetPosition(position);
      this.throttle.forget(position);
      this.own.delete(position);
      this.candidateAt.delete(position);
    }
    this.tallies.delete(`${account}:${height}`);
    this.appliedAt.delete(`${account}:${height}`);
    this.substituted.delete(`${account}:${height}`);
    this.decided.set(account, height);
    this.queue.set(account, height);
    this.wakeWaiters(account);
    this.scheduleFlush();
  }

  /** Re-drives the accounts whose next block waited for this account's finality. */
  private wakeWaiters(account: string): void {
    const waiting = this.waiters.get(account);
    if (!waiting) return;
    this.waiters.delete(account);
    for (const a of waiting) if (a !== account) this.drive(a);
  }

  /** Writes decided heights in one transaction per batch. */
  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      await Promise.resolve();
      while (this.queue.size > 0) {
        const items = [...this.queue].map(([account, height]) => ({ account, height }));
        this.queue = new Map();
        try {
          const advanced = await this.ledger.finalize(items);
          if (advanced.length > 0) {
            this.stats.finality_advances += advanced.length;
            this.stats.last_finality_ns = this.now();
          }
        } catch (err) {
          this.onError(err);
        }
        for (const { account, height } of items) {
          if (this.decided.get(account) === height) this.decided.delete(account);
        }
      }
      this.flushing = undefined;
    })();
  }

  /** Resolves once every decided height is durable (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }
}
