import type { Store } from '../store/store.ts';
import { decodeBlockRecord, encodeBlockRecord, hashKey } from './codec.ts';
import type { LedgerReads } from './reads.ts';
import type { BlockRecord } from './records.ts';
import type { SignedBlock } from './rules/index.ts';

/** Two or more blocks at one chain position, while the representatives' votes decide. */
export interface Conflict {
  account: string;
  height: number;
  previous: string;
  candidates: Set<string>;
  detected_at: bigint;
}

/** A conflict settled lately, kept for a while so `/conflicts` can show how it ended (issue #14). */
export interface ResolvedConflict extends Conflict {
  resolved_at: bigint;
  /** The block that holds the position, or null when the position itself was undone. */
  winner: string | null;
  /**
   * Each candidate's votes and their weight when the conflict settled: the vote book forgets votes
   * on settled blocks, and this is how the conflict was decided (the Node page shows it).
   */
  tally?: ReadonlyMap<string, CandidateTally>;
}

export interface CandidateTally {
  votes: number;
  weight: bigint;
}

/** How long, and how many, settled conflicts stay listed. */
export const RESOLVED_KEEP_NS = 3_600_000_000_000n;
export const RESOLVED_KEEP_MAX = 256;
/** Store keys of settled conflicts: apart from open ones (`<account>:<height>`, account in hex). */
const RESOLVED_PREFIX = 'resolved/';

export interface StagedBlock {
  block: SignedBlock;
  height: number;
}

/** The key of a chain position: `account:height`. */
export const positionKey = (account: string, height: number): string => `${account}:${height}`;

/**
 * Open conflicts and their staged candidates (reference-behavior.md 2.5). Memory is a cache of the
 * store's records; every change is written with the caller's group transaction, so a restart
 * resumes each vote where it stood.
 */
export class ConflictBook {
  private readonly store: Store;
  private readonly conflicts = new Map<string, Conflict>();
  /**
   * Each account's open conflicts (position keys): every block of an account asks whether it has
   * one, and a fork flood can hold thousands open, so that question must not walk them all.
   */
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly staged = new Map<string, StagedBlock>();
  /** Staged receives by their source's hash: a rollback that undoes a source reaches them. */
  private readonly receivesOf = new Map<string, Set<string>>();
  private readonly resolved = new Map<string, ResolvedConflict>();
  /** Reads a candidate's votes at the moment its conflict settles (consensus sets it). */
  tallyOf: ((hash: string, at: { account: string; previous: string }) => CandidateTally) | undefined;

  constructor(store: Store) {
    this.store = store;
  }

  get size(): number {
    return this.conflicts.size;
  }

  /** Reloads memory from the store (at start, and after a group whose transaction failed). */
  load(): void {
    this.conflicts.clear();
    this.byAccount.clear();
    this.staged.clear();
    this.receivesOf.clear();
    this.resolved.clear();
    for (const { key, value } of this.store.conflicts.getRange()) {
      const o = JSON.parse(value) as {
        previous: string;
        candidates: string[];
        detected_at: string;
        resolved_at?: string;
        winner?: string | null;
        tally?: Record<string, { votes: number; weight: string }>;
      };
      const at = key.lastIndexOf(':');
      if (key.startsWith(RESOLVED_PREFIX)) {
        const position = key.slice(RESOLVED_PREFIX.length);
        this.resolved.set(position, {
          account: position.slice(0, position.lastIndexOf(':')),
          height: Number(key.slice(at + 1)),
          previous: o.previous,
          candidates: new Set(o.candidates),
          detected_at: BigInt(o.detected_at),
          resolved_at: BigInt(o.resolved_at ?? '0'),
          winner: o.winner ?? null,
          ...(o.tally
            ? {
                tally: new Map(
                  Object.entries(o.tally).map(([h, t]) => [h, { votes: t.votes, weight: BigInt(t.weight) }]),
                ),
              }
            : {}),
        });
        continue;
      }
      this.open(key, {
        account: key.slice(0, at),
        height: Number(key.slice(at + 1)),
        previous: o.previous,
        candidates: new Set(o.candidates),
        detected_at: BigInt(o.detected_at),
      });
    }
    for (const { value } of this.store.staged.getRange()) {
      const r = decodeBlockRecord(value) as BlockRecord & { block: SignedBlock };
      this.hold({ block: r.block, height: r.height });
    }
  }

