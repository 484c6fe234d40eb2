import type { Logger } from 'pino';
import type { Consensus } from '../consensus/consensus.ts';
import { LedgerError } from '../ledger/errors.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { blockToJson, decodeBlock } from '../protocol/block-json.ts';
import { isHex } from '../protocol/hex.ts';
import type { JsonPath, JsonValue } from '../protocol/json.ts';
import { decodeStateBlock, stateBlockToJson } from '../protocol/statechain.ts';
import { StateChainError, type StateChain } from '../statechain/statechain.ts';
import { NetError } from './errors.ts';
import { voteFromJson, voteToJson } from './gossip.ts';
import type { P2PHost } from './host.ts';

/**
 * Catching up (issue "The network", item 3): a node that starts late or was offline compares its
 * account frontiers with a peer's, pulls the blocks it lacks (state chain first: the ledger reads
 * it), applies them through the same validation as any block, and asks its peers' representatives
 * for final votes on what it pulled, so that history it missed becomes final here too.
 * Progress (blocks known, left, an estimate) is reported in /ready and /node.
 */
export const SYNC_PAGE = 500;
const ROUND_EVERY_MS = 30_000;
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
}

export interface SyncDeps {
  host: P2PHost;
  ledger: Ledger;
  statechain: StateChain;
  consensus: Consensus;
  now: () => bigint;
  log?: Logger;
}

interface FrontierEntry {
  account: string;
  height: number;
  frontier: string;
}

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
  };

  constructor(deps: SyncDeps) {
    this.d = deps;
  }

  start(): void {
    this.timer = setInterval(() => {
      const peer = this.d.host.peers()[0];
      if (peer) this.request(peer.id);
    }, ROUND_EVERY_MS);
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

    // Frontiers: what the peer has that this node does not.
    const needs: { account: string; from: number; to: number }[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await host.request<{ entries: FrontierEntry[]; next?: string }>(
        peer,
        'frontiers',
        { after, limit: 1000 },
        SYNC,
      );
      for (const e of page.entries) {
        if (!isHex(e.account, 32) || !Number.isSafeInteger(e.height) || e.height < 1) continue;
        const mine = ledger.getAccount(e.account);
        if (!mine) {
          needs.push({ account: e.account, from: 1, to: e.height });
          continue;
        }
        if (e.height < mine.height || e.frontier === mine.frontier) continue;
        // Behind, or diverged (a fork decided elsewhere): re-read everything not final here. A
        // sibling of one of our blocks is staged as a conflict, and the votes settle it.
        needs.push({ account: e.account, from: mine.final_height + 1, to: e.height });
      }
      if (!page.next) break;
      after = page.next;
    }
    const total = needs.reduce((s, n) => s + (n.to - n.from + 1), 0);
    this.progress.blocks_known = total;
    this.progress.blocks_left = total;
    const started = performance.now();
    const pulled: string[] = [];

    // Pull and apply in passes: a receive may need a send from an account later in the list.
    let progressMade = true;
    while (needs.length > 0 && progressMade && !this.stopped) {
      progressMade = false;
      for (let i = 0; i < needs.length;) {
        const n = needs[i]!;
        const applied = await this.pullChain(peer, n, pulled);
        if (applied > 0) {
          progressMade = true;
          this.progress.blocks_left = Math.max(0, this.progress.blocks_left - applied);
          const secs = (performance.now() - started) / 1000;
          const done = total - this.progress.blocks_left;
          this.progress.estimate_seconds =
            done > 0 ? Math.round((this.progress.blocks_left * secs) / done) : null;
        }
        if (n.from > n.to) needs.splice(i, 1);
        else i++;
      }
    }

    // Final votes, from every peer that represents weight, for everything not final here: what was
    // pulled, and what was left unfinalized when this node stopped (its votes went by meanwhile).
    const wanted = new Set(pulled);
    for (const account of ledger.unfinalizedAccounts()) {
      const a = ledger.getAccount(account);
      for (let h = (a?.final_height ?? 0) + 1; a && h <= a.height && wanted.size < 50_000; h++) {
        const hash = ledger.hashAt(account, h);
        if (hash) wanted.add(hash);
      }
    }
    const open = [...wanted];
    for (const p of host.peers()) {
      for (let i = 0; i < open.length; i += SYNC_PAGE) {
        const hashes = open.slice(i, i + SYNC_PAGE).filter((h) => !ledger.getBlock(h)?.finalized);
        for (const c of ledger.listConflicts())
          for (const h of c.candidates) if (!hashes.includes(h)) hashes.push(h);
        if (hashes.length === 0) continue;
        const answer = await host
          .request<{ votes: unknown[] }>(p.id, 'final_votes', { hashes }, SYNC)
          .catch(() => ({ votes: [] }));
        for (const v of answer.votes) {
          const vote = voteFromJson(v);
          if (vote) this.d.consensus.onVote(vote);
        }
      }
    }
  }

  /** Pulls and applies one account's missing blocks; returns how many were applied. */
  private async pullChain(
    peer: string,
    n: { account: string; from: number; to: number },
    pulled: string[],
  ): Promise<number> {
    let applied = 0;
    while (n.from <= n.to) {
      const page = await this.d.host.request<{ blocks: unknown[] }>(
        peer,
        'chain',
        { account: n.account, from: n.from, limit: Math.min(SYNC_PAGE, n.to - n.from + 1) },
        SYNC,
      );
      if (page.blocks.length === 0) return applied;
      for (const raw of page.blocks) {
        const block = decodeBlock(raw);
        try {
          const r = await this.d.ledger.submit(block, { live: false });
          if (r.status !== 'duplicate') pulled.push(block.hash!);
        } catch (e) {
          // Transient (a dependency not here yet): try again in a later pass.
          if (e instanceof LedgerError && e.retryable) return applied;
          throw e;
        }
        n.from += 1;
        applied += 1;
      }
    }
    return applied;
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
      case 'frontiers': {
        const max = limit(p.limit, 1000);
        const after = typeof p.after === 'string' && isHex(p.after, 32) ? p.after : undefined;
        const entries: FrontierEntry[] = [];
        for (const [account, rec] of this.d.ledger.allAccounts(after)) {
          entries.push({ account, height: rec.height, frontier: rec.frontier });
          if (entries.length >= max) break;
        }
        return { entries, next: entries.length >= max ? entries.at(-1)!.account : undefined };
      }
      case 'chain': {
        if (!isHex(p.account, 32)) throw new NetError('ERR_BAD_REQUEST', 'chain: account must be 64 hex');
        const from = typeof p.from === 'number' && p.from >= 1 ? p.from : 1;
        const chain = this.d.ledger.getChain(p.account, from - 1, limit(p.limit, SYNC_PAGE));
        return { blocks: (chain?.blocks ?? []).map((b) => blockToJson(b.block, 'reference')) };
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
        const votes = [];
        for (const h of hashes) {
          const v = this.d.consensus.finalVoteFor(h);
          if (v) votes.push(voteToJson(v.vote, v.weight));
        }
        return { votes };
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
