import type { Logger } from 'pino';
import type { Consensus } from '../consensus/consensus.ts';
import { FALLBACK_MS } from '../consensus/consensus.ts';
import { LedgerError } from '../ledger/errors.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Block } from '../protocol/block.ts';
import { blockToJson, decodeBlock } from '../protocol/block-json.ts';
import { isHex } from '../protocol/hex.ts';
import { NetError } from './errors.ts';
import { voteFromJson, voteToJson } from './gossip.ts';
import type { P2PHost } from './host.ts';

/**
 * Pulling what gossip failed to deliver for open elections (reference-behavior.md 2.3 point 7,
 * 2.5 "Phantoms", 9.2 C-05 and C-14), over the messenger protocol `/xe/msg/1.0.0`:
 *
 * - `vote_request {account, previous}`: the signed votes a peer holds for that election. A position
 *   still open here past the fallback delay has probably missed votes; its election is asked of the
 *   peers, and their answers are counted like gossiped votes (same checks).
 * - `block_request {hashes}`: blocks by hash, at most 64. A hash that has votes but whose body this
 *   node never received (a phantom) is asked for a bounded number of times, then abandoned, so a
 *   vote for a block that never existed cannot keep this node pulling for ever.
 */
export const MAX_BLOCK_REQUEST = 64;
export const MAX_VOTE_ANSWER = 32;

export interface ElectionPullOptions {
  /** How often open elections and phantoms are looked at (default 5 s). */
  intervalMs?: number;
  /** An election open this long pulls votes (default: the fallback delay). */
  stalledAfterMs?: number;
  /** A voted hash without a body this long is pulled as a phantom (default 30 s). */
  phantomAfterMs?: number;
  /** Pull rounds for one phantom before it is abandoned (default 3). */
  phantomTries?: number;
  /** Peers asked per round (default 4). */
  peersPerRound?: number;
}

export interface ElectionPullDeps {
  host: Pick<P2PHost, 'peers' | 'request'>;
  consensus: Consensus;
  ledger: Ledger;
  log?: Logger;
}

export interface ElectionPullStats {
  vote_requests_sent: number;
  vote_requests_served: number;
  votes_pulled: number;
  block_requests_sent: number;
  block_requests_served: number;
  blocks_pulled: number;
  phantoms_abandoned: number;
}

export class ElectionPuller {
  private readonly d: ElectionPullDeps;
  private readonly intervalMs: number;
  private readonly stalledAfterMs: number;
  private readonly phantomAfterMs: number;
  private readonly phantomTries: number;
  private readonly peersPerRound: number;
  /** Pull rounds so far per phantom hash. */
  private readonly tries = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  readonly stats: ElectionPullStats = {
    vote_requests_sent: 0,
    vote_requests_served: 0,
    votes_pulled: 0,
    block_requests_sent: 0,
    block_requests_served: 0,
    blocks_pulled: 0,
    phantoms_abandoned: 0,
  };

  constructor(deps: ElectionPullDeps, opts: ElectionPullOptions = {}) {
    this.d = deps;
    this.intervalMs = opts.intervalMs ?? 5_000;
    this.stalledAfterMs = opts.stalledAfterMs ?? FALLBACK_MS;
    this.phantomAfterMs = opts.phantomAfterMs ?? 30_000;
    this.phantomTries = opts.phantomTries ?? 3;
    this.peersPerRound = opts.peersPerRound ?? 4;
  }

