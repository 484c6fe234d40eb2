import { ZERO_HASH } from '../protocol/block.ts';
import { signVote, verifyVote, type Vote } from '../protocol/vote.ts';
import { addressFromPublicKey, type Verifier } from '../protocol/keys.ts';
import type { CommittedBlock, Ledger, SignedBlock } from '../ledger/ledger.ts';
import type { AccountRecord } from '../ledger/records.ts';
import type { StateChain } from '../statechain/statechain.ts';
import { eligibleWeights, hasQuorum, type EligibleWeights } from './weights.ts';

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

export interface VoteSink {
  broadcast(vote: Vote & { signature: string }, weight: bigint): void;
}

export type VoteVerdict = 'accept' | 'reject' | 'ignore';

/** Votes further than this from the node clock are not counted (reference-behavior.md 2.2). */
export const VOTE_WINDOW_NS = 300_000_000_000n;
const MAX_SEEN_VOTES = 200_000;
const MAX_VOTED_HASHES = 50_000;

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
}

/** Voters per phase; their weight is looked up when counting (current weight, section 2.2). */
interface Tally {
  hash: string;
  converge: Set<string>;
  final: Set<string>;
  /** When the election opened (ms), for the fallback rule. */
  since: number;
}

/**
 * After this long without a quorum, a position may lock and finalize with more than half of the
 * eligible weight (reference-behavior.md 2.3, the finality wall C-01): a network that lost some of
 * its representatives keeps finalizing as long as a majority votes.
 */
export const FALLBACK_MS = 10_000;
const SWEEP_MS = 1_000;

export interface FinalityStats {
  finality_advances: number;
  last_finality_ns: bigint;
}

export class Consensus {
  private readonly ledger: Ledger;
  private readonly sc: StateChain;
  private readonly localRep: LocalRepresentative | undefined;
  private sink: VoteSink | undefined;
  private readonly verify: Verifier | undefined;
  private readonly sign: ((message: Uint8Array, seed: Uint8Array) => Uint8Array) | undefined;
  /** Remote votes by block hash: representative address -> true once its vote is final. */
  private readonly remote = new Map<string, Map<string, boolean>>();
  /** Votes already counted (rep key, hash, phase), so duplicates are neither counted nor relayed. */
  private readonly seen = new Set<string>();
  /** The chain position (account:previous) votes for a hash named, so a mismatch is not counted. */
  private readonly positions = new Map<string, string>();
  /** Staged winners being swapped in. */
  private readonly resolving = new Set<string>();
  private readonly now: () => bigint;
  private readonly onError: (err: unknown) => void;
  /** Heights decided final in memory, not yet written (account -> height). */
  private readonly decided = new Map<string, number>();
  /** Open elections by position key `account:height`. */
  private readonly tallies = new Map<string, Tally>();
  /** Accounts waiting for another account's finality (a receive's source). */
  private readonly waiters = new Map<string, Set<string>>();
  /** Accounts whose next block lacked quorum; re-driven when a commit changes the weights. */
  private readonly stalled = new Set<string>();
  private queue = new Map<string, number>();
  private flushing: Promise<void> | undefined;
  private weightsCache: EligibleWeights | undefined;
  private running = false;
  private sweeper: NodeJS.Timeout | undefined;
  readonly stats: FinalityStats = { finality_advances: 0, last_finality_ns: 0n };

  constructor(deps: ConsensusDeps) {
    this.ledger = deps.ledger;
    this.sc = deps.statechain;
    this.localRep = deps.localRep;
    this.sink = deps.sink;
    this.verify = deps.verify;
    this.sign = deps.sign;
    this.now = deps.now;
    this.onError = deps.onError ?? (() => {});
  }

  /** Attaches the network: from now on the local representative's votes are signed and sent. */
  setSink(sink: VoteSink): void {
    this.sink = sink;
  }

  /**
   * A vote from the network. Its signature is checked before anything is remembered of it (a forged
   * vote must not poison the duplicate filter, reference-behavior.md 9.2 C-10); it counts with the
   * representative's current eligible weight; a vote for a block not yet known is kept until the
   * block arrives.
   */
  onVote(v: Vote & { signature: string }): VoteVerdict {
    const key = `${v.rep_pub_key}:${v.block_hash}:${v.final ? 1 : 0}`;
    if (this.seen.has(key)) return 'ignore';
    const now = this.now();
    if (v.timestamp > now + VOTE_WINDOW_NS || v.timestamp < now - VOTE_WINDOW_NS) return 'ignore';
    if (!verifyVote(v, this.verify)) return 'reject';
    const rep = addressFromPublicKey(v.rep_pub_key);
    if ((this.weights().weights.get(rep) ?? 0n) === 0n) return 'ignore';
    // A vote names its block's chain position; one for the wrong position is not counted (C-13).
    const position = `${v.account}:${v.previous === '0' ? ZERO_HASH : v.previous}`;
    const held = this.ledger.getBlock(v.block_hash)?.block ?? this.ledger.stagedBlock(v.block_hash)?.block;
    if (held && position !== `${held.account}:${held.previous}`) return 'ignore';
    const known = this.positions.get(v.block_hash);
    if (known !== undefined && known !== position) return 'ignore';
    this.positions.set(v.block_hash, position);
    // Remembered only once it counts: neither a forged nor a misplaced vote can shadow a real one.
    if (this.seen.size >= MAX_SEEN_VOTES) this.seen.clear();
    this.seen.add(key);
    let votes = this.remote.get(v.block_hash);
    if (!votes) {
      if (this.remote.size >= MAX_VOTED_HASHES) {
        const oldest = this.remote.keys().next().value!;
        this.remote.delete(oldest);
        this.positions.delete(oldest);
      }
      this.remote.set(v.block_hash, (votes = new Map()));
    }
    if (votes.get(rep) === true) return 'ignore'; // a final vote is irrevocable
    votes.set(rep, v.final);
    const b = this.ledger.getBlock(v.block_hash);
    if (b && !b.finalized && this.running) this.drive(b.block.account);
    else if (!b && this.running) this.considerStaged(v.block_hash);
    return 'accept';
  }

