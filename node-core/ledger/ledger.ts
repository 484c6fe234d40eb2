import { FrontierDigests } from './frontier-digests.ts';
import { BoundedMap } from '../bounded-map.ts';
import { type Block, encodeCanonical, ZERO_HASH } from '../protocol/block.ts';
import { type HashedBlock, hashBlockNode } from '../fastpath/block-hash.ts';
import { bytesEqualHex, hexToBytes } from '../protocol/hex.ts';
import { addressFromPublicKey, type Keyset, type Verifier } from '../protocol/keys.ts';
import { ASSETS } from '../protocol/units.ts';
import type { StateChain } from '../statechain/statechain.ts';
import type { Store } from '../store/store.ts';
import { LedgerError } from './errors.ts';
import type { AccountRecord, BlockRecord } from './records.ts';
import {
  accountKey,
  chainKey,
  decodePending,
  encodeAccount,
  encodeBlockRecord,
  encodePending,
  hashKey,
  pendingKey,
  writeSeq,
} from './codec.ts';
import {
  type CandidateTally,
  type Conflict,
  ConflictBook,
  type ResolvedConflict,
  type StagedBlock,
} from './conflict-book.ts';
import { GroupCommit, type Outcome } from './group-commit.ts';
import {
  BlockJournal,
  type JournalEntry,
  type Journaled,
  readJournalState,
  replayJournal,
  type ReplayResult,
} from './block-journal.ts';
import { removeJournalFiles } from './journal-file.ts';
import { LedgerReads } from './reads.ts';
import { Rollback } from './rollback.ts';
import { Staging } from './staging.ts';
import type { WriteContext } from './write-context.ts';
import type { CertificateBook } from '../leasing/certificate-book.ts';
import { LedgerLeasing } from '../leasing/ledger-leasing.ts';
import type { LeaseBook } from '../leasing/lease-book.ts';
import type { ReputationBook } from '../leasing/reputation.ts';
import type { LeaseTiming } from '../leasing/timing.ts';
import { addSupply, CountersBook } from './counters.ts';
import { GroupWeights, RepWeights, type WeightLookup, type WeightView } from './rep-weights.ts';
import { applyTypeRule, type Effects, type RuleView, type SignedBlock } from './rules/index.ts';

/**
 * The ledger: validates blocks in the order reference-behavior.md section 3.1 gives and applies each
 * as one atomic, durable store transaction. Leasing's part of it lives in leasing/ledger-leasing.ts.
 */

/** Signature verification that may run off the main thread (a worker pool in the node). */
export interface AsyncVerifier {
  verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): Promise<boolean>;
}

export interface LedgerDeps {
  store: Store;
  statechain: StateChain;
  verifier: AsyncVerifier;
  /** Synchronous verifier for the rare multisig blocks, checked inside the write transaction. */
  verifySync: Verifier;
  /** The 8-byte BLAKE2b proof-of-work digest as a big-endian u64. */
  powHash: (target: Uint8Array, nonce: bigint) => bigint;
  /** Node clock, Unix nanoseconds. */
  now: () => bigint;
  /** Performance certificates known to this node (none: every lease waits for its certificate). */
  certificates?: Pick<CertificateBook, 'get'>;
  /** The network's lease time windows (pinned by its genesis; the defaults without one). */
  leaseTiming?: () => LeaseTiming;
}

export type { SignedBlock } from './rules/index.ts';
export type { PendingEntry, StoredBlock } from './reads.ts';

export interface CommittedBlock {
  block: SignedBlock;
  height: number;
  /** Finalized in the same transaction (see setInlineFinality). */
  finalized: boolean;
}

/**
 * Decides, inside the write transaction, whether a block is final as soon as it is applied: true
 * only where consensus would finalize it at once (the block's dependencies are final, and the node's
 * own votes hold the quorum or final votes reaching it arrived before the block). `before` is the
 * account before the block.
 */
export type InlineFinality = (
  block: SignedBlock,
  before: AccountRecord | undefined,
  weights: () => WeightLookup,
) => boolean;

export interface SubmitResult {
  /** 'conflict': a second block on a taken, unfinalized position, staged for the vote (decisions D8). */
  status: 'accepted' | 'duplicate' | 'conflict';
  block: SignedBlock;
  height: number;
  /** Final as soon as it was applied. */
  finalized?: boolean;
}

export interface SubmitOptions {
  /** Live submissions (HTTP, gossip) check the timestamp against the node clock; sync does not. */
  live: boolean;
}

export const LIVE_WINDOW_NS = 3_600_000_000_000n;
/** Keys of accounts being opened that the ledger keeps at most (Ledger.declaredKeys; the last half at least). */
const MAX_DECLARED_KEYS = 4096;
/** The account index's value: its keys are all it holds. */
const NO_VALUE = new Uint8Array(0);
/**
 * Where putBlock builds a block's chain entry (Ledger.putBlock). Longer than the entry's 40 bytes so that
 * V8 keeps it off its heap from the start, where lmdb-js can keep its address.
 */
const CHAIN_ENTRY = new Uint8Array(128).subarray(0, 40);
/**
 * Prechecked blocks the ledger remembers at most (Ledger.prechecked; the last half of them at least: a
 * gossiped block is submitted a batch after its precheck).
 */
const MAX_PRECHECKED = 10_000;
/**
 * Block types whose apply refuses before its first write (applyBlock's checks, or staging's) and
 * writes only records of its own: a group of these alone goes straight into an open write batch,
 * without a child transaction (GroupCommit's `direct`; the common case at ingest). The lease family
 * (undo entries, a cancel's unwinding), multisig and genesis keep the child transaction.
 */
const DIRECT_TYPES = new Set(['send', 'receive', 'claim', 'burn', 'mint']);
/** Types that need the full multisig threshold (reference-behavior.md section 3.1 step 8). */
const SPENDING_TYPES = new Set(['send', 'burn', 'lease', 'multisig_open', 'multisig_update', 'mint']);

type CommitListener = (committed: CommittedBlock[]) => void;

export class Ledger extends LedgerReads {
  private readonly sc: StateChain;
  private readonly verifier: AsyncVerifier;
  private readonly verifySync: Verifier;
  private readonly powHash: (target: Uint8Array, nonce: bigint) => bigint;
  private readonly now: () => bigint;
  readonly counters: CountersBook;
  /** Per-bucket digests of the frontiers, kept up to date by every account write (sync rounds). */
  readonly frontierDigests = new FrontierDigests((b) => this.accountHeadsInBucket(b));
  /** What the type rules read: this ledger's store and state chain as they stand. */
  private readonly ruleView: RuleView;
  /** Leasing's part of the write path: lease records, reputation, undo entries, archive. */
  readonly leasing: LedgerLeasing;
  /** Undoing blocks (conflict resolution, cancel-wins). */
  private readonly rollback: Rollback;
  /** Judging and staging a block on a taken chain position. */
  private readonly staging: Staging;

