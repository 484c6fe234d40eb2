import { mkdirSync } from 'node:fs';
import type { Store } from '../store/store.ts';
import { decodeBlockRecord } from './codec.ts';
import {
  JournalWriter,
  journalFiles,
  type JournalRead,
  readJournal,
  removeJournalFiles,
} from './journal-file.ts';

/**
 * The ledger's write-ahead journal (issue #18). A group of block writes is applied in its LMDB
 * transaction as before (readers see it once committed, or at once in an open write batch:
 * store/write-batch.ts) and its effects are appended to the journal in the same transaction callback;
 * the group is answered once LMDB committed it (or it is in the open batch) AND the journal synced
 * it, without waiting for LMDB's own flush (two syncs, data then meta page) behind it. The
 * transaction also records the group's sequence number under JOURNAL_SEQ_KEY, so a restart knows
 * which groups LMDB holds durably: the journal's groups past it are replayed through the ledger's
 * normal path (submitBatch, finalize, lockVote), where a block already present is a duplicate and a
 * final height is never lowered, so nothing is applied twice.
 *
 * Only groups made of block, finalize and commit-lock writes are journaled; a group with a conflict
 * resolution, a staged candidate or a lease archive, or one written while another store write waits
 * for LMDB's flush (it might depend on it), is answered after LMDB's flush as before.
 */

export const JOURNAL_SEQ_KEY = 'journal_seq';
/** A file is closed and a new one started past this many bytes; the old one goes once LMDB holds it. */
const ROTATE_BYTES = 16 * 1024 * 1024;

const GROUP = 1;
const ABORT = 2;
const BLOCK = 1;
const FINALIZE = 2;
const LOCK = 3;

/** What a journaled group did, in order. */
export type JournalEntry =
  | { kind: 'block'; record: Uint8Array; finalized: boolean }
  | { kind: 'finalize'; items: { account: string; height: number }[] }
  | { kind: 'lock'; position: string; hash: string };

export interface JournalGroup {
  seq: number;
  entries: JournalEntry[];
}

/** A journaled group's handles, for the group commit. */
export interface Journaled {
  /** Resolves once the group's frame (and every frame before it) is synced. */
  durable: Promise<void>;
  /** LMDB committed the group. */
  committed(): void;
  /** LMDB's transaction failed: the group is void (replay skips it). */
  abort(): void;
}

const text = new TextEncoder();
const untext = new TextDecoder();

