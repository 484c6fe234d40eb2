import { U64_MAX } from '../protocol/int.ts';
import type { Store } from '../store/store.ts';
import { LEASE_FAMILY, type LedgerLeasing } from '../leasing/ledger-leasing.ts';
import { pendingKey } from './codec.ts';
import type { ConflictBook } from './conflict-book.ts';
import { LedgerError } from './errors.ts';
import type { SubmitResult } from './ledger.ts';
import type { AccountRecord, BlockRecord } from './records.ts';
import type { Effects, RuleView, SignedBlock } from './rules/index.ts';

/** Types a staged sibling may have (their effects can be undone); others keep the fork refused. */
const STAGEABLE = new Set(['send', 'receive', 'claim', 'burn', 'mint', ...LEASE_FAMILY]);
const MAX_CANDIDATES = 10;

/** What staging a sibling reads of the ledger. */
export interface StagingDeps {
  store: Store;
  leasing: LedgerLeasing;
  conflictBook: ConflictBook;
  ruleView: RuleView;
  now: () => bigint;
  getAccount(address: string): AccountRecord | undefined;
  hashAt(address: string, height: number): string | undefined;
  blockAt(address: string, height: number): (BlockRecord & { block: SignedBlock }) | undefined;
  readBlock(hash: string): (BlockRecord & { block: SignedBlock }) | undefined;
  balanceAt(account: string, height: number, asset: string): bigint;
  /** The block's type rule against `acct` and `old` as `view` reads the ledger (sync path). */
  applyType(block: SignedBlock, acct: AccountRecord, old: bigint, view: RuleView): Effects;
}

/**
 * Conflict staging: a block on a chain position already taken is judged against the account as it
 * stood at the parent, and staged as a candidate for the votes to decide, or refused.
 */
export class Staging {
  private readonly d: StagingDeps;

  constructor(deps: StagingDeps) {
    this.d = deps;
  }

  /**
   * A second block on a taken chain position (reference-behavior.md 2.5). Against a finalized
   * sibling it is rejected outright ("the finality wall"). Against an unfinalized one it is staged
   * as a conflict candidate, once its credentials and its balance against the parent state check
   * out (so a forged sibling cannot freeze the account, C-16); the representatives' votes decide.
   */
  forkAt(block: SignedBlock, acct: AccountRecord, height: number): SubmitResult {
    const account = block.account;
    const sibling = this.d.hashAt(account, height) ?? 'unknown';
    if (height <= acct.final_height) {
      throw new LedgerError('fork_finalized', `block conflicts with finalized block ${sibling}`);
    }
    if (block.signatures || !STAGEABLE.has(block.type)) {
      throw new LedgerError(
        'fork_unfinalized',
        `block conflicts with unfinalized block ${sibling} at the same chain position`,
      );
    }
    // The full rules of the block's type, against the account as it stood at the parent (C-16): a
    // sibling that could never be applied must not open a conflict it might win by hash order.
    const parentAcct = this.accountAt(account, acct, height - 1);
    if (block.timestamp < parentAcct.last_timestamp) {
      throw new LedgerError('timestamp_order', "timestamp is earlier than the previous block's");
    }
    const old = this.d.balanceAt(account, height - 1, block.asset);
    let expected: bigint;
    if (block.type === 'receive') {
      // Its source must be pending once this branch is undone: pending now, or received above the fork.
      const src = this.d.readBlock(block.source!);
      if (!src || src.block.type !== 'send' || src.block.destination !== account) {
        throw new LedgerError('source_not_pending', 'source send not pending');
      }
      if (src.block.asset !== block.asset)
        throw new LedgerError('wrong_asset', `the pending send is in ${src.block.asset}`);
      if (!this.pendingAbove(account, block.source!, height))
        throw new LedgerError('source_received', 'source send already received');
      const amount = block.amount ?? 0n;
      if (amount !== 0n && amount !== src.block.amount)
        throw new LedgerError('balance_mismatch', 'amount differs from the send');
      expected = old + src.block.amount!;
      if (expected > U64_MAX) throw new LedgerError('overflow', 'balance would exceed 2^64-1');
    } else
      expected = this.d.applyType(
        block,
        parentAcct,
        old,
        this.d.leasing.viewAt(this.d.ruleView, account, acct, height - 1),
      ).balance;
    if (block.balance !== expected) {
      throw new LedgerError(
        'balance_mismatch',
        `balance must be ${expected} after this ${block.type}, not ${block.balance}`,
      );
    }
    const c = this.d.conflictBook.at(account, height) ?? {
      account,
      height,
      previous: block.previous,
      candidates: new Set([sibling]),
      detected_at: this.d.now(),
    };
    if (c.candidates.size >= MAX_CANDIDATES)
      throw new LedgerError('fork_unfinalized', 'too many blocks at this chain position');
    // Durable with the group: a restart resumes the vote on this position instead of forgetting it.
    this.d.conflictBook.stage(c, block, height);
    return { status: 'conflict', block, height };
  }

  /**
   * The account as it stood after its block at `height` (0: before its first block), as far as the
   * type rules read it: claims still in the faucet window, last timestamp.
   */
  private accountAt(address: string, acct: AccountRecord, height: number): AccountRecord {
    let claims = acct.claims ?? [];
    for (let h = acct.height; h > height; h--) {
      const b = this.d.blockAt(address, h)!.block;
      if (b.type !== 'claim') continue;
      const i = claims.findIndex(([t, v]) => t === b.timestamp && v === b.amount);
      if (i >= 0) claims = claims.filter((_, k) => k !== i);
    }
    const last = height === 0 ? 0n : this.d.blockAt(address, height)!.block.timestamp;
    return { ...acct, height, claims, last_timestamp: last };
  }

  /** True when `source` is pending to `address` once its chain is undone down to below `height`. */
  private pendingAbove(address: string, source: string, height: number): boolean {
    if (this.d.store.accounts.get(pendingKey(address, source)) !== undefined) return true;
    const acct = this.d.getAccount(address)!;
    for (let h = height; h <= acct.height; h++) {
      const b = this.d.blockAt(address, h)!.block;
      if (b.type === 'receive' && b.source === source) return true;
    }
    return false;
  }
}