  /** Lease records (leasing/lease-book.ts). */
  get leases(): LeaseBook {
    return this.leasing.leases;
  }

  /** Lease reputation (leasing/reputation.ts). */
  get reputation(): ReputationBook {
    return this.leasing.reputation;
  }
  /** Submissions in flight by hash: a resubmission of the same signed block shares the outcome. */
  private readonly inflight = new Map<string, { block: Block; outcome: Promise<SubmitResult> }>();
  /**
   * Keys declared by opening blocks seen lately (single-key accounts), so that a later block of an
   * account not yet opened here is verified at once instead of waiting for its open to commit. The
   * declaration check (checkStateless) has tied each key to its account: an address is the hash of
   * its key, so this is the account's only possible key at its open whether or not that open turns
   * out valid, and applyBlock still refuses a block whose key is not the account's on disk. In the
   * three-node benchmark, keys learnt only once an open was verified left a receiver's blocks that
   * came in the same gossip batch as their open to fail the precheck and wait for the open's commit:
   * 500-1,250 of 8,000 blocks each run, checked twice and verified one by one.
   */
  private readonly declaredKeys = new BoundedMap<string, string>(MAX_DECLARED_KEYS);
  /** Open conflicts by position and their staged candidates (memory over the store's records). */
  private readonly conflictBook: ConflictBook;
  /** Conflict winners applied by committed groups, announced with the group's accepted blocks. */
  private resolvedWinners: CommittedBlock[] = [];
  /**
   * Blocks whose signature was verified by `precheck`, by hash, with that signature (bounded, the
   * oldest forgotten first): the hash does not cover the signature, so only the same signature skips
   * the check.
   */
  private readonly prechecked = new BoundedMap<string, string>(MAX_PRECHECKED);
  /**
   * Blocks (the objects themselves) that passed precheck, with their hash and the key their
   * signature was checked against: the relay path checks a gossiped block, then submits that same
   * object, which hashed it and checked its proof of work a second time (~50 µs a block on each
   * receiving node, issue #18), then read its signer's key and looked it up by hash once more.
   */
  private readonly prechecks = new WeakMap<object, { hashed: HashedBlock; keyUsed: string | undefined }>();
  private readonly listeners: CommitListener[] = [];
  private inlineFinality: InlineFinality | undefined;
  private readonly stagedListeners: ((hash: string) => void)[] = [];
  /** The write path: every block, resolution, finalization and lock goes through one group commit. */
  private readonly groups: GroupCommit<WriteOp>;

  constructor(deps: LedgerDeps) {
    super(deps.store);
    this.conflictBook = new ConflictBook(deps.store);
    this.groups = new GroupCommit<WriteOp>(deps.store, {
      apply: (ops) => this.applyGroup(ops),
      applied: (ops) => this.repsApplied(ops),
      journal: (ops, outcomes) => this.journalGroup(ops, outcomes),
      committed: () => this.counters.load(),
      delivered: (ops, outcomes) => this.announce(ops, outcomes),
      direct: (ops) => ops.every((op) => op.kind === 'block' && DIRECT_TYPES.has(op.block.type)),
      // Nothing of the group was written: the conflict cache goes back to what the store holds,
      // and winners it applied are not announced.
      failed: () => {
        this.repsWritten = undefined;
        this.repsCommitted = undefined;
        this.conflictBook.load();
        this.resolvedWinners = this.resolvedWinners.filter((w) => this.readBlock(w.block.hash) !== undefined);
      },
    });
    this.sc = deps.statechain;
    this.verifier = deps.verifier;
    this.verifySync = deps.verifySync;
    this.powHash = deps.powHash;
    this.now = deps.now;
    this.counters = new CountersBook(deps.store);
    const sc = this.sc;
    this.leasing = new LedgerLeasing({
      store: deps.store,
      statechain: deps.statechain,
      verifySync: deps.verifySync,
      certificates: deps.certificates,
      leaseTiming: deps.leaseTiming,
      ledger: {
        getAccount: (address) => this.getAccount(address),
        hashAt: (address, height) => this.hashAt(address, height),
        getBlock: (hash) => this.readBlock(hash),
        blockAt: (address, height) => this.blockAt(address, height)?.block,
      },
    });
    this.rollback = new Rollback({
      store: deps.store,
      leasing: this.leasing,
      getAccount: (a) => this.getAccount(a),
      blockAt: (a, h) => this.blockAt(a, h),
      readBlock: (h) => this.readBlock(h),
      balanceAt: (a, h, asset) => this.balanceAt(a, h, asset),
      representativeAt: (a, h) => this.representativeAt(a, h),
      addWeight: (ctx, rep, delta) => this.addWeight(ctx, rep, delta),
      writeAccount: (a, rec) => this.writeAccount(a, rec),
      removeAccount: (a) => this.removeAccount(a),
    });
    this.ruleView = {
      get faucet() {
        return sc.faucet;
      },
      isMinter: (address) => sc.minters.has(address),
      pending: (account, source) => {
        const bytes = this.store.accounts.get(pendingKey(account, source));
        return bytes === undefined ? undefined : decodePending(bytes);
      },
      block: (hash) => this.readBlock(hash)?.block,
      leasing: this.leasing.view,
    };
    this.staging = new Staging({
      store: deps.store,
      leasing: this.leasing,
      conflictBook: this.conflictBook,
      ruleView: this.ruleView,
      now: deps.now,
      getAccount: (a) => this.getAccount(a),
      hashAt: (a, h) => this.hashAt(a, h),
      blockAt: (a, h) => this.blockAt(a, h),
      readBlock: (h) => this.readBlock(h),
      balanceAt: (a, h, asset) => this.balanceAt(a, h, asset),
      applyType: (block, acct, old, view) => this.applyType(block, acct, old, false, view),
    });
  }

  /** Loads what the ledger keeps in memory; says what building the account index took, if it was built. */
  start(): { accountIndexBuilt?: { accounts: number; ms: number } } {
    this.counters.load();
    const built = this.counters.current.indexed ? undefined : this.buildAccountIndex();
    this.conflictBook.load();
    if (this.conflictBook.size > 0) this.store.root.transactionSync(() => this.conflictBook.sweep(this));
    return built === undefined ? {} : { accountIndexBuilt: built };
  }

