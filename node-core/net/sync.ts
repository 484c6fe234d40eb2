import type { Logger } from 'pino';
import type { Consensus } from '../consensus/consensus.ts';
import type { AsyncVerifier, Ledger } from '../ledger/ledger.ts';
import {
  bucketEnd,
  bucketStart,
  DIGEST_BUCKETS,
  DIGEST_BYTES,
  differingRanges,
} from '../ledger/frontier-digests.ts';
import { blockToJson } from '../protocol/block-json.ts';
import { bytesToHex, hexToBytes, isHex } from '../protocol/hex.ts';
import type { JsonPath, JsonValue } from '../protocol/json.ts';
import { decodeStateBlock, stateBlockToJson } from '../protocol/statechain.ts';
import { StateChainError, type StateChain } from '../statechain/statechain.ts';
import { sha256Node } from '../fastpath/block-hash.ts';
import { NetError } from './errors.ts';
import { voteFromJson, voteToJson } from './gossip.ts';
import type { P2PHost } from './host.ts';
import type { PreverifiedSignatures } from './preverified.ts';
import { countEncodedVoteBatches, countVotes, Slicer } from './vote-intake.ts';
import {
  CHAINS_ACCOUNTS,
  CHAINS_ANSWER_MAX,
  type ChainNeed,
  type ChainPage,
  type ChainWant,
  pullChains,
} from './sync-pull.ts';
import { SyncReporter } from './sync-progress.ts';

/**
 * Catching up (issue "The network", item 3): a node that starts late or was offline compares its
 * account frontiers with a peer's, pulls the blocks it lacks (state chain first: the ledger reads
 * it), applies them through the same validation as any block, and asks its peers' representatives
 * for final votes on what it pulled, so that history it missed becomes final here too.
 * Progress (blocks known, left, an estimate) is reported in /ready and /node, and in the log every
 * few seconds while a catch-up runs. Pages of many accounts' chains are pulled ahead and applied as
 * batches (sync-pull.ts, issue #18). What this node applied is durable, so a catch-up cut short
 * (even by kill -9) resumes from each account's frontier: nothing it holds is pulled again.
 */
export const SYNC_PAGE = 500;
const ROUND_EVERY_MS = 30_000;
/**
 * While the ledger is taking blocks a periodic round waits, for at most this long after the last
 * round began: they arrive by gossip then, and a gap parks a block that asks for a round at once.
 * A round mid-stream compared frontiers that differ only by blocks in flight (every bucket's digest
 * computed again on both sides) and pulled blocks gossip was bringing (a three-node run: 48 of 61
 * pulled were duplicates, the digests 4 % of a receiver's thread over a gossip round). Readiness's
 * `synced` wants a successful round within 180 s.
 */
const ROUND_DEFER_MAX_MS = 90_000;
/**
 * Blocks per commit when a page is applied: small enough that the node's thread is never held for
 * long (profile: 1,000 blocks took 80-120 ms). 25, not 100: catch-up of 100,000 blocks from one
 * peer, quiet machine, the main thread's event-loop delay p99 22.4 ms (twice) against 31.7 ms, at
 * 2.2-2.4 k/s against 2.4 k/s; 10 and 15 gave no lower delay (22.7, 21.9 ms) and took 25-55 % longer.
 */
const APPLY_GROUP = 25;
/** Pages whose final votes are requested at once: one is counted while the peer signs the next. */
const VOTE_FETCHES = 2;
/** Sync requests travel on the sync protocol, not the rate-limited messenger. */
const SYNC = { channel: 'sync' } as const;

export interface SyncProgress {
  state: 'idle' | 'syncing';
  /** Blocks the peers reported that this node did not have at the start of the round. */
  blocks_known: number;
  blocks_left: number;
  /** Seconds to finish at the current rate; null when unknown (rather than a wild guess). */
  estimate_seconds: number | null;
  last_round_at: bigint;
  last_round_ok: boolean;
  /** When a round last completed without error (node clock, ns; 0 = never): readiness's `synced`. */
  last_ok_at: bigint;
  rounds: number;
  /** Blocks applied in the current round (0 when idle). */
  blocks_done: number;
  /** Blocks received in page answers since start, and how many of them this node held already. */
  blocks_pulled: number;
  duplicates: number;
  /** Page answers received since start. */
  pages: number;
  /** Frontier entries received from peers since start, and buckets of accounts not asked for (their digests were equal). */
  frontier_entries: number;
  buckets_skipped: number;
}

