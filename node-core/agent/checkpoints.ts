import { randomBytes } from 'node:crypto';
import { parseJson, stringifyJson } from '../protocol/json.ts';

/**
 * Agent checkpoints (contract, Announced agent verbs; decisions D13; issue #14): named, timestamped
 * copies of the node's local, non-consensus state, a structured diff from one to now, and a rollback
 * to one. The ledger and the state chain are never part of it: a rollback cannot touch them.
 *
 * The state comes in areas (chat store, directory cache, lease holds, and the window's settings,
 * address book and wallet labels), each injected as a CheckpointArea: its entries by key, each as a
 * text (equal texts are equal entries). An area a checkpoint did not capture (it was made by an
 * older version) is left out of its diff and left alone by a rollback to it. A checkpoint is kept in the
 * store's `agent_checkpoints` database, its short description (`meta:<id>`) apart from its contents
 * (`data:<id>`), so listing reads no contents. At most `maxKept` (20) are kept: a new one pushes out
 * the oldest (never the one a rollback goes back to).
 *
 * A rollback runs in one write transaction of the store: it captures the state as it is (kept as the
 * automatic checkpoint "before rollback to <id>", the undo: rolling back to it undoes the rollback),
 * works out the diff and rewrites the areas' databases, all or nothing. Areas held in memory (the
 * directory) are replaced right after the commit, in one synchronous step.
 */

/** One kind of local state a checkpoint covers. */
export interface CheckpointArea {
  /** The area's name in answers (`chat`, `directory`, `lease_holds`). */
  readonly name: string;
  /** What one entry is called in summaries: singular and plural ("chat message", "chat messages"). */
  readonly noun: readonly [string, string];
  /** The area now, synchronously: key -> value text (equal texts mean equal entries). */
  capture(): Map<string, string>;
  /** A short view of an entry for diffs (it must not throw on a value `capture` gave). */
  summarize(key: string, value: string): unknown;
  /**
   * Inside the store's write transaction (synchronous LMDB writes only): makes the area hold exactly
   * `target`. May return a step to run once the transaction committed (in-memory state, and telling
   * running components); it must not throw.
   */
  restore(target: ReadonlyMap<string, string>): (() => void) | void;
}

/** Local state a checkpoint does not cover yet, and why (answered as `not_covered`). */
export interface NotCovered {
  area: string;
  reason: string;
}

/** The store a checkpoint book writes to (store.ts: `agentCheckpoints` and `transaction`). */
export interface CheckpointDb {
  get(key: string): string | undefined;
  getRange(opts: { start?: string; end?: string }): Iterable<{ key: string; value: string }>;
  putSync(key: string, value: string): void;
  removeSync(key: string): boolean | void;
}

export interface CheckpointsDeps {
  db: CheckpointDb;
  transaction: <T>(fn: () => T) => Promise<T>;
  areas: readonly CheckpointArea[];
  now: () => bigint;
  notCovered?: readonly NotCovered[];
  /** Checkpoints kept at most (default 20). */
  maxKept?: number;
}

/** A checkpoint as listed: without its contents. */
export interface CheckpointInfo {
  id: string;
  name: string;
  /** Unix ns. */
  created_at: bigint;
  /** Entries per area. */
  counts: Record<string, number>;
  /** Made by a rollback, before it applied (its undo). */
  automatic: boolean;
}

export interface DiffEntry {
  key: string;
  value: unknown;
}
export interface DiffChange {
  key: string;
  from: unknown;
  to: unknown;
}
export interface AreaDiff {
  added: DiffEntry[];
  removed: DiffEntry[];
  changed: DiffChange[];
}
/** By area; every covered area is present, empty lists when nothing differs. */
export type StateDiff = Record<string, AreaDiff>;

export interface RollbackResult {
  applied: boolean;
  checkpoint: CheckpointInfo;
  /** From the state before the rollback to the checkpoint's: what the rollback did (or would do). */
  diff: StateDiff;
  /** The automatic checkpoint of the state before the rollback (applied only). */
  undo_checkpoint?: CheckpointInfo;
}

export const DEFAULT_MAX_CHECKPOINTS = 20;
export const MAX_CHECKPOINT_NAME = 100;
export const CHECKPOINT_ID_PATTERN = /^[0-9a-z]{1,40}$/;

export class CheckpointNotFoundError extends Error {
  constructor(id: string) {
    super(`checkpoint ${id} not found`);
    this.name = 'CheckpointNotFoundError';
  }
}

type Captured = Map<string, Map<string, string>>;

const META = 'meta:';
const DATA = 'data:';

export class Checkpoints {
  private readonly d: CheckpointsDeps;
  readonly maxKept: number;
  /** Rollbacks and checkpoints one after the other. */
  private queue: Promise<unknown> = Promise.resolve();
  private lastId = '';

  constructor(deps: CheckpointsDeps) {
    this.d = deps;
    this.maxKept = deps.maxKept ?? DEFAULT_MAX_CHECKPOINTS;
    const names = deps.areas.map((a) => a.name);
    if (new Set(names).size !== names.length) throw new Error('checkpoint area names must be unique');
  }

  get areas(): readonly CheckpointArea[] {
    return this.d.areas;
  }

  get notCovered(): readonly NotCovered[] {
    return this.d.notCovered ?? [];
  }

  /** Captures every area now and keeps it as a checkpoint named `name`. */
  async create(name: string): Promise<CheckpointInfo> {
    return this.serial(() =>
      this.d.transaction(() => {
        const info = this.save(name, this.captureAll(), false);
        this.prune();
        return info;
      }),
    );
  }