  /**
   * Builds the account index (store.ts accountIndex) from the account records, once for a store
   * from before it or one that a version without it wrote to (the counters record lacks its flag,
   * which this version's writes carry on): one pass over the records and pending sends.
   */
  private buildAccountIndex(): { accounts: number; ms: number } {
    const t0 = performance.now();
    let n = 0;
    this.store.root.transactionSync(() => {
      // Copies: entries are removed after the walk, not under its cursor.
      const stale = [...this.store.accountIndex.getKeys()].map((k) => Uint8Array.from(k));
      for (const key of stale) this.store.accountIndex.removeSync(key);
      for (const key of this.recordKeys()) {
        this.store.accountIndex.putSync(key.subarray(0, 32), NO_VALUE);
        n += 1;
      }
      this.counters.write({ ...this.counters.read(), indexed: true });
    });
    this.counters.load();
    return { accounts: n, ms: Math.round(performance.now() - t0) };
  }

  /** Lets consensus finalize blocks in their own transaction where its votes alone decide. */
  setInlineFinality(fn: InlineFinality): void {
    this.inlineFinality = fn;
  }

  /** Called with the hash of every block staged as a conflict candidate. */
  onStaged(fn: (hash: string) => void): void {
    this.stagedListeners.push(fn);
  }

  onCommitted(fn: CommitListener): void {
    this.listeners.push(fn);
  }

  get networkId(): string {
    return this.sc.networkId;
  }

  get hasGenesis(): boolean {
    return this.counters.current.blocks > 0;
  }

  // ---- writes -----------------------------------------------------------------------------------

  /**
   * Stores the ledger genesis block of an empty ledger: treasury account final at height 1, its
   * balance delegated to the genesis representative.
   */
  async applyGenesis(block: SignedBlock): Promise<void> {
    this.repsWritten = undefined;
    this.repsCommitted = undefined;
    await this.store.transaction(() => {
      const ctx = this.openContext();
      if (ctx.counters.blocks > 0) throw new LedgerError('genesis', 'the ledger already has a genesis');
      const acct: AccountRecord = {
        height: 1,
        frontier: block.hash,
        balances: { XE: block.balance },
        representative: block.representative,
        pub_key: block.pub_key,
        final_height: 1,
        final_balances: { XE: block.balance },
        last_timestamp: block.timestamp,
      };
      this.writeAccount(block.account, acct);
      this.indexAccount(block.account);
      this.putBlock(ctx, block, 1);
      if (block.representative) this.addWeight(ctx, block.representative, block.balance);
      ctx.counters.accounts += 1;
      addSupply(ctx.counters, [{ asset: 'XE', term: 'genesis', amount: block.balance }]);
      this.closeContext(ctx);
    });
    this.counters.load();
  }

  /** Validates and applies a block; resolves once it is durable. Throws LedgerError on rejection. */
  submit(block: Block, opts: SubmitOptions): Promise<SubmitResult> {
    if (!block.hash) return Promise.reject(new LedgerError('hash_missing', 'hash is required'));
    const existing = this.inflight.get(block.hash);
    // Only the same signed block shares an outcome: a copy with other credentials is checked in full.
    if (existing && sameCredentials(existing.block, block)) return existing.outcome;
    const outcome = this.process(block as SignedBlock, opts).finally(() => {
      if (this.inflight.get(block.hash!)?.outcome === outcome) this.inflight.delete(block.hash!);
    });
    if (!existing) this.inflight.set(block.hash, { block, outcome });
    return outcome;
  }

  /**
   * Validates and applies a page of blocks (sync, issue #18) with the same checks as submit(), but
   * as one unit of work: the signatures are handed to the verifier together (one message to the
   * worker pool instead of one per block) and the blocks are queued in their order in one turn, so
   * they commit in one transaction and one flush, not one each. A block may be signed by a key an
   * earlier block of the page declares (an opening block): the group's own key check (applyBlock)
   * still refuses it unless the account on disk then holds that key. Answers each block's outcome in
   * order: its result, or the LedgerError that refused it; anything else (the store failed) throws.
   * `maxGroup` bounds the blocks per commit, and the checks yield every as many blocks: a long page
   * applied in one go would hold the node's thread (shared with the window) for a tenth of a second.
   */
  async submitBatch(
    blocks: Block[],
    opts: SubmitOptions & { maxGroup?: number },
  ): Promise<(SubmitResult | LedgerError)[]> {
    const maxGroup = Math.max(1, opts.maxGroup ?? blocks.length);
    const out: (SubmitResult | Error | undefined)[] = new Array(blocks.length);
    const checks: Promise<void>[] = [];
    const ready: { i: number; block: SignedBlock; hashed: HashedBlock; keyUsed: string | undefined }[] = [];
    for (let i = 0; i < blocks.length; i++) {
      if (i > 0 && i % maxGroup === 0) await new Promise((r) => setImmediate(r));
      const block = blocks[i] as SignedBlock;
      try {
        if (!block.hash) throw new LedgerError('hash_missing', 'hash is required');
        const hashed = this.checkStateless(block, opts);
        const stored = this.readBlock(hashed.hash);
        if (stored !== undefined) {
          checks.push(
            this.resubmitted(block, stored, hashed).then(
              (r) => void (out[i] = r),
              (e: unknown) => void (out[i] = asError(e)),
            ),
          );
          continue;
        }
        let keyUsed: string | undefined;
        if (!block.signatures) {
          if (!block.signature) throw new LedgerError('signature_missing', 'signature is required');
          if (block.previous === ZERO_HASH && block.type !== 'multisig_open') keyUsed = block.pub_key!;
          else {
            const acct = this.getAccount(block.account);
            if (acct?.keyset) throw new LedgerError('multisig', 'a multisig account needs signatures');
            keyUsed = acct?.pub_key ?? this.declaredKeys.get(block.account);
            if (!keyUsed) throw new LedgerError('unopened_account', `unopened account ${block.account}`);
          }
          const key = keyUsed;
          checks.push(
            this.verifier.verify(hexToBytes(block.signature), hashed.hash, hexToBytes(key)).then(
              (ok) => {
                if (!ok) out[i] = new LedgerError('invalid_signature', 'invalid signature');
              },
              (e: unknown) => void (out[i] = asError(e)),
            ),
          );
        }
        ready.push({ i, block, hashed, keyUsed });
      } catch (e) {
        out[i] = asError(e);
      }
    }
    await Promise.all(checks);
    let applied: Promise<void>[] = [];
    for (const { i, block, hashed, keyUsed } of ready) {
      if (out[i] !== undefined) continue; // its signature failed
      // A full group is committed before the next is queued (queued together, they would be one).
      if (applied.length >= maxGroup) {
        await Promise.all(applied);
        applied = [];
      }
      this.prechecked.delete(block.hash);
      applied.push(
        new Promise<void>((resolve) => {
          this.enqueue({
            kind: 'block',
            block,
            hashed,
            keyUsed,
            live: opts.live,
            resolve: (r) => {
              out[i] = r;
              resolve();
            },
            reject: (e) => {
              out[i] = e;
              resolve();
            },
          });
        }),
      );
    }
    await Promise.all(applied);
    const failed = out.find((o) => o instanceof Error && !(o instanceof LedgerError));
    if (failed) throw failed as Error;
    return out as (SubmitResult | LedgerError)[];
  }