/**
 * A `final_votes` answer: single votes (JSON), and, when asked with `batches: true`, batch-signed
 * vote batches (protocol/vote-batch.ts) in base64. A peer of an older version sends `votes` only.
 */
interface FinalVotesAnswer {
  votes: unknown[];
  batches?: unknown[];
}

export interface SyncDeps {
  host: P2PHost;
  ledger: Ledger;
  statechain: StateChain;
  consensus: Consensus;
  now: () => bigint;
  log?: Logger;
  /** Worker-thread signature checks, and where their good results are left for consensus. */
  verifier?: AsyncVerifier;
  preverified?: PreverifiedSignatures;
  /** Whether the ledger is taking blocks now (a periodic round waits: ROUND_DEFER_MAX_MS). */
  busy?: () => boolean;
  /** Periodic rounds' interval and longest wait (tests). */
  roundEveryMs?: number;
  roundDeferMaxMs?: number;
}

interface FrontierEntry {
  account: string;
  height: number;
  frontier: string;
}

/**
 * LEDGER_NODE_SYNC_DIGESTS=0: rounds neither ask for frontier digests nor give them, as an older
 * version (the baseline of `npm run bench -- idle`).
 */
const DIGESTS = process.env.LEDGER_NODE_SYNC_DIGESTS !== '0';

/** Raw JSON text is kept for state-chain op values: their hash covers it byte for byte. */
const isStateValue = (p: JsonPath) =>
  p.length === 6 && p[0] === 'payload' && p[1] === 'blocks' && p[3] === 'ops' && p[5] === 'value';

export class Syncer {
  private readonly d: SyncDeps;
  private readonly queue: string[] = [];
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  readonly progress: SyncProgress = {
    state: 'idle',
    blocks_known: 0,
    blocks_left: 0,
    estimate_seconds: null,
    last_round_at: 0n,
    last_round_ok: false,
    last_ok_at: 0n,
    rounds: 0,
    blocks_done: 0,
    blocks_pulled: 0,
    duplicates: 0,
    pages: 0,
    frontier_entries: 0,
    buckets_skipped: 0,
  };
  /** Final votes counted from `final_votes` answers: sent singly, or in batch-signed batches. */
  readonly finalVotesIn = { single: 0, batched: 0 };
  /**
   * Whether `final_votes` asked with `batches` is answered batch-signed; false answers as a version
   * before the format did, single votes only (tests of a newer node syncing from an older one).
   */
  answersBatches = true;
  /** Hashes of blocks a page is applying now: committed history is not relayed as gossip. */
  private readonly applying = new Set<string>();
  /** Final-vote requests for applied pages, run behind the pulls, VOTE_FETCHES at a time. */
  private readonly voteQueue: string[][] = [];
  private votesRunning = 0;
  private readonly votesIdle: (() => void)[] = [];
  /** Peers that cannot answer `chains` (an older version): asked account by account. */
  private readonly noChains = new Set<string>();

  constructor(deps: SyncDeps) {
    this.d = deps;
  }

  start(): void {
    const deferMax = this.d.roundDeferMaxMs ?? ROUND_DEFER_MAX_MS;
    this.timer = setInterval(() => {
      const peer = this.d.host.peers()[0];
      if (!peer) return;
      if (this.d.busy?.() && Date.now() - this.roundStartedAt < deferMax) {
        this.roundsDeferred += 1;
        return;
      }
      this.request(peer.id);
    }, this.d.roundEveryMs ?? ROUND_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  /** Queues a round with some peer soon (a gap was noticed), at most one such request at a time. */
  requestAny(): void {
    if (this.anyPending) return;
    this.anyPending = true;
    setTimeout(() => {
      this.anyPending = false;
      const peer = this.d.host.peers()[0];
      if (peer) this.request(peer.id);
    }, 1000).unref();
  }

  private anyPending = false;
  /** When the latest round began (ms), and periodic rounds put off while the ledger was busy. */
  private roundStartedAt = 0;
  roundsDeferred = 0;

  /** Queues a round with a peer (rounds run one at a time). */
  request(peer: string): void {
    if (!this.queue.includes(peer)) this.queue.push(peer);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0 && !this.stopped) {
        const peer = this.queue.shift()!;
        this.roundStartedAt = Date.now();
        try {
          await this.round(peer);
          this.progress.last_round_ok = true;
          this.progress.last_ok_at = this.d.now();
        } catch (err) {
          this.progress.last_round_ok = false;
          this.d.log?.warn({ peer, err: (err as Error).message }, 'sync round failed');
        }
        this.progress.last_round_at = this.d.now();
        this.progress.rounds += 1;
      }
    } finally {
      this.running = false;
      this.progress.state = 'idle';
      this.progress.blocks_left = 0;
      this.progress.blocks_done = 0;
      this.progress.estimate_seconds = null;
    }
  }

