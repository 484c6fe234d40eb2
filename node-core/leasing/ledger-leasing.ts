import type { Verifier } from '../protocol/keys.ts';
import type { StateChain } from '../statechain/statechain.ts';
import type { Store } from '../store/store.ts';
import { decodePending, encodePending, pendingKey } from '../ledger/codec.ts';
import { addSupply, type Counters } from '../ledger/counters.ts';
import type { AccountRecord, PendingRecord } from '../ledger/records.ts';
import type { Effects, RuleView, SignedBlock } from '../ledger/rules/types.ts';
import { archivedLease } from './archive.ts';
import type { CertificateBook } from './certificate-book.ts';
import { type EpochRecord, EpochTable } from './epochs.ts';
import { LeaseBook } from './lease-book.ts';
import type { LeaseRecord, LeaseUndo } from './records.ts';
import { ReputationBook, reputationEvents } from './reputation.ts';
import type { LeaseView } from './rules/view.ts';
import { DEFAULT_LEASE_TIMING, type LeaseTiming } from './timing.ts';

/** Lease-family blocks: their effects beyond their own chain are undone from their undo entries. */
export const LEASE_FAMILY: ReadonlySet<string> = new Set([
  'lease',
  'lease_accept',
  'lease_settle',
  'lease_cancel',
  'lease_force_settle',
  'lease_renew',
]);

/** What the leasing side reads of the ledger it lives in. */
export interface LedgerAccess {
  getAccount(address: string): AccountRecord | undefined;
  hashAt(address: string, height: number): string | undefined;
  getBlock(hash: string): { block: SignedBlock; height: number } | undefined;
  blockAt(address: string, height: number): SignedBlock | undefined;
}

export interface LedgerLeasingDeps {
  store: Store;
  statechain: StateChain;
  ledger: LedgerAccess;
  verifySync: Verifier;
  certificates?: Pick<CertificateBook, 'get'>;
  leaseTiming?: () => LeaseTiming;
}

/**
 * Leasing's part of the ledger's write path, kept out of ledger.ts: what the lease rules read (the
 * LeaseView), the lease record, reputation and undo entry a lease-family block writes with its
 * transaction, the rollback of one, the state a staged sibling is judged against, and the archive
 * sweep's write. The ledger calls these at its hook points; every write happens inside its group.
 */
export class LedgerLeasing {
  readonly leases: LeaseBook;
  readonly reputation: ReputationBook;
  readonly view: LeaseView;
  private readonly store: Store;
  private readonly sc: StateChain;
  private readonly ledger: LedgerAccess;
  private readonly epochTable: EpochTable;

  constructor(deps: LedgerLeasingDeps) {
    this.store = deps.store;
    this.sc = deps.statechain;
    this.ledger = deps.ledger;
    this.epochTable = new EpochTable(
      () => this.sc.kvList({ offset: 0, limit: Number.MAX_SAFE_INTEGER, prefix: 'epoch.' }),
      () => this.sc.tip?.hash,
    );
    this.leases = new LeaseBook(deps.store);
    this.reputation = new ReputationBook(deps.store);
    const leases = this.leases;
    const sc = this.sc;
    const ledger = this.ledger;
    const certificates = deps.certificates;
    const timing = deps.leaseTiming ?? (() => DEFAULT_LEASE_TIMING);
    this.view = {
      lease: (hash) => leases.get(hash),
      certificate: (hash) => certificates?.get(hash),
      get timekeepers() {
        return sc.timekeepers;
      },
      epochCandidates: (t) => this.epochCandidates(t),
      get timing() {
        return timing();
      },
      get stakeMilli() {
        return BigInt(sc.lease.stake_milli);
      },
      account: (address) => ledger.getAccount(address),
      hashAt: (address, height) => ledger.hashAt(address, height),
      verify: deps.verifySync,
    };
  }

  /**
   * Writes the lease record a lease-family block leaves, its reputation entries, and its undo entry:
   * the record as it was, the escrow entry it consumes or grows as it was, and the supply and credit
   * it moves. Called before the block's pending writes, so the escrow is read as it was.
   */
  write(block: SignedBlock, fx: Effects): void {
    const lease = fx.lease!;
    const before = this.leases.get(lease.lease_hash);
    const touched: [string, string] | undefined =
      fx.pendingDelete ?? (fx.pendingPut?.key ? [fx.pendingPut.destination, fx.pendingPut.key] : undefined);
    let pendingBefore: LeaseUndo['pendingBefore'];
    if (touched) {
      const [destination, hash] = touched;
      const bytes = this.store.accounts.get(pendingKey(destination, hash));
      if (bytes !== undefined) pendingBefore = { destination, hash, record: decodePending(bytes) };
    }
    this.leases.put(lease, before);
    if (fx.renewal) this.leases.putRenewal(lease.lease_hash, lease.renewal_count - 1, fx.renewal);
    const parties = this.reputation.record(block.hash, reputationEvents(block, lease));
    this.leases.putUndo(block.hash, {
      lease_hash: lease.lease_hash,
      ...(before ? { before } : {}),
      ...(pendingBefore ? { pendingBefore } : {}),
      supply: fx.supply ?? [],
      ...(fx.credit ? { credit: { account: block.account, ...fx.credit } } : {}),
      ...(parties.length > 0 ? { reputation: parties } : {}),
    });
  }