  /**
   * The checks a block must pass before a node relays it to its peers: everything that needs no
   * ledger state but the signer's key (hash, key declaration, proof of work, clock, signature).
   * A block that passes is remembered, so its later submission does not verify the signature again.
   */
  async precheck(block: Block, opts: SubmitOptions): Promise<void> {
    if (!block.hash) throw new LedgerError('hash_missing', 'hash is required');
    const hashed = this.checkStateless(block as SignedBlock, opts);
    const keyUsed = await this.checkSignature(block as SignedBlock, hashed.hash);
    // The same block object submitted next (a gossiped block) is not hashed and solved again.
    if (opts.live) this.prechecks.set(block, { hashed, keyUsed });
    if (block.signature !== undefined) this.prechecked.set(block.hash, block.signature);
  }

  /** Verifies a single-key block's signature; returns the key it was checked against. */
  private async checkSignature(block: SignedBlock, hashBytes: Uint8Array): Promise<string | undefined> {
    if (block.signatures) return undefined; // multisig: checked against the keyset in the group
    if (!block.signature) throw new LedgerError('signature_missing', 'signature is required');
    let keyUsed: string;
    if (block.previous === ZERO_HASH && block.type !== 'multisig_open') keyUsed = block.pub_key!;
    else {
      const signer = this.signingKeyOf(block.account);
      if (signer?.multisig) throw new LedgerError('multisig', 'a multisig account needs signatures');
      const key = signer?.pub_key ?? this.declaredKeys.get(block.account);
      if (!key) throw new LedgerError('unopened_account', `unopened account ${block.account}`);
      keyUsed = key;
    }
    if (this.prechecked.get(block.hash) === block.signature) return keyUsed;
    const ok = await this.verifier.verify(hexToBytes(block.signature), hashBytes, hexToBytes(keyUsed));
    if (!ok) throw new LedgerError('invalid_signature', 'invalid signature');
    return keyUsed;
  }

  /**
   * A block whose hash is stored already. The hash does not cover the credentials, so only the same
   * signed block is a duplicate as it stands; a copy with other signatures is verified in full (a
   * forged one is refused, never answered 201). Either way the answer is the stored block, so what
   * is echoed or re-announced is what this node holds, not what the client sent.
   */
  private async resubmitted(
    block: SignedBlock,
    stored: BlockRecord & { block: SignedBlock },
    hashed: HashedBlock,
  ): Promise<SubmitResult> {
    if (!sameCredentials(stored.block, block)) {
      if (block.signatures) this.checkMultisig(block, this.getAccount(block.account), hashed.hash);
      else await this.checkSignature(block, hashed.hash);
    }
    return { status: 'duplicate', block: stored.block, height: stored.height };
  }

  private async process(block: SignedBlock, opts: SubmitOptions): Promise<SubmitResult> {
    // This very object passed precheck (a gossiped block, issue #18): its hash, proof of work and
    // signature stand, and its relay path looked it up by hash moments ago. A copy stored meanwhile
    // is answered `duplicate` by applyBlock's own look-up, as here. Each skipped read was a miss in
    // the store (~5 µs) on every receiving node for every block.
    const done = opts.live ? this.prechecks.get(block) : undefined;
    let hashed: HashedBlock;
    let keyUsed: string | undefined;
    if (done !== undefined && this.prechecked.get(block.hash) === block.signature) {
      ({ hashed, keyUsed } = done);
    } else {
      hashed = done?.hashed ?? this.checkStateless(block, opts);
      const stored = this.readBlock(hashed.hash);
      if (stored !== undefined) return this.resubmitted(block, stored, hashed);
      keyUsed = await this.checkSignature(block, hashed.hash);
    }
    try {
      const result = await new Promise<SubmitResult>((resolve, reject) => {
        this.enqueue({ kind: 'block', block, hashed, keyUsed, live: opts.live, resolve, reject });
      });
      this.prechecked.delete(block.hash);
      return result;
    } catch (e) {
      // Refused for now (a block it depends on is missing): kept, so the retry (a parked gossiped
      // block) is not verified again. Refused for good: forgotten.
      if (!(e instanceof LedgerError && e.retryable)) this.prechecked.delete(block.hash);
      throw e;
    }
  }

  /** Checks that need no ledger state: type, hash, key declaration, proof of work, clock window. */
  private checkStateless(block: SignedBlock, opts: SubmitOptions): HashedBlock {
    if (block.type === 'genesis') throw new LedgerError('genesis', 'genesis blocks cannot be submitted');
    const hashed = hashBlockNode(block, this.sc.networkId);
    const hashBytes = hashed.hash;
    if (!bytesEqualHex(hashBytes, block.hash)) throw new LedgerError('hash_mismatch', 'hash mismatch');

    const opening = block.previous === ZERO_HASH;
    if (block.signatures) {
      if (block.pub_key) throw new LedgerError('pub_key_rule', 'multisig block must not declare pub_key');
      if (block.signature)
        throw new LedgerError('multisig', 'a multisig block carries signatures, not signature');
    } else if (block.type === 'multisig_open' || block.type === 'multisig_update') {
      throw new LedgerError('multisig', `${block.type} must carry signatures`);
    } else if (opening) {
      if (!block.pub_key) throw new LedgerError('pub_key_rule', 'open block must declare pub_key');
      if (addressFromPublicKey(block.pub_key) !== block.account) {
        throw new LedgerError('pub_key_rule', `pub_key does not derive account address ${block.account}`);
      }
    } else if (block.pub_key) {
      throw new LedgerError('pub_key_rule', 'non-open block must not declare pub_key');
    }

    const difficulty = this.sc.pow.block;
    if (difficulty > 0n) {
      // The node form omits a zero nonce, and a missing numeric field means 0 (protocol.md 5.1).
      if (this.powHash(hashBytes, block.pow_nonce ?? 0n) < difficulty) {
        throw new LedgerError('invalid_pow', 'invalid proof of work');
      }
    }
    if (opts.live) {
      const now = this.now();
      if (
        block.timestamp < 0n ||
        block.timestamp > now + LIVE_WINDOW_NS ||
        block.timestamp < now - LIVE_WINDOW_NS
      ) {
        throw new LedgerError('timestamp_window', 'timestamp is more than 1 hour away from the node clock');
      }
    }
    if (opening && block.pub_key && !this.declaredKeys.has(block.account))
      this.declaredKeys.set(block.account, block.pub_key);
    return hashed;
  }