  /** One round against one peer: its peers, the state chain, account chains, then votes. */
  private async round(peer: string): Promise<void> {
    const { host, ledger, statechain } = this.d;
    this.progress.state = 'syncing';

    // Peer exchange: learn the peer's peers and connect to those not known yet.
    const known = await host
      .request<{ addrs: string[] }>(peer, 'peers', {}, SYNC)
      .catch(() => ({ addrs: [] }));
    host.discover(known.addrs.filter((a): a is string => typeof a === 'string').slice(0, 64));

    // The state chain first: network settings, keysets and minters that blocks are checked against.
    for (;;) {
      const from = (statechain.tip?.index ?? -1n) + 1n;
      const page = await host.request<{ blocks: JsonValue[] }>(
        peer,
        'statechain',
        { from, limit: 100 },
        { ...SYNC, raw: isStateValue },
      );
      if (!page.blocks.length) break;
      for (const raw of page.blocks) {
        try {
          await statechain.submit(decodeStateBlock(raw));
        } catch (e) {
          if (e instanceof StateChainError) {
            throw new Error(`peer sent a state block we refuse: ${e.message}`, { cause: e });
          }
          throw e;
        }
      }
    }

    // Frontiers: what the peer has that this node does not, in the buckets of accounts whose
    // digests differ (all of them with a peer that gives no digests, an older version).
    const needs: ChainNeed[] = [];
    for (const [from, to] of await this.rangesToCompare(peer)) {
      const until = to === DIGEST_BUCKETS - 1 ? undefined : bucketStart(to + 1);
      let after = from === 0 ? undefined : bucketEnd(from - 1);
      for (;;) {
        const page = await host.request<{ entries: FrontierEntry[]; next?: string }>(
          peer,
          'frontiers',
          { after, until, limit: 1000 },
          SYNC,
        );
        this.progress.frontier_entries += page.entries.length;
        for (const e of page.entries) this.compareFrontier(e, until, needs);
        if (!page.next || (until !== undefined && page.next >= until)) break;
        after = page.next;
      }
    }
    const total = needs.reduce((s, n) => s + (n.to - n.from + 1), 0);
    const report = new SyncReporter(this.progress, total, this.d.log);

    // Pages rotate over every verified peer in the first pass (the round's peer first).
    const pullPeers = [
      peer,
      ...host
        .peers()
        .map((p) => p.id)
        .filter((id) => id !== peer),
    ];
    await pullChains(
      {
        fetch: (p, wants) => this.fetchChains(p, wants, peer),
        apply: async (blocks) => {
          for (const b of blocks) this.applying.add(b.hash!);
          try {
            return await ledger.submitBatch(blocks, { live: false, maxGroup: APPLY_GROUP });
          } finally {
            for (const b of blocks) this.applying.delete(b.hash!);
          }
        },
        applied: (count, fresh) => {
          report.applied(count);
          // Final votes for the page, asked for behind the pulls.
          if (fresh.length > 0) this.askVotes(fresh);
        },
        stopped: () => this.stopped,
      },
      pullPeers,
      needs,
      this.progress,
    );
    await this.votesDone();
    report.done();

    // Final votes, from every peer that represents weight, for everything still not final here:
    // pulled blocks whose votes missed, and what was left unfinalized when this node stopped.
    await ledger.idle();
    const wanted: string[] = [];
    for (const account of ledger.unfinalizedAccounts()) {
      const a = ledger.accountHead(account);
      for (let h = (a?.final_height ?? 0) + 1; a && h <= a.height && wanted.length < 50_000; h++) {
        const hash = ledger.hashAt(account, h);
        if (hash) wanted.push(hash);
      }
    }
    for (let i = 0; i < wanted.length; i += SYNC_PAGE)
      await this.fetchVotes(wanted.slice(i, i + SYNC_PAGE), true);
  }