  start(): void {
    this.timer = setInterval(() => void this.round(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: votes for stalled elections, bodies for phantoms. Rounds never overlap. */
  async round(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const peers = this.d.host
        .peers()
        .slice(0, this.peersPerRound)
        .map((p) => p.id);
      await this.pullVotes(peers);
      await this.pullPhantoms(peers);
    } catch (err) {
      this.d.log?.warn({ err: (err as Error).message }, 'election pull round failed');
    } finally {
      this.busy = false;
    }
  }

  private async pullVotes(peers: string[]): Promise<void> {
    const stalled = this.d.consensus.stalledElections(this.stalledAfterMs);
    for (const election of stalled) {
      for (const peer of peers) {
        this.stats.vote_requests_sent += 1;
        const answer = await this.d.host
          .request<{ votes?: unknown }>(peer, 'vote_request', election)
          .catch(() => ({ votes: [] }));
        const votes = Array.isArray(answer.votes) ? answer.votes.slice(0, MAX_VOTE_ANSWER) : [];
        for (const raw of votes) {
          const vote = voteFromJson(raw);
          // The same checks as a gossiped vote: signature, window, weight, position.
          if (vote && this.d.consensus.onVote(vote) === 'accept') this.stats.votes_pulled += 1;
        }
      }
    }
  }

  /**
   * Asks the peers for every phantom's body; a phantom still missing after `phantomTries` rounds
   * is abandoned. Tries are counted per round, not per peer, so the bound holds whatever the
   * number of peers (and a node without peers does not spend its tries).
   */
  private async pullPhantoms(peers: string[]): Promise<void> {
    const phantoms = this.d.consensus.phantoms(this.phantomAfterMs, MAX_BLOCK_REQUEST);
    const live = new Set(phantoms);
    for (const hash of this.tries.keys()) if (!live.has(hash)) this.tries.delete(hash);
    if (phantoms.length === 0 || peers.length === 0) return;
    const wanted: string[] = [];
    for (const hash of phantoms) {
      const n = this.tries.get(hash) ?? 0;
      if (n >= this.phantomTries) {
        this.tries.delete(hash);
        this.d.consensus.abandonPhantom(hash);
        this.stats.phantoms_abandoned += 1;
        this.d.log?.info({ hash }, 'phantom abandoned: no peer has its block');
        continue;
      }
      this.tries.set(hash, n + 1);
      wanted.push(hash);
    }
    if (wanted.length === 0) return;
    for (const peer of peers) {
      this.stats.block_requests_sent += 1;
      const answer = await this.d.host
        .request<{ blocks?: unknown }>(peer, 'block_request', { hashes: wanted })
        .catch(() => ({ blocks: [] }));
      const blocks = Array.isArray(answer.blocks) ? answer.blocks.slice(0, MAX_BLOCK_REQUEST) : [];
      for (const raw of blocks) {
        let block: Block;
        try {
          block = decodeBlock(raw);
        } catch {
          continue;
        }
        if (!block.hash || !wanted.includes(block.hash)) continue;
        try {
          await this.d.ledger.submit(block, { live: false });
          this.stats.blocks_pulled += 1;
          this.tries.delete(block.hash);
        } catch (e) {
          if (!(e instanceof LedgerError)) throw e;
          this.d.log?.debug({ hash: block.hash, err: e.message }, 'pulled block refused');
        }
      }
    }
  }

  /**
   * Answers a peer's `vote_request` and `block_request`; undefined for other types. A payload this
   * node cannot act on is a NetError ERR_BAD_REQUEST, whose message the peer gets as the answer.
   */
  answer(type: string, payload: unknown): unknown {
    const p = (payload ?? {}) as Record<string, unknown>;
    switch (type) {
      case 'vote_request': {
        if (!isHex(p.account, 32))
          throw new NetError('ERR_BAD_REQUEST', 'vote_request: account must be 64 hex');
        if (!(p.previous === '0' || isHex(p.previous, 32)))
          throw new NetError('ERR_BAD_REQUEST', 'vote_request: previous must be 64 hex or "0"');
        this.stats.vote_requests_served += 1;
        const votes = this.d.consensus.votesAt(p.account, p.previous as string, MAX_VOTE_ANSWER);
        return { votes: votes.map((v) => voteToJson(v.vote, v.weight)) };
      }
      case 'block_request': {
        const hashes = Array.isArray(p.hashes)
          ? p.hashes.filter((h): h is string => isHex(h, 32)).slice(0, MAX_BLOCK_REQUEST)
          : [];
        this.stats.block_requests_served += 1;
        const blocks = [];
        for (const h of hashes) {
          const b = this.d.ledger.getBlock(h)?.block ?? this.d.ledger.stagedBlock(h)?.block;
          if (b) blocks.push(blockToJson(b, 'reference'));
        }
        return { blocks };
      }
      default:
        return undefined;
    }
  }
}