  /**
   * The stateful rules, then the writes, inside a group transaction. Every rule is checked before the
   * first write, so a rejected block leaves nothing behind.
   */
  private applyBlock(
    ctx: WriteContext,
    block: SignedBlock,
    hashed: HashedBlock,
    keyUsed: string | undefined,
    live = false,
  ): SubmitResult {
    const s = this.store;
    // Stored meanwhile (this copy's credentials were verified before it was queued).
    const dup = this.readBlock(hashed.hash);
    if (dup !== undefined) return { status: 'duplicate', block: dup.block, height: dup.height };

    const opening = block.previous === ZERO_HASH;
    const acct = this.getAccount(block.account);

    // Position: the block must extend the frontier.
    if (opening) {
      if (acct) return this.staging.forkAt(block, acct, 1);
    } else {
      if (!acct) {
        if (block.type === 'send') throw new LedgerError('unopened_account', 'send from unopened account');
        throw new LedgerError('unopened_account', `unopened account ${block.account}`);
      }
      if (block.previous !== acct.frontier) {
        const prev = this.readBlock(block.previous);
        if (prev !== undefined && prev.block.account === block.account) {
          return this.staging.forkAt(block, acct, prev.height + 1);
        }
        throw new LedgerError('previous_not_found', `previous block not found: ${block.previous}`);
      }
      if (block.timestamp < acct.last_timestamp) {
        throw new LedgerError('timestamp_order', "timestamp is earlier than the previous block's");
      }
      if (this.conflictBook.on(block.account)) {
        throw new LedgerError(
          'unresolved_conflict',
          'account has an unresolved conflict; retry after it is resolved',
          true,
        );
      }
    }

    // Credentials.
    if (block.signatures) this.checkMultisig(block, acct, hashed.hash);
    else {
      if (acct?.keyset) throw new LedgerError('multisig', 'a multisig account needs signatures');
      if (!opening && acct!.pub_key !== keyUsed) {
        throw new LedgerError('unopened_account', `unopened account ${block.account}`);
      }
    }

    if (!(ASSETS as readonly string[]).includes(block.asset)) {
      throw new LedgerError('unknown_asset', `unknown asset "${block.asset}": XE or XUSD`);
    }

    const old = acct?.balances[block.asset] ?? 0n;
    const fx = this.applyType(block, acct, old, live);
    if (block.balance !== fx.balance) {
      throw new LedgerError(
        'balance_mismatch',
        `balance must be ${fx.balance} after this ${block.type}, not ${block.balance}`,
      );
    }
    // The supply terms first (they may refuse the block): nothing is written before every check passed.
    if (fx.supply) addSupply(ctx.counters, fx.supply);
    // A cancel that wins over an unfinalized accept undoes it first (its own account is another).
    if (fx.unwind !== undefined) this.rollback.undoFrontier(ctx, fx.unwind);

    // Writes.
    const height = (acct?.height ?? 0) + 1;
    const balances = { ...acct?.balances, [block.asset]: block.balance };
    // The stake returned at settle is credited outside the block's balance field (LS-12).
    if (fx.credit) balances[fx.credit.asset] = (balances[fx.credit.asset] ?? 0n) + fx.credit.amount;
    const representative = block.representative ?? acct?.representative;
    const next: AccountRecord = {
      height,
      frontier: block.hash,
      balances,
      final_height: acct?.final_height ?? 0,
      final_balances: acct?.final_balances ?? {},
      last_timestamp: block.timestamp,
    };
    if (representative) next.representative = representative;
    const pubKey = acct?.pub_key ?? (opening && !block.signatures ? block.pub_key : undefined);
    if (pubKey) next.pub_key = pubKey;
    const keyset = fx.keyset ?? acct?.keyset;
    if (keyset) next.keyset = keyset;
    const claims = fx.claims ?? acct?.claims;
    if (claims && claims.length > 0) next.claims = claims;

    // Delegation: the account's XE balance moves from its old representative to its new one.
    const oldXE = acct?.balances.XE ?? 0n;
    const newXE = balances.XE ?? 0n;
    if (acct?.representative) this.addWeight(ctx, acct.representative, -oldXE);
    if (representative) this.addWeight(ctx, representative, newXE);

    // Where this node's votes alone are the quorum, or final votes that reach it came first
    // (counted with the weights as this block leaves them), the block is final in the same write:
    // one account update instead of two, and finality exactly as durable as the block itself.
    const finalNow = this.inlineFinality?.(block, acct, () => this.groupWeights(ctx)) === true;
    if (finalNow) {
      next.final_height = height;
      next.final_balances = { ...next.final_balances, [block.asset]: block.balance };
      if (fx.credit) next.final_balances[fx.credit.asset] = balances[fx.credit.asset]!;
    } else s.unfinal.putSync(block.account, '');
    this.writeAccount(block.account, next);
    this.putBlock(ctx, block, height, hashed);
    // The lease first: its undo entry keeps the escrow as it was before the writes below.
    if (fx.lease) this.leasing.write(block, fx);
    if (fx.pendingPut) {
      const key = pendingKey(fx.pendingPut.destination, fx.pendingPut.key ?? block.hash);
      s.accounts.putSync(key, encodePending(fx.pendingPut, 'shared'));
    }
    if (fx.pendingDelete) s.accounts.removeSync(pendingKey(fx.pendingDelete[0], fx.pendingDelete[1]));

    if (!acct) {
      this.indexAccount(block.account);
      ctx.counters.accounts += 1;
    }
    return { status: 'accepted', block, height, finalized: finalNow };
  }

  /** The open conflict at a chain position, if any. */
  conflictAt(account: string, height: number): Conflict | undefined {
    return this.conflictBook.at(account, height);
  }