  /** The open conflict at a position, if any. */
  at(account: string, height: number): Conflict | undefined {
    return this.conflicts.get(positionKey(account, height));
  }

  /** An open conflict on the account, if any. */
  on(account: string): Conflict | undefined {
    for (const key of this.byAccount.get(account) ?? []) return this.conflicts.get(key);
    return undefined;
  }

  list(): Conflict[] {
    return [...this.conflicts.values()];
  }

  /** Conflicts settled within the last hour (at most RESOLVED_KEEP_MAX), oldest first. */
  listResolved(): ResolvedConflict[] {
    const cutoff = nowNs() - RESOLVED_KEEP_NS;
    return [...this.resolved.values()].filter((r) => r.resolved_at > cutoff);
  }

  stagedBlock(hash: string): StagedBlock | undefined {
    return this.staged.get(hash);
  }

  /** Opens (or extends) the conflict at a position with a staged candidate, in memory and store. */
  stage(c: Conflict, block: SignedBlock, height: number): void {
    const key = positionKey(c.account, c.height);
    this.open(key, c);
    c.candidates.add(block.hash);
    this.hold({ block, height });
    this.save(key, c);
    this.store.staged.putSync(hashKey(block.hash), encodeBlockRecord({ block, height }));
  }

  /**
   * Takes a conflict out of memory while its resolution runs, returning a function that puts it
   * back if that resolution fails (its store records are untouched until `drop`).
   */
  detach(account: string, height: number): { conflict: Conflict | undefined; restore: () => void } {
    const key = positionKey(account, height);
    const conflict = this.conflicts.get(key);
    this.close(key);
    return { conflict, restore: () => void (conflict && this.open(key, conflict)) };
  }

  /**
   * Removes a settled conflict and its staged candidates, from memory and (in this write) the store,
   * and records how it ended: `winner` holds the position, null when the position was undone.
   */
  drop(account: string, height: number, c: Conflict | undefined, winner: string | null): void {
    const key = positionKey(account, height);
    for (const h of c?.candidates ?? []) {
      this.release(h);
      this.store.staged.removeSync(hashKey(h));
    }
    this.close(key);
    this.store.conflicts.removeSync(key);
    if (!c) return;
    const tallyOf = this.tallyOf;
    const tally = tallyOf && new Map([...c.candidates].map((h) => [h, tallyOf(h, c)] as const));
    this.remember({
      ...c,
      candidates: new Set(c.candidates),
      resolved_at: nowNs(),
      winner,
      ...(tally ? { tally } : {}),
    });
  }

  /** Keeps a settled conflict listed, dropping those past the hour or beyond the count. */
  private remember(r: ResolvedConflict): void {
    const key = positionKey(r.account, r.height);
    this.resolved.delete(key);
    this.resolved.set(key, r);
    this.store.conflicts.putSync(
      RESOLVED_PREFIX + key,
      JSON.stringify({
        previous: r.previous,
        candidates: [...r.candidates],
        detected_at: r.detected_at.toString(),
        resolved_at: r.resolved_at.toString(),
        winner: r.winner,
        ...(r.tally
          ? {
              tally: Object.fromEntries(
                [...r.tally].map(([h, t]) => [h, { votes: t.votes, weight: t.weight.toString() }]),
              ),
            }
          : {}),
      }),
    );
    const cutoff = r.resolved_at - RESOLVED_KEEP_NS;
    for (const [k, old] of this.resolved) {
      if (this.resolved.size <= RESOLVED_KEEP_MAX && old.resolved_at > cutoff) break;
      this.resolved.delete(k);
      this.store.conflicts.removeSync(RESOLVED_PREFIX + k);
    }
  }

