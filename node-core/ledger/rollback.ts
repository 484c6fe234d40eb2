import { chainKey, encodePending, hashKey, pendingKey } from './codec.ts';
import { addSupply } from './counters.ts';
import { LedgerError } from './errors.ts';
import type { AccountRecord, BlockRecord } from './records.ts';
import type { SignedBlock } from './rules/index.ts';
import type { WriteContext } from './write-context.ts';
import { LEASE_FAMILY, type LedgerLeasing } from '../leasing/ledger-leasing.ts';
import type { LeaseUndo } from '../leasing/records.ts';
import type { Store } from '../store/store.ts';

/** What undoing a block reads and writes of the ledger. */
export interface RollbackDeps {
  store: Store;
  leasing: LedgerLeasing;
  getAccount(address: string): AccountRecord | undefined;
  blockAt(address: string, height: number): (BlockRecord & { block: SignedBlock }) | undefined;
  readBlock(hash: string): (BlockRecord & { block: SignedBlock }) | undefined;
  balanceAt(account: string, height: number, asset: string): bigint;
  representativeAt(account: string, height: number): string | undefined;
  addWeight(ctx: WriteContext, rep: string, delta: bigint): void;
  writeAccount(address: string, rec: AccountRecord): void;
  removeAccount(address: string): void;
}

/**
 * Rollback (reference-behavior.md 2.6): undoing an account's frontier block and every effect it had,
 * inside the caller's group transaction; a send received meanwhile takes the receiving chain down
 * to that receive with it, a lease the blocks built on it. Used by conflict resolution and by a
 * cancel that wins over an unfinalized accept.
 */
export class Rollback {
  private readonly d: RollbackDeps;

  constructor(deps: RollbackDeps) {
    this.d = deps;
  }

  /** Undoes an account's frontier block and its side effects (refused for a finalized block). */
  undoFrontier(ctx: WriteContext, account: string): void {
    const acct = this.d.getAccount(account)!;
    const h = acct.height;
    if (h <= acct.final_height) throw new LedgerError('fork_finalized', 'a finalized block is never undone');
    const b = this.d.blockAt(account, h)!.block;
    ctx.undone?.push({ account, hash: b.hash });
    const amount = b.amount ?? 0n;
    let claims = acct.claims;
    let credit: LeaseUndo['credit'];
    switch (b.type) {
      case 'send': {
        const pk = pendingKey(b.destination!, b.hash);
        if (this.d.store.accounts.get(pk) === undefined) {
          // Received meanwhile: the receiving chain is undone down to and including that receive.
          const dest = b.destination!;
          for (;;) {
            const d = this.d.getAccount(dest);
            if (!d) break;
            const top = this.d.blockAt(dest, d.height)!.block;
            this.undoFrontier(ctx, dest);
            if (top.type === 'receive' && top.source === b.hash) break;
          }
        }
        this.d.store.accounts.removeSync(pk);
        break;
      }
      case 'receive': {
        const src = this.d.readBlock(b.source!)!.block;
        this.d.store.accounts.putSync(
          pendingKey(account, b.source!),
          encodePending({
            from: src.account,
            amount: src.amount!,
            asset: src.asset,
            timestamp: src.timestamp,
          }),
        );
        break;
      }
      case 'claim': {
        addSupply(ctx.counters, [{ asset: 'XE', term: 'faucet', amount: -amount }]);
        const i = (claims ?? []).findIndex(([t, v]) => t === b.timestamp && v === amount);
        if (i >= 0) claims = claims!.filter((_, k) => k !== i);
        break;
      }
      case 'burn':
        addSupply(ctx.counters, [{ asset: 'XE', term: 'burned', amount: -amount }]);
        break;
      case 'mint':
        addSupply(ctx.counters, [{ asset: 'XUSD', term: 'minted', amount: -amount }]);
        break;
      default:
        if (!LEASE_FAMILY.has(b.type))
          throw new LedgerError('fork_unfinalized', `undoing a ${b.type} block is not supported`);
        credit = this.d.leasing.undo(ctx.counters, b, (acct) => this.undoFrontier(ctx, acct));
    }
    // Delegation: the XE balance goes back from the current representative to the earlier one. A
    // representative is sticky: unless this block named one, the earlier one is the account's now,
    // and only a block that named one walks back for the one before (a busy account's sends since
    // its open were all read for each block undone).
    const rep = b.representative ? this.d.representativeAt(account, h - 1) : acct.representative;
    const before = this.d.balanceAt(account, h - 1, b.asset);
    const xe = b.asset === 'XE' ? before : (acct.balances.XE ?? 0n);
    if (acct.representative) this.d.addWeight(ctx, acct.representative, -(acct.balances.XE ?? 0n));
    if (rep) this.d.addWeight(ctx, rep, xe);

    this.d.store.accounts.removeSync(chainKey(account, h));
    const seq = this.d.store.hashes.get(hashKey(b.hash));
    if (seq) this.d.store.blocks.removeSync(seq);
    this.d.store.hashes.removeSync(hashKey(b.hash));
    ctx.counters.blocks -= 1;
    if (h === 1) {
      this.d.removeAccount(account);
      this.d.store.unfinal.removeSync(account);
      ctx.counters.accounts -= 1;
      return;
    }
    const prev = this.d.blockAt(account, h - 1)!.block;
    const balances = { ...acct.balances, [b.asset]: before };
    if (credit) balances[credit.asset] = (balances[credit.asset] ?? 0n) - credit.amount;
    const next: AccountRecord = {
      ...acct,
      height: h - 1,
      frontier: prev.hash,
      balances,
      last_timestamp: prev.timestamp,
    };
    if (rep) next.representative = rep;
    else delete next.representative;
    if (claims && claims.length > 0) next.claims = claims;
    else delete next.claims;
    this.d.writeAccount(account, next);
  }
}