  /** Open conflicts (GET /conflicts). */
  listConflicts(): Conflict[] {
    return this.conflictBook.list();
  }

  /** How many conflicts are open (`/ready`, which the window asks every 5 s). */
  conflictCount(): number {
    return this.conflictBook.size;
  }

  /** Conflicts settled within the last hour, with their winners (`GET /conflicts`). */
  listResolvedConflicts(): ResolvedConflict[] {
    return this.conflictBook.listResolved();
  }

  /** How a settling conflict's candidates stood in the votes (consensus knows; the ledger records). */
  setConflictTally(
    tallyOf: (hash: string, at: { account: string; previous: string }) => CandidateTally,
  ): void {
    this.conflictBook.tallyOf = tallyOf;
  }

  /** A staged conflict candidate, by hash. */
  stagedBlock(hash: string): StagedBlock | undefined {
    return this.conflictBook.stagedBlock(hash);
  }

  /**
   * Settles a conflict for `winner`: a staged winner replaces the block at the position, which is
   * undone with everything built on it, on this account and on the accounts that received its sends
   * (reference-behavior.md 2.5, 2.6); all in one transaction. Finalized blocks are never undone.
   */
  resolveConflict(account: string, height: number, winner: string): Promise<void> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: 'resolve', account, height, winner, resolve: () => resolve(), reject }),
    );
  }

  /**
   * Records, durably, that this node's representative casts its final vote at a position for `hash`
   * (the commit-lock): resolves once on disk, so the vote may go out; rejects if the position is
   * locked to another hash already. Write-once: a restart cannot lead to a second final vote there.
   */
  lockVote(account: string, previous: string, hash: string): Promise<void> {
    const position = `${account}:${previous}`;
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: 'lock', position, hash, resolve: () => resolve(), reject }),
    );
  }

  /** The commit-locks held (position `account:previous` -> hash), for consensus at start. */
  voteLocks(): Map<string, string> {
    const out = new Map<string, string>();
    for (const { key, value } of this.store.voteLocks.getRange()) out.set(key, value);
    return out;
  }

  private applyLock(position: string, hash: string): FinalizeAdvance[] {
    const held = this.store.voteLocks.get(position);
    if (held !== undefined && held !== hash)
      throw new LedgerError('vote_locked', `final vote at ${position} is locked to ${held}`);
    if (held === undefined) this.store.voteLocks.putSync(position, hash);
    return [];
  }

  private applyResolve(ctx: WriteContext, account: string, height: number, winner: string): void {
    const onChain = this.hashAt(account, height);
    const { conflict: c, restore } = this.conflictBook.detach(account, height);
    const undone: { account: string; hash: string }[] = [];
    if (onChain !== winner) {
      const w = this.conflictBook.stagedBlock(winner);
      if (!w) throw new LedgerError('source_not_pending', `winner ${winner} is not held here`, true);
      const acct = this.getAccount(account);
      if (acct && acct.final_height >= height)
        throw new LedgerError('fork_finalized', 'the position is final already');
      // All or nothing: a swap that cannot complete leaves the store and the group's running
      // totals exactly as they were.
      const saved = {
        counters: structuredClone(ctx.counters),
        reps: new Map(ctx.reps),
        repsDelta: ctx.repsDelta,
        resolved: ctx.resolved.length,
      };
      ctx.undone = undone;
      try {
        this.store.root.transactionSync(() => {
          while ((this.getAccount(account)?.height ?? 0) >= height) this.rollback.undoFrontier(ctx, account);
          const keyUsed = this.getAccount(account)?.pub_key ?? w.block.pub_key;
          const r = this.applyBlock(
            ctx,
            w.block,
            { hash: hashKey(w.block.hash), canonical: encodeCanonical(w.block) },
            keyUsed,
          );
          if (r.status !== 'accepted')
            throw new LedgerError('fork_unfinalized', 'the winner could not be applied');
          ctx.resolved.push({ block: w.block, height: r.height, finalized: r.finalized === true });
        });
      } catch (e) {
        restore();
        ctx.counters = saved.counters;
        ctx.reps = saved.reps;
        ctx.repsDelta = saved.repsDelta;
        ctx.resolved.length = saved.resolved;
        throw e;
      } finally {
        ctx.undone = undefined;
      }
    }
    this.conflictBook.drop(account, height, c, winner);
    // A cascade may have undone positions where other conflicts were open: those on the accounts
    // it undid, and those whose staged receive lost its source. Only they are looked at again.
    if (undone.length > 0) this.conflictBook.sweep(this, undone);
  }

  private checkMultisig(block: SignedBlock, acct: AccountRecord | undefined, hash: Uint8Array): void {
    const keyset: Keyset | undefined = block.type === 'multisig_open' ? block.keyset : acct?.keyset;
    if (!keyset) {
      if (acct) throw new LedgerError('multisig', 'signatures on a single-key account');
      throw new LedgerError('unopened_account', 'multisig_open not yet synced', true);
    }
    const members = new Set(keyset.keys);
    const seen = new Set<string>();
    for (const s of block.signatures!) {
      if (seen.has(s.public_key)) throw new LedgerError('multisig', `duplicate signer ${s.public_key}`);
      seen.add(s.public_key);
      if (!members.has(s.public_key))
        throw new LedgerError('multisig', `signer ${s.public_key} is not in the keyset`);
      if (!this.verifySync(hexToBytes(s.signature), hash, hexToBytes(s.public_key))) {
        throw new LedgerError('invalid_signature', `invalid signature by ${s.public_key}`);
      }
    }
    const need = SPENDING_TYPES.has(block.type) ? keyset.threshold : 1;
    if (seen.size < need) {
      throw new LedgerError('multisig', `${seen.size} valid signatures, ${need} required for ${block.type}`);
    }
  }

  /** The type rule of a block: its expected post-block balance and its effects (rules/). */
  private applyType(
    block: SignedBlock,
    acct: AccountRecord | undefined,
    old: bigint,
    live = false,
    view: RuleView = this.ruleView,
  ): Effects {
    return applyTypeRule({
      block,
      acct,
      old,
      view,
      live: live ? { now: this.now() } : undefined,
    });
  }

  /** Adjusts a representative's delegated weight in the group's running view (clamped at 0). */
  private addWeight(ctx: WriteContext, rep: string, delta: bigint): void {
    let cur = ctx.reps.get(rep);
    if (cur === undefined) cur = BigInt(this.store.reps.get(rep) ?? '0');
    let next = cur + delta;
    if (next < 0n) {
      next = 0n;
      ctx.counters.delegation_underflows += 1;
    }
    ctx.reps.set(rep, next);
    ctx.repsDelta += next - cur;
  }

  // ---- write-ahead journal (block-journal.ts) ----------------------------------------------------

  private journal: BlockJournal | undefined;

  /**
   * At start, before anything else writes: replays the groups of `dir`'s journal that LMDB does not
   * hold durably, removes the replayed files once LMDB has flushed them, and, if `enabled`, journals
   * block groups from now on. Replay runs whether or not the journal is enabled now.
   */
  async openJournal(
    dir: string,
    enabled: boolean,
    onFailure?: (e: Error) => void,
  ): Promise<ReplayResult & { torn?: unknown; error?: string }> {
    const state = readJournalState(dir, this.store);
    const result = await replayJournal(this, state.pending);
    await this.idle();
    await this.store.durable();
    await removeJournalFiles(dir, state.files);
    let error: string | undefined;
    try {
      if (enabled)
        this.journal = BlockJournal.create(dir, this.store, state.nextSeq, {
          replayed: state.files,
          onFailure,
        });
    } catch (e) {
      // No room for a journal file (a full disk): groups wait for LMDB's flush, as without one.
      error = (e as Error).message;
    }
    return { ...result, torn: state.torn, error };
  }

  /** After the last write (idle): syncs and closes the journal file. */
  async closeJournal(): Promise<void> {
    const j = this.journal;
    this.journal = undefined;
    try {
      await j?.close();
    } catch (e) {
      // A write or sync of it failed (reported when it happened, maybe by this close): its groups
      // since were answered after LMDB's flush, and the failure must not keep the store open.
      if (j?.failed === undefined) throw e;
    }
  }

  /** A group's journal entries, or undefined when it must wait for LMDB's flush instead. */
  private journalGroup(ops: WriteOp[], outcomes: Outcome[]): Journaled | undefined {
    // A journal whose write or sync failed takes no more groups: they wait for LMDB's flush.
    if (this.journal === undefined || this.journal.failed || this.resolvedWinners.length > 0)
      return undefined;
    const entries: JournalEntry[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const o = outcomes[i]!;
      if ('error' in o) continue; // refused: nothing written
      if (op.kind === 'block') {
        const r = o.value as SubmitResult;
        if (r.status === 'duplicate') continue;
        if (r.status !== 'accepted') return undefined; // staged conflict candidate
        const record =
          this.recordsPut.get(r.block) ??
          encodeBlockRecord({ block: r.block, height: r.height }, op.hashed.canonical);
        entries.push({ kind: 'block', record, finalized: r.finalized === true });
      } else if (op.kind === 'finalize') entries.push({ kind: 'finalize', items: op.items });
      else if (op.kind === 'lock') entries.push({ kind: 'lock', position: op.position, hash: op.hash });
      else return undefined; // conflict resolution, lease archive
    }
    return this.journal.append(entries);
  }

  // ---- group commit -----------------------------------------------------------------------------

  private enqueue(op: WriteOp): void {
    this.groups.enqueue(op);
  }

  /** Resolves once every write queued so far is committed and answered (before the store closes). */
  idle(): Promise<void> {
    return this.groups.idle();
  }

  /** After a group is answered: its accepted blocks and applied winners go out, staged ones are told. */
  private announce(ops: WriteOp[], outcomes: Outcome[]): void {
    const accepted: CommittedBlock[] = [];
    const staged: string[] = [];
    ops.forEach((op, i) => {
      const o = outcomes[i]!;
      if (op.kind !== 'block' || 'error' in o) return;
      const r = o.value as SubmitResult;
      if (r.status === 'conflict') staged.push(r.block.hash);
      if (r.status === 'accepted')
        accepted.push({ block: r.block, height: r.height, finalized: r.finalized === true });
    });
    if (this.resolvedWinners.length > 0) accepted.push(...this.resolvedWinners.splice(0));
    for (const h of staged) for (const fn of this.stagedListeners) fn(h);
    if (accepted.length > 0) for (const fn of this.listeners) fn(accepted);
  }

  private applyGroup(ops: WriteOp[]): Outcome[] {
    const ctx = this.openContext();
    const outcomes = ops.map((op): Outcome => {
      try {
        if (op.kind === 'block')
          return { value: this.applyBlock(ctx, op.block, op.hashed, op.keyUsed, op.live) };
        if (op.kind === 'resolve') {
          this.applyResolve(ctx, op.account, op.height, op.winner);
          return { value: [] };
        }
        if (op.kind === 'lock') return { value: this.applyLock(op.position, op.hash) };
        if (op.kind === 'archive') return { value: this.leasing.archive(ctx.counters, op.hashes, op.now) };
        return { value: this.applyFinalize(op.items) };
      } catch (e) {
        if (e instanceof LedgerError) return { error: e };
        throw e; // anything else aborts the group: never half-applied
      }
    });
    this.closeContext(ctx);
    this.groupReps.set(ops, ctx.reps); // applied to the committed weights when the commit resolves
    this.resolvedWinners.push(...ctx.resolved);
    return outcomes;
  }

  private openContext(): WriteContext {
    return { counters: this.counters.read(), reps: new Map(), repsDelta: 0n, resolved: [] };
  }

  /** Representative weights as the group's writes so far leave them (no copy: rep-weights.ts). */
  private groupWeights(ctx: WriteContext): WeightLookup {
    ctx.baseReps ??= this.repsWritten ??= this.readReps();
    return new GroupWeights(ctx.baseReps, ctx.reps, ctx.repsDelta);
  }

  /**
   * The stored representative weights as the writes so far leave them, for use inside write
   * transactions (inline finality asks for them with every block; reading them all took ~5 µs a
   * block at ingest). Kept by closeContext, the only writer; dropped when a group or genesis fails.
   */
  private repsWritten: RepWeights | undefined;

  /**
   * The committed representative weights (what a read outside a write transaction sees), kept as
   * each group's commit resolves, in commit order; consensus asks for them after every commit
   * (~8 µs a block of main thread at ingest when read from the table). Dropped when a group or
   * genesis fails: the next call reads the table.
   */
  private repsCommitted: RepWeights | undefined;
  /** Each group's representative writes, by the group's op list, until its commit resolves. */
  private readonly groupReps = new WeakMap<object, Map<string, bigint>>();

  /**
   * Delegated XE weight per representative, as committed: a live view (not a copy), whose `version`
   * changes with every commit that moves weight.
   */
  repWeightView(): WeightView {
    return (this.repsCommitted ??= this.readReps());
  }

  /** The reps table, read whole into a table with its sum (once per cache after a reset). */
  private readReps(): RepWeights {
    return RepWeights.from(super.repWeights());
  }

  private repsApplied(ops: WriteOp[]): void {
    const writes = this.groupReps.get(ops);
    if (writes === undefined || this.repsCommitted === undefined) return;
    for (const [rep, w] of writes) this.repsCommitted.set(rep, w);
  }

  /** Writes the group's counters and representative weights. */
  private closeContext(ctx: WriteContext): void {
    for (const [rep, w] of ctx.reps) {
      if (w === 0n) this.store.reps.removeSync(rep);
      else this.store.reps.putSync(rep, w.toString());
      this.repsWritten?.set(rep, w);
    }
    this.counters.write(ctx.counters);
  }

  /**
   * Raises accounts' final heights (never lowers them) and records their balances at that height;
   * durable when the promise resolves.
   */
  finalize(items: { account: string; height: number }[]): Promise<FinalizeAdvance[]> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'finalize', items, resolve, reject }));
  }

  private applyFinalize(items: { account: string; height: number }[]): FinalizeAdvance[] {
    const advanced: FinalizeAdvance[] = [];
    for (const { account, height } of items) {
      const acct = this.getAccount(account);
      if (acct === undefined) continue;
      const to = Math.min(height, acct.height);
      if (to <= acct.final_height) continue;
      const fb = { ...acct.final_balances };
      for (let h = acct.final_height + 1; h <= to; h++) {
        // The few fields read here, not the whole block (decoding each was a catch-up's garbage).
        const b = this.finalFactsAt(account, h)!;
        fb[b.asset] = b.balance;
        const credit = b.settle ? this.creditOf(this.blockAt(account, h)!.block) : undefined;
        if (credit) fb[credit.asset] = (fb[credit.asset] ?? 0n) + credit.amount;
        // A position final with its on-chain block settles any conflict there (the siblings lost)
        // and needs its commit-lock no more.
        const c = this.conflictBook.at(account, h);
        if (c) this.conflictBook.drop(account, h, c, b.hash);
        this.store.voteLocks.removeSync(`${account}:${b.previous}`);
      }
      advanced.push({ account, from: acct.final_height, to });
      this.writeAccount(account, { ...acct, final_height: to, final_balances: fb });
      if (to === acct.height) this.store.unfinal.removeSync(account);
    }
    return advanced;
  }

  /**
   * The local archive sweep (reference-behavior.md 4.3, LS-04): each of these leases still accepted,
   * unsettled and past its archive time at `now` becomes `expired`, its escrow burned and the stake
   * forfeited, in one durable group write. No block is produced and no undo entry written: the
   * lease's blocks are final (see LedgerLeasing.archive), so no rollback can reach it. Resolves with the
   * hashes archived.
   */
  archiveLeases(hashes: string[], now: bigint): Promise<string[]> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'archive', hashes, now, resolve, reject }));
  }

  // ---- storage helpers (every key layout lives in codec.ts) ----------------------------------------

  /**
   * Each block's stored record as its group wrote it, for the group's journal frame (the same bytes;
   * encoding them again cost a few µs a block at ingest).
   */
  private readonly recordsPut = new WeakMap<SignedBlock, Uint8Array>();

  /** Appends a block: its record under the next sequence number, its hash and chain entries. */
  private putBlock(ctx: WriteContext, block: SignedBlock, height: number, hashed?: HashedBlock): void {
    const seq = ctx.counters.next_seq;
    ctx.counters.next_seq += 1;
    ctx.counters.blocks += 1;
    const hashBytes = hashed?.hash ?? hashKey(block.hash);
    const record = encodeBlockRecord({ block, height }, hashed?.canonical);
    // The chain entry (sequence number, then hash) in a buffer reused for every block, its first 8
    // bytes the sequence number (the block's key, and the hash index's value): putSync copies each.
    const entry = CHAIN_ENTRY;
    writeSeq(entry, 0, seq);
    entry.set(hashBytes, 8);
    const seqBytes = entry.subarray(0, 8);
    this.store.blocks.putSync(seqBytes, record);
    this.recordsPut.set(block, record);
    this.store.hashes.putSync(hashBytes, seqBytes);
    this.store.accounts.putSync(chainKey(block.account, height), entry);
  }

  private writeAccount(address: string, rec: AccountRecord): void {
    // 'shared': putSync copies the record before anything else is encoded.
    this.store.accounts.putSync(accountKey(address), encodeAccount(rec, 'shared'));
    this.frontierDigests.touch(address);
  }

  /** An account record was created: its address joins the account index (store.ts accountIndex). */
  private indexAccount(address: string): void {
    this.store.accountIndex.putSync(hexToBytes(address, 32), NO_VALUE);
  }

  /** Removes an account's record (its opening block undone), and its address from the account index. */
  private removeAccount(address: string): void {
    this.store.accounts.removeSync(accountKey(address));
    this.store.accountIndex.removeSync(hexToBytes(address, 32));
    this.frontierDigests.touch(address);
  }
}

