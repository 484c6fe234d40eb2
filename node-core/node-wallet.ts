import { availableParallelism } from 'node:os';
import { type Block, ZERO_HASH } from './protocol/block.ts';
import { signBlock, type SignedBlock } from './protocol/block-sign.ts';
import { hexToBytes } from './protocol/hex.ts';
import type { AccountRecord } from './ledger/records.ts';
import type { SubmitResult } from './ledger/ledger.ts';
import { PowSolver } from './fastpath/pow-solver.ts';

/**
 * The node's own account (the node key, `node.key`) writing blocks to its own ledger: what the node
 * does for its operator (a lease from `POST /lease/request`) and, as a provider, for itself. Each
 * block is built from the account's state in the ledger at the moment it is built, signed, its
 * proof of work solved on the multi-core solver's worker threads (the event loop stays free), and
 * submitted locally; the ledger's commit gossips it. Writes are serialized: two blocks built from
 * one frontier would fork the node's own chain.
 */

export interface NodeWalletDeps {
  seed: Uint8Array;
  address: string;
  networkId: () => string;
  /** The network's proof-of-work difficulty for blocks. */
  difficulty: () => bigint;
  account: (address: string) => AccountRecord | undefined;
  submit: (block: Block) => Promise<SubmitResult>;
  now: () => bigint;
  /** Proof-of-work search (default: a PowSolver on all cores but one, started at first use). */
  solve?: (target: Uint8Array, difficulty: bigint) => Promise<bigint>;
}

/** The fields a caller sets; account, previous, timestamp, hash and signature are the wallet's. */
export type BlockDraft = Omit<Block, 'account' | 'previous' | 'timestamp'>;

export class NodeWallet {
  private readonly deps: NodeWalletDeps;
  private solver: PowSolver | undefined;
  private chainLock: Promise<unknown> = Promise.resolve();

  constructor(deps: NodeWalletDeps) {
    this.deps = deps;
  }

  get address(): string {
    return this.deps.address;
  }

  /** The account's balance of `asset` after its frontier (0 for an unopened account). */
  balance(asset: string): bigint {
    return this.deps.account(this.deps.address)?.balances[asset] ?? 0n;
  }

  /**
   * Builds a block from the account's current state (`draft` reads balances through `balance`),
   * signs, solves and submits it; resolves with the submitted block, or rejects with the ledger's
   * LedgerError. Serialized with every other write of this wallet.
   */
  write(draft: (balance: (asset: string) => bigint) => BlockDraft): Promise<SignedBlock> {
    const run = async (): Promise<SignedBlock> => {
      const acct = this.deps.account(this.deps.address);
      const now = this.deps.now();
      const last = acct?.last_timestamp ?? 0n;
      const unsigned: Block = {
        ...draft((asset) => acct?.balances[asset] ?? 0n),
        account: this.deps.address,
        previous: acct?.frontier ?? ZERO_HASH,
        timestamp: now > last ? now : last,
      };
      const signed = signBlock(unsigned, this.deps.seed, this.deps.networkId());
      const difficulty = this.deps.difficulty();
      const nonce = difficulty === 0n ? 0n : await this.solve(hexToBytes(signed.hash), difficulty);
      const block: SignedBlock = { ...signed, pow_nonce: nonce };
      await this.deps.submit(block);
      return block;
    };
    const p = this.chainLock.then(run, run);
    this.chainLock = p.catch(() => {});
    return p;
  }

  private async solve(target: Uint8Array, difficulty: bigint): Promise<bigint> {
    if (this.deps.solve) return this.deps.solve(target, difficulty);
    this.solver ??= new PowSolver({ threads: Math.max(1, availableParallelism() - 1) });
    await this.solver.start();
    return (await this.solver.solve(target, difficulty)).nonce;
  }

  async stop(): Promise<void> {
    await this.solver?.stop();
    this.solver = undefined;
  }
}