  /**
   * The buckets of accounts (frontier-digests.ts) whose frontiers this round compares with the
   * peer's: those whose digests differ, as ranges; all of them when the peer gives no digests.
   */
  private async rangesToCompare(peer: string): Promise<[number, number][]> {
    const all: [number, number][] = [[0, DIGEST_BUCKETS - 1]];
    if (!DIGESTS) return all;
    const theirs = await this.d.host
      .request<{ digests?: unknown }>(peer, 'frontier_digests', {}, SYNC)
      .catch(() => undefined);
    if (!isHex(theirs?.digests, DIGEST_BUCKETS * DIGEST_BYTES)) return all;
    const slice = new Slicer();
    const mine = await this.d.ledger.frontierDigests.all(() => slice.yieldIfDue());
    const ranges = differingRanges(mine, hexToBytes(theirs.digests as string));
    this.progress.buckets_skipped += DIGEST_BUCKETS - ranges.reduce((n, [a, b]) => n + b - a + 1, 0);
    return ranges;
  }

  /** A peer's frontier entry against this node's account: what to pull, if anything, into `needs`. */
  private compareFrontier(e: FrontierEntry, until: string | undefined, needs: ChainNeed[]): void {
    if (!isHex(e.account, 32) || !Number.isSafeInteger(e.height) || e.height < 1) return;
    // Past the range asked for (its digests were equal): nothing to compare there.
    if (until !== undefined && e.account >= until) return;
    const mine = this.d.ledger.accountHead(e.account);
    if (!mine) {
      needs.push({ account: e.account, from: 1, to: e.height });
      return;
    }
    if (e.height < mine.height || e.frontier === mine.frontier) return;
    if (e.height === mine.height) {
      // Diverged at the top (a fork decided elsewhere): re-read everything not final here. A
      // sibling of one of our blocks is staged as a conflict, and the votes settle it.
      needs.push({ account: e.account, from: mine.final_height + 1, to: e.height });
      return;
    }
    // Behind: what this node holds (durably: a catch-up cut short resumes here) is not pulled
    // again, unless the peer's next block does not follow this node's frontier (diverged).
    needs.push({
      account: e.account,
      from: mine.height + 1,
      to: e.height,
      frontier: mine.frontier,
      divergedFrom: mine.final_height + 1,
    });
  }

  /** True while a sync page is applying the block: history is not relayed as gossip. */
  isApplying(hash: string): boolean {
    return this.applying.has(hash);
  }

  private askVotes(hashes: string[]): void {
    this.voteQueue.push(hashes);
    this.pumpVotes();
  }

  private pumpVotes(): void {
    while (this.votesRunning < VOTE_FETCHES && this.voteQueue.length > 0) {
      const hashes = this.voteQueue.shift()!;
      this.votesRunning += 1;
      void this.fetchVotes(hashes, false, true)
        .catch((err: unknown) =>
          this.d.log?.debug({ err: (err as Error).message }, 'final votes not fetched'),
        )
        .finally(() => {
          this.votesRunning -= 1;
          this.pumpVotes();
          if (this.votesRunning === 0 && this.voteQueue.length === 0)
            for (const done of this.votesIdle.splice(0)) done();
        });
    }
  }

  /** Resolves once every final-vote request queued so far has been answered and counted. */
  private votesDone(): Promise<void> {
    if (this.votesRunning === 0 && this.voteQueue.length === 0) return Promise.resolve();
    return new Promise((r) => this.votesIdle.push(r));
  }