export interface FinalizeAdvance {
  account: string;
  from: number;
  to: number;
}

type WriteOp =
  | {
      kind: 'block';
      block: SignedBlock;
      hashed: HashedBlock;
      keyUsed: string | undefined;
      live: boolean;
      resolve: (r: SubmitResult) => void;
      reject: (e: Error) => void;
    }
  | {
      kind: 'finalize';
      items: { account: string; height: number }[];
      resolve: (r: FinalizeAdvance[]) => void;
      reject: (e: Error) => void;
    }
  | {
      kind: 'resolve';
      account: string;
      height: number;
      winner: string;
      resolve: (r: unknown) => void;
      reject: (e: Error) => void;
    }
  | {
      kind: 'lock';
      position: string;
      hash: string;
      resolve: (r: unknown) => void;
      reject: (e: Error) => void;
    }
  | {
      kind: 'archive';
      hashes: string[];
      now: bigint;
      resolve: (r: string[]) => void;
      reject: (e: Error) => void;
    };

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Same credentials: the one signature, or the same signer list (the hash covers everything else). */
function sameCredentials(a: Block, b: Block): boolean {
  if (a.signature !== b.signature) return false;
  const x = a.signatures;
  const y = b.signatures;
  if (x === undefined || y === undefined) return x === y;
  return (
    x.length === y.length &&
    x.every((s, i) => s.public_key === y[i]!.public_key && s.signature === y[i]!.signature)
  );
}