  /** Representatives whose votes for a block this node has seen. */
  votersFor(hash: string): string[] {
    return [...(this.remote.get(hash)?.keys() ?? [])];
  }

  /**
   * A staged conflict candidate whose final votes reach the quorum wins its position: the ledger
   * swaps it in (undoing the sibling and what was built on it), then it is finalized as usual.
   */
  private considerStaged(hash: string): void {
    const st = this.ledger.stagedBlock(hash);
    if (!st || this.resolving.has(hash)) return;
    const w = this.weights();
    const finals = [...(this.remote.get(hash) ?? [])].filter(([, final]) => final).map(([rep]) => rep);
    if (hasQuorum(weightOf(new Set(finals), w.weights), w.total))
      this.swapIn(st.block.account, st.height, hash);
    // Otherwise this node's own representative may still have to vote in the conflict.
    else this.drive(st.block.account);
  }

  /**
   * A freshly signed final vote of this node's representative for a block it holds as final (for a
   * peer catching up on history whose votes it missed); undefined when there is none to give.
   */
  finalVoteFor(hash: string): { vote: Vote & { signature: string }; weight: bigint } | undefined {
    const rep = this.localRep;
    if (!rep) return undefined;
    const weight = this.weights().weights.get(rep.address) ?? 0n;
    if (weight === 0n) return undefined;
    const b = this.ledger.getBlock(hash);
    if (!b?.finalized) return undefined;
    const vote: Vote = {
      rep_pub_key: rep.pubKey,
      block_hash: hash,
      account: b.block.account,
      previous: b.block.previous === ZERO_HASH ? '0' : b.block.previous,
      timestamp: this.now(),
      final: true,
    };
    return { vote: signVote(vote, rep.seed, this.sign), weight };
  }

