import { LedgerError } from '../ledger/errors.ts';
import type { SubmitResult } from '../ledger/ledger.ts';
import type { Block } from '../protocol/block.ts';
import { decodeBlock } from '../protocol/block-json.ts';
import { NetError } from './errors.ts';

/**
 * Pulling account chains in pages (issue #18). A catch-up used to pull one account at a time and
 * apply one block per durable commit, so it waited on a round trip per account and a disk flush per
 * block. Here a page carries the missing blocks of many accounts (`chains` requests, up to
 * CHAINS_PAGE blocks), the next pages are already on their way while one is applied, and a page is
 * applied as one batch (Ledger.submitBatch: the same checks as any block, one commit for the page).
 */

/**
 * Blocks per `chains` answer (about 0.7 KB each as JSON: well inside the 8 MiB answer cap). 100, not
 * 250: the joining node parses an answer in one piece on its thread (up to 8 ms for 250 blocks), and
 * with 100 the catch-up's event-loop delay p99 was 19.2 and 18.4 ms against 21.3 and 20.7 ms (one
 * peer, 100,000 blocks, runs alternating), the catch-up 3-5 % longer.
 */
export const CHAINS_PAGE = 100;
/**
 * The most blocks a `chains` answer of this node holds: more than it asks for itself, as earlier
 * versions ask for 250 and would take a shorter answer for a chain's end (and set the account aside).
 */
export const CHAINS_ANSWER_MAX = 250;
/** Accounts per `chains` request: 200 entries of about 100 bytes stay inside the 64 KiB request cap. */
export const CHAINS_ACCOUNTS = 200;
/** Pages requested ahead of the one being applied, per peer pulled from. */
const AHEAD_PER_PEER = 4;

/** What one account lacks: heights `from` to `to` (inclusive). */
export interface ChainNeed {
  account: string;
  from: number;
  to: number;
  /**
   * Where to read from instead when the peer's block at `from` does not follow this node's
   * frontier (the chains diverged: a fork decided elsewhere): the first height not final here.
   */
  divergedFrom?: number;
  /** This node's frontier, which the block at `from` must follow unless the chains diverged. */
  frontier?: string;
}

export interface ChainWant {
  account: string;
  from: number;
  limit: number;
}

export interface ChainPage {
  account: string;
  blocks: unknown[];
}

export interface PullDeps {
  /** Asks `peer` for the chains' blocks; a peer that cannot answer `chains` throws ERR_PEER_ANSWER. */
  fetch(peer: string, wants: ChainWant[]): Promise<ChainPage[]>;
  apply(blocks: Block[]): Promise<(SubmitResult | LedgerError)[]>;
  /** Called after each applied page with what it applied (duplicates included) and what was new. */
  applied(count: number, fresh: string[]): void;
  stopped(): boolean;
}

export interface PullStats {
  /** Blocks received from peers in `chains` and `chain` answers. */
  blocks_pulled: number;
  /** Of those, blocks this node already held. */
  duplicates: number;
  pages: number;
}

/**
 * Pulls and applies `needs` from `peers` (the first is the round's peer; pages rotate over all of
 * them in the first pass, later passes ask the first only) in passes: a receive may need a send from
 * an account later in the list, which the next pass finds applied. Ends when every need is met or a
 * pass makes no progress. Throws when a peer sends a block this node refuses for good.
 */
export async function pullChains(
  deps: PullDeps,
  peers: string[],
  needs: ChainNeed[],
  stats: PullStats,
): Promise<void> {
  let open = needs.filter((n) => n.from <= n.to);
  for (let pass = 0; open.length > 0 && !deps.stopped(); pass++) {
    const progressed = await onePass(deps, pass === 0 ? peers : peers.slice(0, 1), open, stats);
    open = open.filter((n) => n.from <= n.to);
    if (!progressed) return;
  }
}