  /** Checkpoints, newest first, without their contents. */
  list(): CheckpointInfo[] {
    const out: CheckpointInfo[] = [];
    for (const { value } of this.d.db.getRange({ start: META, end: `${META}~` })) out.push(infoOf(value));
    return out.sort(newestFirst);
  }

  info(id: string): CheckpointInfo | undefined {
    const text = this.d.db.get(META + id);
    return text === undefined ? undefined : infoOf(text);
  }

  /** From the checkpoint to now. Throws CheckpointNotFoundError. */
  diff(id: string): { checkpoint: CheckpointInfo; diff: StateDiff } {
    const checkpoint = this.info(id);
    const data = this.d.db.get(DATA + id);
    if (!checkpoint || data === undefined) throw new CheckpointNotFoundError(id);
    return { checkpoint, diff: this.diffOf(dataOf(data), this.captureAll()) };
  }

  /**
   * Makes the local state the checkpoint's. A dry run answers the diff it would apply and changes
   * nothing; a real one first keeps the state as it is as the automatic checkpoint
   * "before rollback to <id>", then applies the diff, in one transaction. Throws
   * CheckpointNotFoundError.
   */
  async rollback(id: string, opts: { dryRun: boolean }): Promise<RollbackResult> {
    return this.serial(async () => {
      if (opts.dryRun) {
        const { checkpoint, target } = this.load(id);
        return { applied: false, checkpoint, diff: this.diffOf(this.captureAll(), target) };
      }
      const after: (() => void)[] = [];
      const result = await this.d.transaction(() => {
        after.length = 0;
        const { checkpoint, target } = this.load(id);
        const now = this.captureAll();
        const diff = this.diffOf(now, target);
        const undo = this.save(`before rollback to ${id}`, now, true);
        for (const area of this.d.areas) {
          const entries = target.get(area.name);
          if (entries === undefined) continue; // not captured by this checkpoint: left alone
          const step = area.restore(entries);
          if (step) after.push(step);
        }
        this.prune(id);
        return { applied: true, checkpoint, diff, undo_checkpoint: undo };
      });
      for (const step of after) step();
      return result;
    });
  }

  private load(id: string): { checkpoint: CheckpointInfo; target: Captured } {
    const checkpoint = this.info(id);
    const data = this.d.db.get(DATA + id);
    if (!checkpoint || data === undefined) throw new CheckpointNotFoundError(id);
    return { checkpoint, target: dataOf(data) };
  }

  private captureAll(): Captured {
    const out: Captured = new Map();
    for (const area of this.d.areas) out.set(area.name, area.capture());
    return out;
  }

  /** What differs from `from` to `to`, by area, keys sorted. */
  private diffOf(from: Captured, to: Captured): StateDiff {
    const out: StateDiff = {};
    for (const area of this.d.areas) {
      const a = from.get(area.name);
      const b = to.get(area.name);
      if (a === undefined || b === undefined) continue;
      const d: AreaDiff = { added: [], removed: [], changed: [] };
      for (const key of [...new Set([...a.keys(), ...b.keys()])].sort()) {
        const x = a.get(key);
        const y = b.get(key);
        if (x === undefined) d.added.push({ key, value: area.summarize(key, y!) });
        else if (y === undefined) d.removed.push({ key, value: area.summarize(key, x) });
        else if (x !== y) d.changed.push({ key, from: area.summarize(key, x), to: area.summarize(key, y) });
      }
      out[area.name] = d;
    }
    return out;
  }

  /** Inside a transaction: writes a checkpoint. */
  private save(name: string, captured: Captured, automatic: boolean): CheckpointInfo {
    const counts: Record<string, number> = {};
    const areas: Record<string, [string, string][]> = {};
    for (const [area, entries] of captured) {
      counts[area] = entries.size;
      areas[area] = [...entries];
    }
    const info: CheckpointInfo = { id: this.newId(), name, created_at: this.d.now(), counts, automatic };
    this.d.db.putSync(DATA + info.id, stringifyJson({ areas }));
    this.d.db.putSync(META + info.id, stringifyJson(info));
    return info;
  }

  /** Inside a transaction: drops the oldest checkpoints beyond `maxKept`, never `keep`. */
  private prune(keep?: string): void {
    const all = this.list().filter((c) => c.id !== keep);
    const room = keep === undefined ? this.maxKept : this.maxKept - 1;
    for (const c of all.slice(Math.max(0, room))) {
      this.d.db.removeSync(META + c.id);
      this.d.db.removeSync(DATA + c.id);
    }
  }

  /** A short id that sorts by time: milliseconds in base 36, then 4 random base-36 characters. */
  private newId(): string {
    for (;;) {
      const id =
        Date.now().toString(36) +
        [...randomBytes(4)]
          .map((b) => (b % 36).toString(36))
          .join('')
          .slice(0, 4);
      if (id !== this.lastId && this.d.db.get(META + id) === undefined) {
        this.lastId = id;
        return id;
      }
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function newestFirst(a: CheckpointInfo, b: CheckpointInfo): number {
  if (a.created_at !== b.created_at) return a.created_at > b.created_at ? -1 : 1;
  return a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
}

function infoOf(text: string): CheckpointInfo {
  const o = parseJson(text) as Record<string, unknown>;
  const counts: Record<string, number> = {};
  for (const [k, v] of Object.entries(o.counts as Record<string, unknown>)) counts[k] = Number(v);
  return {
    id: o.id as string,
    name: o.name as string,
    created_at: BigInt(o.created_at as bigint),
    counts,
    automatic: o.automatic === true,
  };
}

function dataOf(text: string): Captured {
  const o = parseJson(text) as { areas: Record<string, [string, string][]> };
  const out: Captured = new Map();
  for (const [area, entries] of Object.entries(o.areas)) out.set(area, new Map(entries));
  return out;
}