  /**
   * Asks the peers in turn for their final votes on `hashes`, each only for the hashes still not
   * final once the previous peer's votes were counted: a network whose peers share a
   * representative is not asked for the same final vote by every one of them. `fresh`: the blocks
   * were just applied, so none is final yet and the first peer is asked for all without a look-up.
   */
  private async fetchVotes(hashes: string[], withConflicts: boolean, fresh = false): Promise<void> {
    const { host, ledger } = this.d;
    let first = true;
    for (const p of host.peers()) {
      const open = first && fresh ? [...hashes] : hashes.filter((h) => !ledger.isFinal(h));
      first = false;
      if (withConflicts)
        for (const c of ledger.listConflicts())
          for (const h of c.candidates) if (!open.includes(h)) open.push(h);
      if (open.length === 0) return;
      let got = 0;
      // The slices' requests go out together (the peer signs while this node counts).
      const answers: Promise<FinalVotesAnswer>[] = [];
      // `batches`: this node takes its votes batch-signed (a peer that does not know the flag, an
      // older version, ignores it and answers single votes only).
      for (let i = 0; i < open.length; i += SYNC_PAGE)
        answers.push(
          host
            .request<FinalVotesAnswer>(
              p.id,
              'final_votes',
              { hashes: open.slice(i, i + SYNC_PAGE), batches: true },
              SYNC,
            )
            .catch((): FinalVotesAnswer => ({ votes: [] })),
        );
      for (const pending of answers) {
        const answer = await pending;
        if (Array.isArray(answer.votes)) {
          got += answer.votes.length;
          this.finalVotesIn.single += answer.votes.length;
          await this.countVotes(answer.votes);
        }
        if (Array.isArray(answer.batches)) {
          const counted = await countEncodedVoteBatches(answer.batches, this.d);
          got += counted;
          this.finalVotesIn.batched += counted;
        }
      }
      if (got === 0) continue;
      // Decisions are written by consensus in a batch of their own: counted before the next peer.
      await new Promise((r) => setImmediate(r));
      await ledger.idle();
    }
  }

  /**
   * Hands votes to consensus, their signatures checked first in the verify pool (worker threads)
   * and counted in short slices (vote-intake.ts).
   */
  private async countVotes(raw: unknown[]): Promise<void> {
    const slice = new Slicer();
    const votes: NonNullable<ReturnType<typeof voteFromJson>>[] = [];
    for (const r of raw) {
      await slice.yieldIfDue();
      const v = voteFromJson(r);
      if (v) votes.push(v);
    }
    await countVotes(votes, this.d);
  }

  /**
   * One page of several accounts' chains from `peer`; from a peer that does not know `chains` (an
   * older version), account by account with `chain`. A helper peer that fails is replaced by the
   * round's peer, which reported these blocks.
   */
  private async fetchChains(peer: string, wants: ChainWant[], roundPeer: string): Promise<ChainPage[]> {
    try {
      if (!this.noChains.has(peer)) {
        try {
          const r = await this.d.host.request<{ chains: ChainPage[] }>(peer, 'chains', { wants }, SYNC);
          return Array.isArray(r.chains) ? r.chains : [];
        } catch (e) {
          if (!(
            e instanceof NetError &&
            e.code === 'ERR_PEER_ANSWER' &&
            /unknown request type/.test(e.message)
          ))
            throw e;
          this.noChains.add(peer);
        }
      }
      const pages: ChainPage[] = [];
      for (const w of wants) {
        const r = await this.d.host.request<{ blocks: unknown[] }>(
          peer,
          'chain',
          { account: w.account, from: w.from, limit: Math.min(w.limit, SYNC_PAGE) },
          SYNC,
        );
        pages.push({ account: w.account, blocks: Array.isArray(r.blocks) ? r.blocks : [] });
      }
      return pages;
    } catch (e) {
      if (peer === roundPeer) throw e;
      return this.fetchChains(roundPeer, wants, roundPeer);
    }
  }