async function onePass(
  deps: PullDeps,
  peers: string[],
  needs: ChainNeed[],
  stats: PullStats,
): Promise<boolean> {
  /** Accounts set aside for the rest of this pass: a block not applicable yet, or a short answer. */
  const paused = new Set<string>();
  const byAccount = new Map(needs.map((n) => [n.account, n]));
  /** Next height to ask for, per account (ahead of `from` while pages are in flight). */
  const planned = new Map(needs.map((n) => [n.account, n.from]));
  let cursor = 0;
  let progressed = false;

  const plan = (): ChainWant[] => {
    const wants: ChainWant[] = [];
    let budget = CHAINS_PAGE;
    while (cursor < needs.length && budget > 0 && wants.length < CHAINS_ACCOUNTS) {
      const n = needs[cursor]!;
      const from = planned.get(n.account)!;
      const left = n.to - from + 1;
      if (left <= 0 || paused.has(n.account)) {
        cursor++;
        continue;
      }
      const limit = Math.min(left, budget);
      wants.push({ account: n.account, from, limit });
      planned.set(n.account, from + limit);
      budget -= limit;
      if (limit === left) cursor++;
    }
    return wants;
  };

  let turn = 0;
  const request = (): { wants: ChainWant[]; answer: Promise<ChainPage[]> } | undefined => {
    const wants = plan();
    if (wants.length === 0) return undefined;
    const peer = peers[turn++ % peers.length]!;
    const answer = deps.fetch(peer, wants);
    answer.catch(() => {}); // awaited in order below; a failure is handled there
    return { wants, answer };
  };

  const inFlight: { wants: ChainWant[]; answer: Promise<ChainPage[]> }[] = [];
  const fill = () => {
    while (inFlight.length < AHEAD_PER_PEER * peers.length) {
      const r = request();
      if (!r) return;
      inFlight.push(r);
    }
  };
  fill();
  while (inFlight.length > 0 && !deps.stopped()) {
    const { wants, answer } = inFlight.shift()!;
    const pages = await answer;
    fill();
    stats.pages += 1;
    const batch: Block[] = [];
    const spans: { need: ChainNeed; start: number; count: number }[] = [];
    for (const want of wants) {
      const need = byAccount.get(want.account)!;
      const page = Array.isArray(pages) ? pages.find((p) => p?.account === want.account) : undefined;
      // Never more than asked for: a page must not run past what later pages of the account carry.
      const blocks = Array.isArray(page?.blocks) ? page.blocks.slice(0, want.limit) : [];
      stats.blocks_pulled += blocks.length;
      // A short answer: the peer has no more (or an earlier page of the account was set aside).
      if (blocks.length < want.limit) paused.add(want.account);
      if (paused.has(want.account) && want.from !== need.from) continue;
      if (blocks.length === 0) continue;
      const start = batch.length;
      for (const raw of blocks) batch.push(decodeBlock(raw));
      // The chains diverged: this node's frontier is not the peer's block before `from`.
      if (
        need.frontier !== undefined &&
        want.from === need.from &&
        batch[start]!.previous !== need.frontier
      ) {
        batch.length = start;
        paused.add(need.account);
        need.from = need.divergedFrom ?? need.from;
        need.frontier = undefined;
        progressed = true;
        continue;
      }
      need.frontier = undefined;
      spans.push({ need, start, count: blocks.length });
    }
    if (batch.length === 0) continue;
    const outcomes = await deps.apply(batch);
    let count = 0;
    const fresh: string[] = [];
    for (const { need, start, count: n } of spans) {
      for (let i = start; i < start + n; i++) {
        const o = outcomes[i]!;
        if (o instanceof LedgerError) {
          // Transient (a dependency not here yet): the account waits for a later pass.
          if (o.retryable) {
            paused.add(need.account);
            break;
          }
          throw new NetError('ERR_BAD_BLOCK', `peer sent a block this node refuses: ${o.message}`, {
            cause: o,
          });
        }
        if (o.status === 'duplicate') stats.duplicates += 1;
        else fresh.push(o.block.hash);
        need.from += 1;
        count += 1;
      }
    }
    if (count > 0) {
      progressed = true;
      deps.applied(count, fresh);
    }
  }
  return progressed;
}