  /** Subscribes to commits and re-drives every account left unfinalized by a previous run. */
  start(unfinalized: Iterable<string>): void {
    this.running = true;
    // Liveness: stalled elections are looked at again, so the fallback rule can apply without
    // waiting for the next block.
    this.sweeper = setInterval(() => {
      const stalled = [...this.stalled];
      this.stalled.clear();
      for (const a of stalled) this.drive(a);
    }, SWEEP_MS);
    this.sweeper.unref();
    this.ledger.onCommitted((batch) => this.onCommitted(batch));
    // A candidate staged after its votes arrived may already have won.
    this.ledger.onStaged((hash) => this.considerStaged(hash));
    this.ledger.setInlineFinality((block, before, weights) => this.finalOnApply(block, before, weights));
    for (const account of unfinalized) this.drive(account);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.sweeper) clearInterval(this.sweeper);
    await this.flushing;
  }

  /** Eligible weights, cached until the next commit changes balances. */
  weights(): EligibleWeights {
    this.weightsCache ??= eligibleWeights(this.ledger.repWeights(), this.sc.representatives);
    return this.weightsCache;
  }

  /**
   * A block is final the moment it is applied when this node's representative alone holds the
   * quorum (its converge and final votes would decide at once) and the block's dependencies are
   * final already: the previous block of its chain and, for a receive, the source send.
   */
  private finalOnApply(
    block: SignedBlock,
    before: AccountRecord | undefined,
    weights: () => Map<string, bigint>,
  ): boolean {
    const rep = this.localRep;
    if (!rep || !this.running) return false;
    if (before && before.final_height < before.height) return false;
    const w = eligibleWeights(weights(), this.sc.representatives);
    if (!hasQuorum(w.weights.get(rep.address) ?? 0n, w.total)) return false;
    if (block.type === 'receive' && block.source) {
      const src = this.ledger.getBlock(block.source);
      if (!src?.finalized) return false;
    }
    return true;
  }

  private onCommitted(batch: CommittedBlock[]): void {
    this.weightsCache = undefined;
    if (!this.running) return;
    const finalized = batch.filter((c) => c.finalized);
    if (finalized.length > 0) {
      this.stats.finality_advances += finalized.length;
      this.stats.last_finality_ns = this.now();
      const rep = this.localRep!;
      for (const c of finalized) {
        // One final vote says it all: receivers count a final vote as a converge vote too.
        this.emit({
          rep,
          hash: c.block.hash,
          account: c.block.account,
          previous: c.block.previous,
          final: true,
        });
        this.wakeWaiters(c.block.account);
      }
    }
    const accounts = new Set(batch.filter((c) => !c.finalized).map((c) => c.block.account));
    for (const a of this.stalled) accounts.add(a);
    this.stalled.clear();
    for (const a of accounts) this.drive(a);
  }

  private finalHeight(account: string): number {
    const d = this.decided.get(account);
    const f = this.ledger.getAccount(account)?.final_height ?? 0;
    return d !== undefined && d > f ? d : f;
  }

  /**
   * Votes on consecutive unfinalized blocks of an account for as long as their dependencies are
   * final, deciding each one whose final votes reach quorum.
   */
  private drive(account: string): void {
    const acct = this.ledger.getAccount(account);
    if (!acct) return;
    let h = this.finalHeight(account) + 1;
    while (h <= acct.height) {
      const hash = this.ledger.hashAt(account, h);
      if (hash === undefined) return;
      const block = this.ledger.getBlock(hash)?.block;
      if (!block) return;
      if (block.type === 'receive' && block.source) {
        const src = this.ledger.getBlock(block.source);
        if (!src) return;
        if (src.height > this.finalHeight(src.block.account)) {
          let set = this.waiters.get(src.block.account);
          if (!set) this.waiters.set(src.block.account, (set = new Set()));
          set.add(account);
          return;
        }
      }
      // In a conflict every representative prefers the lowest hash among the candidates
      // (reference-behavior.md 2.3), so first-seen splits cannot stall the election.
      const conflict = this.ledger.conflictAt(account, h);
      const preferred = conflict ? [...conflict.candidates].sort()[0]! : hash;
      if (preferred !== hash) {
        // This node's votes go to the preferred (staged) candidate, but the one on chain may still
        // win by the others' votes: both tallies are counted.
        if (this.tally(`${account}:${h}:${preferred}`, account, preferred, block.previous, true)) {
          this.swapIn(account, h, preferred);
          this.stalled.add(account);
          return;
        }
        if (!this.tally(`${account}:${h}`, account, hash, block.previous, false)) {
          this.stalled.add(account);
          return;
        }
      } else if (!this.vote(account, h, hash, block.previous)) {
        this.stalled.add(account);
        return;
      }
      this.decide(account, h);
      h++;
    }
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
      .catch((err: unknown) => this.onError(err))
      .finally(() => this.resolving.delete(hash));
  }

  /**
   * The election for one candidate at a position (its tally kept under `key`): remote votes merged,
   * the local representative's converge vote, its final vote once converge weight decides; true
   * when final weight decides (67 %, or more than half after the fallback delay).
   */
  private tally(key: string, account: string, hash: string, previous: string, castLocal: boolean): boolean {
    let t = this.tallies.get(key);
    if (!t || t.hash !== hash) {
      this.tallies.set(key, (t = { hash, converge: new Set(), final: new Set(), since: Date.now() }));
    }
    const w = this.weights();
    const fallback = Date.now() - t.since >= FALLBACK_MS;
    const decides = (voters: Set<string>) => {
      const weight = weightOf(voters, w.weights);
      return hasQuorum(weight, w.total) || (fallback && weight * 2n > w.total);
    };
    const votedAt = this.positions.get(hash);
    if (votedAt === undefined || votedAt === `${account}:${previous}`) {
      for (const [voter, final] of this.remote.get(hash) ?? []) {
        t.converge.add(voter);
        if (final) t.final.add(voter);
      }
    }
    const rep = castLocal ? this.localRep : undefined;
    if (rep) {
      const weight = w.weights.get(rep.address) ?? 0n;
      if (weight > 0n && !t.converge.has(rep.address)) {
        t.converge.add(rep.address);
        this.emit({ rep, hash, account, previous, final: false });
      }
      if (weight > 0n && !t.final.has(rep.address) && decides(t.converge)) {
        t.final.add(rep.address);
        this.emit({ rep, hash, account, previous, final: true });
      }
    }
    return decides(t.final);
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
    const weight = this.weights().weights.get(v.rep.address) ?? 0n;
    this.sink.broadcast(signVote(vote, v.rep.seed, this.sign), weight);
  }

  private decide(account: string, height: number): void {
    const t = this.tallies.get(`${account}:${height}`);
    if (t) {
      this.remote.delete(t.hash);
      this.positions.delete(t.hash);
    }
    this.tallies.delete(`${account}:${height}`);
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

/** The current eligible weight of a set of voters (a rep without weight now counts 0). */
function weightOf(voters: Set<string>, weights: Map<string, bigint>): bigint {
  let s = 0n;
  for (const v of voters) s += weights.get(v) ?? 0n;
  return s;
}