  /**
   * Drops conflict records whose position no longer exists as recorded (C-14): undone by a cascade
   * rollback, taken by a block that is not a candidate, finalized, or left with no rival because its
   * staged receives lost their sources. Returns how many it dropped.
   *
   * With `undone` (the blocks a rollback just undid) it looks only at the conflicts those can have
   * changed: on the accounts they were on, and those whose staged receive had one as its source. A
   * fork flood settles thousands of conflicts, a swap each in about half of them, and looking at
   * every open one after each swap cost 9 ms a conflict with 4,000 open (issue #18).
   */
  sweep(
    reads: Pick<LedgerReads, 'getAccount' | 'getBlock' | 'hashAt'>,
    undone?: readonly { account: string; hash: string }[],
  ): number {
    let dropped = 0;
    for (const key of undone === undefined ? [...this.conflicts.keys()] : this.touchedBy(undone)) {
      const c = this.conflicts.get(key);
      if (!c) continue;
      // A staged receive whose source a rollback removed can never be applied: it leaves the race.
      for (const h of [...c.candidates]) {
        const st = this.staged.get(h);
        if (st?.block.type !== 'receive' || reads.getBlock(st.block.source!) !== undefined) continue;
        c.candidates.delete(h);
        this.release(h);
        this.store.staged.removeSync(hashKey(h));
        this.save(key, c);
      }
      const acct = reads.getAccount(c.account);
      const onChain = acct && acct.height >= c.height ? reads.hashAt(c.account, c.height) : undefined;
      const open = acct && acct.final_height < c.height && onChain !== undefined && c.candidates.has(onChain);
      if (open && c.candidates.size > 1) continue;
      this.drop(c.account, c.height, c, onChain !== undefined && c.candidates.has(onChain) ? onChain : null);
      dropped++;
    }
    return dropped;
  }

  /** The open conflicts that undoing `undone` can have changed (see sweep). */
  private touchedBy(undone: readonly { account: string; hash: string }[]): string[] {
    const keys = new Set<string>();
    for (const { account, hash } of undone) {
      for (const key of this.byAccount.get(account) ?? []) keys.add(key);
      for (const h of this.receivesOf.get(hash) ?? []) {
        const st = this.staged.get(h);
        if (st) keys.add(positionKey(st.block.account, st.height));
      }
    }
    return [...keys];
  }

  /** A staged candidate in memory, a receive also under its source. */
  private hold(st: StagedBlock): void {
    this.staged.set(st.block.hash, st);
    const source = st.block.type === 'receive' ? st.block.source : undefined;
    if (source === undefined) return;
    const set = this.receivesOf.get(source);
    if (set) set.add(st.block.hash);
    else this.receivesOf.set(source, new Set([st.block.hash]));
  }

  /** A staged candidate out of memory (its store record is the caller's). */
  private release(hash: string): void {
    const st = this.staged.get(hash);
    if (!st) return;
    this.staged.delete(hash);
    const source = st.block.type === 'receive' ? st.block.source : undefined;
    const set = source === undefined ? undefined : this.receivesOf.get(source);
    set?.delete(hash);
    if (set?.size === 0) this.receivesOf.delete(source!);
  }

  /** An open conflict in memory, under its position and its account. */
  private open(key: string, c: Conflict): void {
    this.conflicts.set(key, c);
    const keys = this.byAccount.get(c.account);
    if (keys) keys.add(key);
    else this.byAccount.set(c.account, new Set([key]));
  }

  /** The open conflict at `key` out of memory (its store record is the caller's). */
  private close(key: string): void {
    const c = this.conflicts.get(key);
    if (!c) return;
    this.conflicts.delete(key);
    const keys = this.byAccount.get(c.account);
    keys?.delete(key);
    if (keys?.size === 0) this.byAccount.delete(c.account);
  }

  private save(key: string, c: Conflict): void {
    const record = {
      previous: c.previous,
      candidates: [...c.candidates],
      detected_at: c.detected_at.toString(),
    };
    this.store.conflicts.putSync(key, JSON.stringify(record));
  }
}

function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