  /**
   * Answers a peer's sync requests; undefined for other types. A payload this node cannot act on is
   * a NetError ERR_BAD_REQUEST, whose message the peer gets as the answer.
   */
  async answer(type: string, payload: unknown): Promise<unknown> {
    const p = (payload ?? {}) as Record<string, unknown>;
    const limit = (v: unknown, max: number) => (typeof v === 'number' && v > 0 ? Math.min(v, max) : max);
    switch (type) {
      case 'peers':
        return { addrs: (await this.d.host.knownAddrs()).slice(0, 64) };
      case 'frontier_digests': {
        if (!DIGESTS) return undefined;
        const slice = new Slicer();
        return { digests: bytesToHex(await this.d.ledger.frontierDigests.all(() => slice.yieldIfDue())) };
      }
      case 'frontiers': {
        const max = limit(p.limit, 1000);
        const after = typeof p.after === 'string' && isHex(p.after, 32) ? p.after : undefined;
        // Exclusive: a page of one range of buckets (rangesToCompare) stops where the range ends.
        const until = typeof p.until === 'string' && isHex(p.until, 32) ? p.until : undefined;
        const entries: FrontierEntry[] = [];
        // In slices: a node catching up is asked for its frontiers by its peers' rounds, and 1,000
        // accounts held its thread 60-200 ms in one go (catch-up profile, with the GC it set off).
        // Entries read after a yield may be newer than earlier ones: each is an account's state at
        // some point of the answer, which is all a page of frontiers promises.
        const slice = new Slicer();
        for (const [account, rec] of this.d.ledger.allAccountHeads(after)) {
          if (until !== undefined && account >= until) break;
          entries.push({ account, height: rec.height, frontier: rec.frontier });
          if (entries.length >= max) break;
          await slice.yieldIfDue();
        }
        return { entries, next: entries.length >= max ? entries.at(-1)!.account : undefined };
      }
      case 'chain': {
        if (!isHex(p.account, 32)) throw new NetError('ERR_BAD_REQUEST', 'chain: account must be 64 hex');
        const from = typeof p.from === 'number' && p.from >= 1 ? p.from : 1;
        const chain = this.d.ledger.getChain(p.account, from - 1, limit(p.limit, SYNC_PAGE));
        return { blocks: (chain?.blocks ?? []).map((b) => blockToJson(b.block, 'reference')) };
      }
      case 'chains': {
        // Several accounts' chains in one answer (issue #18): at most CHAINS_ANSWER_MAX blocks in all.
        const wants = Array.isArray(p.wants) ? p.wants.slice(0, CHAINS_ACCOUNTS) : [];
        let budget = CHAINS_ANSWER_MAX;
        const chains: ChainPage[] = [];
        for (const w of wants as Record<string, unknown>[]) {
          if (budget <= 0) break;
          if (typeof w !== 'object' || w === null || !isHex(w.account, 32))
            throw new NetError('ERR_BAD_REQUEST', 'chains: each want needs an account of 64 hex');
          const from = typeof w.from === 'number' && w.from >= 1 ? w.from : 1;
          const n = limit(w.limit, budget);
          const chain = this.d.ledger.getChain(w.account, from - 1, n);
          const blocks = (chain?.blocks ?? []).map((b) => blockToJson(b.block, 'reference'));
          budget -= blocks.length;
          chains.push({ account: w.account, blocks });
        }
        return { chains };
      }
      case 'statechain': {
        const from = statechainFrom(p.from);
        return {
          blocks: this.d.statechain.listBlocks(from, limit(p.limit, 100)).map((b) => stateBlockToJson(b)),
        };
      }
      case 'final_votes': {
        const hashes = Array.isArray(p.hashes)
          ? p.hashes.filter((h): h is string => isHex(h, 32)).slice(0, SYNC_PAGE)
          : [];
        // Asked with `batches`: this node's representative's votes batch-signed, one signature
        // for up to 256 votes for the asking node to check (vote-intake.ts countEncodedVoteBatches).
        if (p.batches === true && this.answersBatches)
          return {
            votes: [],
            batches: this.d.consensus
              .finalVoteBatches(hashes, sha256Node)
              .map((b) => Buffer.from(b).toString('base64')),
          } satisfies FinalVotesAnswer;
        const votes = [];
        for (const h of hashes) {
          const v = this.d.consensus.finalVoteFor(h);
          if (v) votes.push(voteToJson(v.vote, v.weight));
        }
        return { votes } satisfies FinalVotesAnswer;
      }
      default:
        return undefined;
    }
  }
}

/**
 * The first state-chain index a `statechain` request asks for (0 when absent). A number that is not
 * a whole index would otherwise fail deep inside BigInt with a message that names no field.
 */
function statechainFrom(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (v === undefined) return 0n;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw new NetError('ERR_BAD_REQUEST', 'statechain: from must be a whole number');
}
