import type { Block } from '../../protocol/block.ts';
import type { Keyset } from '../../protocol/keys.ts';
import type { LeaseView } from '../../leasing/rules/view.ts';
import type { LeaseRecord, LeaseRenewal } from '../../leasing/records.ts';
import type { Faucet } from '../../statechain/sys.ts';
import type { SupplyDelta } from '../counters.ts';
import type { AccountRecord, PendingRecord } from '../records.ts';

/** A block whose hash has been checked: every rule reads the hash as the block's identity. */
export type SignedBlock = Block & { hash: string };

/**
 * What a type rule may read of the ledger and the state chain, as it stands for the block being
 * checked (inside its group transaction, or at the parent of a staged sibling). Rules read only
 * through this view, so they are pure checks that can run against any state.
 */
export interface RuleView {
  /** The faucet settings (`sys.faucet`), or undefined where the network has none. */
  readonly faucet: Faucet | undefined;
  isMinter(address: string): boolean;
  /** The pending entry of `source` to `account`, or undefined. */
  pending(account: string, source: string): PendingRecord | undefined;
  /** A stored block by hash. */
  block(hash: string): SignedBlock | undefined;
  /** What the lease-family rules read. */
  readonly leasing: LeaseView;
}

/** The input of a type rule: the block, its account before it (absent for an opening block), the old balance of the block's asset. */
export interface RuleInput {
  block: SignedBlock;
  acct: AccountRecord | undefined;
  old: bigint;
  view: RuleView;
  /** Set on the live path (HTTP, gossip): the node clock, for checks that sync must skip. */
  live?: { now: bigint };
}

/** What a valid block does: its post-block balance and its side effects, applied by the write path. */
export interface Effects {
  balance: bigint;
  /** A pending entry for `destination`, keyed by the block's hash or by `key` (a grown escrow). */
  pendingPut?: PendingRecord & { destination: string; key?: string };
  /** [account, source] of the pending entry the block consumes. */
  pendingDelete?: [string, string];
  keyset?: Keyset;
  claims?: [bigint, bigint][];
  supply?: SupplyDelta[];
  /** The lease record as the block leaves it (lease-family blocks). */
  lease?: LeaseRecord;
  /** The renewal a `lease_renew` adds, stored beside the lease record (LeaseBook). */
  renewal?: LeaseRenewal;
  /** A credit to the block's own account outside its balance field (the stake returned at settle). */
  credit?: { asset: string; amount: bigint };
  /** An account whose frontier block must be undone first (a cancel that wins over an accept). */
  unwind?: string;
}

/** A per-type rule: throws a LedgerError for an invalid block, or states its effects. */
export type TypeRule = (input: RuleInput) => Effects;