  /**
   * Undoes what a lease-family block did beyond its own chain entry, from its undo entry; returns the
   * credit to take back from its account. Undoing a `lease` first undoes every block built on it on
   * the provider's chain (its accept, and a settle after it) through `undoFrontier`, the ledger's
   * rollback, as undoing a send undoes its receive.
   */
  undo(counters: Counters, b: SignedBlock, undoFrontier: (account: string) => void): LeaseUndo['credit'] {
    if (b.type === 'lease') {
      for (;;) {
        const lease = this.leases.get(b.hash);
        const accept = lease?.accept_hash;
        if (accept === undefined || this.ledger.getBlock(accept) === undefined) break;
        const provider = this.ledger.getAccount(lease!.provider)!;
        const top = this.ledger.blockAt(lease!.provider, provider.height)!;
        undoFrontier(lease!.provider);
        if (top.hash === accept) break;
      }
      this.store.accounts.removeSync(pendingKey(b.destination!, b.hash));
    }
    const u = this.leases.takeUndo(b.hash);
    if (u === undefined) throw new Error(`no undo entry for lease-family block ${b.hash}`);
    if (u.before) this.leases.put(u.before);
    else this.leases.remove(u.lease_hash);
    if (u.reputation) this.reputation.remove(b.hash, u.reputation);
    if (u.pendingBefore) {
      const p = u.pendingBefore;
      this.store.accounts.putSync(pendingKey(p.destination, p.hash), encodePending(p.record));
    }
    if (u.supply.length > 0)
      addSupply(
        counters,
        u.supply.map((d) => ({ ...d, amount: -d.amount })),
      );
    return u.credit;
  }

  /**
   * `base` as `account` stood after its block at `height`: the lease records and escrow entries
   * that its lease-family blocks above changed, read back from their undo entries (the lowest
   * block's before-image wins), so a staged sibling is judged against its parent state (C-16).
   */
  viewAt(base: RuleView, account: string, acct: AccountRecord, height: number): RuleView {
    const leases = new Map<string, LeaseRecord | undefined>();
    const escrows = new Map<string, PendingRecord | undefined>();
    for (let h = acct.height; h > height; h--) {
      const b = this.ledger.blockAt(account, h)!;
      if (!LEASE_FAMILY.has(b.type)) continue;
      const u = this.leases.peekUndo(b.hash);
      if (u === undefined) continue;
      leases.set(u.lease_hash, u.before);
      if (u.pendingBefore)
        escrows.set(`${u.pendingBefore.destination}:${u.pendingBefore.hash}`, u.pendingBefore.record);
      if (b.type === 'lease') escrows.set(`${b.destination}:${b.hash}`, undefined);
    }
    if (leases.size === 0) return base;
    return {
      ...base,
      get faucet() {
        return base.faucet;
      },
      pending: (to, source) => {
        const k = `${to}:${source}`;
        return escrows.has(k) ? escrows.get(k) : base.pending(to, source);
      },
      leasing: {
        ...base.leasing,
        get timekeepers() {
          return base.leasing.timekeepers;
        },
        get timing() {
          return base.leasing.timing;
        },
        get stakeMilli() {
          return base.leasing.stakeMilli;
        },
        lease: (hash) => (leases.has(hash) ? leases.get(hash) : base.leasing.lease(hash)),
      },
    };
  }

  /**
   * The archive sweep's write (reference-behavior.md 4.3, LS-04): each of these leases still
   * accepted, unsettled and past its archive time at `now` becomes `expired`, its escrow burned and
   * the stake forfeited. Only leases whose accept is final, so no rollback can reach them (no undo
   * entry is written). Returns the hashes archived.
   */
  archive(counters: Counters, hashes: string[], now: bigint): string[] {
    const done: string[] = [];
    for (const hash of hashes) {
      const lease = this.leases.get(hash);
      if (lease === undefined || !this.acceptFinal(lease)) continue;
      const key = pendingKey(lease.provider, hash);
      const held = this.store.accounts.get(key);
      // Checked again here, in the write: the lease may have been settled since the sweep read it.
      const escrow = held === undefined ? undefined : decodePending(held).amount;
      const out = archivedLease(lease, now, this.view.timing, escrow);
      if (out === undefined) continue;
      addSupply(counters, out.supply);
      if (held !== undefined) this.store.accounts.removeSync(key);
      this.leases.put(out.lease, lease);
      done.push(hash);
    }
    return done;
  }

  /** Whether a lease's accept is final: only then is archiving it beyond the reach of any rollback. */
  private acceptFinal(lease: { provider: string; accept_hash?: string }): boolean {
    const accept = lease.accept_hash === undefined ? undefined : this.ledger.getBlock(lease.accept_hash);
    const provider = this.ledger.getAccount(lease.provider);
    return accept !== undefined && provider !== undefined && accept.height <= provider.final_height;
  }

  /** The `epoch.N` records of the state chain (one per oracle period), ascending by number. */
  epochs(): readonly EpochRecord[] {
    return this.epochTable.list();
  }

  /** The epochs an accept attested at `t` may lock (epochs.ts epochCandidates). */
  epochCandidates(t: bigint): EpochRecord[] | undefined {
    return this.epochTable.candidates(t);
  }
}