export function encodeGroup(seq: number, entries: JournalEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 1 + 8 + 4;
  for (const e of entries) {
    const body =
      e.kind === 'block'
        ? e.record
        : text.encode(JSON.stringify(e.kind === 'finalize' ? e.items : [e.position, e.hash]));
    parts.push(body);
    size += 2 + 4 + body.length;
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out[0] = GROUP;
  view.setBigUint64(1, BigInt(seq), true);
  view.setUint32(9, entries.length, true);
  let at = 13;
  entries.forEach((e, i) => {
    const body = parts[i]!;
    out[at] = e.kind === 'block' ? BLOCK : e.kind === 'finalize' ? FINALIZE : LOCK;
    out[at + 1] = e.kind === 'block' && e.finalized ? 1 : 0;
    view.setUint32(at + 2, body.length, true);
    out.set(body, at + 6);
    at += 6 + body.length;
  });
  return out;
}

function encodeAbort(seq: number): Uint8Array {
  const out = new Uint8Array(9);
  out[0] = ABORT;
  new DataView(out.buffer).setBigUint64(1, BigInt(seq), true);
  return out;
}

/** A frame's payload: a group, or the abort of one. Throws on bytes it does not know. */
export function decodeFrame(payload: Uint8Array): JournalGroup | { abort: number } {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const seq = Number(view.getBigUint64(1, true));
  if (payload[0] === ABORT) return { abort: seq };
  if (payload[0] !== GROUP) throw new Error(`journal frame of unknown kind ${payload[0]}`);
  const count = view.getUint32(9, true);
  const entries: JournalEntry[] = [];
  let at = 13;
  for (let i = 0; i < count; i++) {
    const kind = payload[at]!;
    const flags = payload[at + 1]!;
    const length = view.getUint32(at + 2, true);
    const body = payload.subarray(at + 6, at + 6 + length);
    at += 6 + length;
    if (kind === BLOCK) entries.push({ kind: 'block', record: new Uint8Array(body), finalized: flags === 1 });
    else if (kind === FINALIZE)
      entries.push({
        kind: 'finalize',
        items: JSON.parse(untext.decode(body)) as { account: string; height: number }[],
      });
    else if (kind === LOCK) {
      const [position, hash] = JSON.parse(untext.decode(body)) as [string, string];
      entries.push({ kind: 'lock', position, hash });
    } else throw new Error(`journal entry of unknown kind ${kind}`);
  }
  return { seq, entries };
}

/** What a start finds in the journal directory. */
export interface JournalState {
  /** Groups past LMDB's recorded one, not aborted, in order: to replay. */
  pending: JournalGroup[];
  /** Files found (removed once the replay is durable in LMDB). */
  files: number[];
  /** Where a torn or corrupt frame ended the reading. */
  torn?: JournalRead['torn'];
  /** The first sequence number new groups may take. */
  nextSeq: number;
}

/** Reads the journal directory against the store's recorded position. */
export function readJournalState(dir: string, store: Store): JournalState {
  const read = readJournal(dir);
  const applied = Number(store.meta.get(JOURNAL_SEQ_KEY) ?? 0);
  let maxSeq = applied;
  const groups: JournalGroup[] = [];
  const aborted = new Set<number>();
  for (const f of read.frames) {
    const d = decodeFrame(f.payload);
    if ('abort' in d) aborted.add(d.abort);
    else {
      maxSeq = Math.max(maxSeq, d.seq);
      if (d.seq > applied) groups.push(d);
    }
  }
  return {
    pending: groups.filter((g) => !aborted.has(g.seq)),
    files: read.files,
    torn: read.torn,
    nextSeq: maxSeq + 1,
  };
}

/** The ledger write paths a replay goes through (Ledger implements them). */
export interface ReplayTarget {
  submitBatch(
    blocks: ReturnType<typeof decodeBlockRecord>['block'][],
    opts: { live: boolean },
  ): Promise<({ status: string } | Error)[]>;
  finalize(items: { account: string; height: number }[]): Promise<unknown>;
  lockVote(account: string, previous: string, hash: string): Promise<void>;
}

export interface ReplayResult {
  groups: number;
  blocks: number;
  /** Blocks applied now (the rest LMDB held already: duplicates). */
  applied: number;
  /** Blocks refused on replay, with why (none expected: they were valid when first applied). */
  refused: { hash: string; error: string }[];
}

/**
 * Replays journaled groups in order through the ledger's normal write path. A block already present
 * answers `duplicate`; one refused is reported, not thrown (the rest still replays).
 */
export async function replayJournal(target: ReplayTarget, groups: JournalGroup[]): Promise<ReplayResult> {
  const out: ReplayResult = { groups: groups.length, blocks: 0, applied: 0, refused: [] };
  for (const g of groups) {
    let i = 0;
    while (i < g.entries.length) {
      const e = g.entries[i]!;
      if (e.kind === 'block') {
        const run: {
          block: ReturnType<typeof decodeBlockRecord>['block'];
          height: number;
          final: boolean;
        }[] = [];
        while (i < g.entries.length && g.entries[i]!.kind === 'block') {
          const b = g.entries[i] as Extract<JournalEntry, { kind: 'block' }>;
          const r = decodeBlockRecord(b.record);
          run.push({ block: r.block, height: r.height, final: b.finalized });
          i++;
        }
        const results = await target.submitBatch(
          run.map((r) => r.block),
          { live: false },
        );
        results.forEach((r, k) => {
          out.blocks++;
          if (r instanceof Error) out.refused.push({ hash: run[k]!.block.hash ?? '', error: r.message });
          else if (r.status === 'accepted') out.applied++;
        });
        // Final in the write that applied it (inline finality): the same decision, replayed.
        const final = run.filter((r) => r.final).map((r) => ({ account: r.block.account, height: r.height }));
        if (final.length > 0) await target.finalize(final);
        continue;
      }
      if (e.kind === 'finalize') await target.finalize(e.items);
      else {
        const cut = e.position.lastIndexOf(':');
        await target.lockVote(e.position.slice(0, cut), e.position.slice(cut + 1), e.hash).catch(() => {
          // Locked to another hash already: the store holds the lock that counts.
        });
      }
      i++;
    }
  }
  return out;
}

export interface JournalOptions {
  /** Files a start replayed and removed: their numbers are not used again. */
  replayed?: number[];
  /** A file is closed and a new one started past this many bytes (default 16 MiB). */
  rotateBytes?: number;
  /** Told once, when a write or sync first fails (the node logs it). */
  onFailure?: (e: Error) => void;
}

/** Appends journaled groups; one per node, used by the ledger's group commit. */
export class BlockJournal {
  private readonly dir: string;
  private readonly store: Store;
  private writer: JournalWriter;
  private seq: number;
  /** Syncs of closed files that later groups' answers still wait for. */
  private earlier: Promise<void> | undefined;
  /** Closed files, removed once a group after them is committed and flushed by LMDB. */
  private retiring: { index: number; beforeSeq: number; closed: Promise<void> }[] = [];

  private readonly rotateBytes: number;
  /**
   * A write or sync that failed: a file cannot be trusted past a failure (journal-file.ts), so the
   * journal takes no more groups and the ledger answers them after LMDB's flush, as without one.
   */
  private failure: Error | undefined;

  private readonly onFailure: ((e: Error) => void) | undefined;

  private constructor(dir: string, store: Store, nextSeq: number, index: number, opts: JournalOptions) {
    this.dir = dir;
    this.store = store;
    this.seq = nextSeq;
    this.rotateBytes = opts.rotateBytes ?? ROTATE_BYTES;
    this.onFailure = opts.onFailure;
    this.writer = new JournalWriter(dir, index, { onFailure: this.fail });
  }

  /** The first failure of any of its files' writes or syncs: the journal takes no more groups. */
  private readonly fail = (e: Error): void => {
    if (this.failure !== undefined) return;
    this.failure = e;
    this.onFailure?.(e);
  };

  /**
   * A new journal file numbered after any there and after `opts.replayed` (the files a start replayed
   * and removed): a name is never used twice.
   */
  static create(dir: string, store: Store, nextSeq: number, opts: JournalOptions = {}): BlockJournal {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const last = Math.max(0, ...journalFiles(dir), ...(opts.replayed ?? []));
    return new BlockJournal(dir, store, nextSeq, last + 1, opts);
  }

  /**
   * Inside the group's LMDB transaction: records the group's number in LMDB and queues its frame
   * (written and synced in the pool). Throws (aborting the transaction) if the journal has failed.
   */
  append(entries: JournalEntry[]): Journaled {
    if (this.failure) throw this.failure;
    if (this.writer.size > this.rotateBytes) this.rotate();
    const seq = this.seq;
    this.writer.append(encodeGroup(seq, entries));
    this.seq += 1;
    this.store.meta.putSync(JOURNAL_SEQ_KEY, String(seq));
    const synced = this.writer.sync();
    let durable = synced;
    if (this.earlier !== undefined) {
      durable = Promise.all([synced, this.earlier]).then(() => {});
      // Awaited once LMDB committed the group: a failure before then is not unhandled (as the writer's).
      durable.catch(() => {});
    }
    return {
      durable,
      committed: () => this.committedUpTo(seq),
      abort: () => {
        try {
          this.writer.append(encodeAbort(seq));
        } catch {
          // The group was never answered: replaying it later applies blocks their owners signed.
        }
      },
    };
  }

  /** A write or sync of the journal failed: it takes no more groups (see `failure`). */
  get failed(): Error | undefined {
    return this.failure;
  }

  private rotate(): void {
    const old = this.writer;
    this.writer = new JournalWriter(this.dir, old.index + 1, { onFailure: this.fail });
    const closed = old.close();
    const earlier = closed.then(
      () => {
        if (this.earlier === earlier) this.earlier = undefined;
      },
      (e: Error) => {
        this.fail(e);
        throw e;
      },
    );
    earlier.catch(() => {}); // seen by the groups that wait for it, if any come
    this.earlier = earlier;
    this.retiring.push({ index: old.index, beforeSeq: this.seq, closed });
  }

  /** A committed group: files closed before it are removed once LMDB has flushed that commit. */
  private committedUpTo(seq: number): void {
    const done = this.retiring.filter((r) => r.beforeSeq <= seq);
    if (done.length === 0) return;
    this.retiring = this.retiring.filter((r) => r.beforeSeq > seq);
    void Promise.all([this.store.durable(), ...done.map((r) => r.closed)])
      .then(() =>
        removeJournalFiles(
          this.dir,
          done.map((r) => r.index),
        ),
      )
      .catch(() => {
        // Left in place: a later start replays nothing of it (LMDB's recorded group is past it).
      });
  }

  /** Syncs and closes the current file (the store closes after; the next start finds nothing to replay). */
  async close(): Promise<void> {
    await this.writer.close();
    await this.earlier;
  }
}
