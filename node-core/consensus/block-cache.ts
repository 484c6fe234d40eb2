import { BoundedMap } from '../bounded-map.ts';
import type { SignedBlock } from '../ledger/ledger.ts';

/** What consensus needs of a block on chain: its body and its height. */
export interface HeldBlock {
  block: SignedBlock;
  height: number;
}

/** The ledger reads the cache stands in front of. */
export interface BlockSource {
  getBlock(hash: string): HeldBlock | undefined;
  hashAt(account: string, height: number): string | undefined;
  /** hashAt(account, height) === hash, without making the hash's string. */
  hashIsAt(account: string, height: number, hash: string): boolean;
}

/** Blocks held at least (the last ones used); at most twice as many (bounded-map.ts). */
const LIMIT = 1024;

/**
 * Decoded blocks for consensus (issue #18, target 6). Counting one vote read the same few blocks
 * from the store and decoded them again each time (the voted block up to three times, its parent
 * once): 97 µs of the joining node's thread per final vote in a catch-up. A block's body and height
 * never change while its hash stays on chain, but a rollback can take it off (a lost conflict, a
 * lease unwind), so a cached entry is trusted only while the chain still has its hash at its height:
 * one index read, no decoding. An entry found off chain is dropped and read afresh.
 */
export class BlockCache {
  private readonly source: BlockSource;
  private readonly held = new BoundedMap<string, HeldBlock>(2 * LIMIT);
  hits = 0;
  misses = 0;

  constructor(source: BlockSource) {
    this.source = source;
  }

  /** The block on chain with this hash, or undefined. */
  get(hash: string): HeldBlock | undefined {
    const e = this.held.get(hash);
    if (e !== undefined) {
      if (this.source.hashIsAt(e.block.account, e.height, hash)) {
        this.hits += 1;
        return e;
      }
      this.held.delete(hash);
    }
    return this.read(hash);
  }

  /**
   * The block whose hash the chain holds at `account`/`height` right now (the caller just read it
   * there with `hashAt`): no second index read is needed to trust a cached entry.
   */
  onChain(hash: string, account: string, height: number): HeldBlock | undefined {
    const e = this.held.get(hash);
    if (e !== undefined && e.height === height && e.block.account === account) {
      this.hits += 1;
      return e;
    }
    // An entry that no longer matches is dropped whatever the store says now.
    if (e !== undefined) this.held.delete(hash);
    return this.read(hash);
  }

  /**
   * A block just committed to the chain at `height` (the ledger's commit listener): consensus drives
   * it next, and in a catch-up its final votes follow a page later. Without this each was read back
   * from the store and decoded on its first vote (~16 µs a block of the joining node's thread and a
   * share of its garbage). Trusted as any entry is: only while the chain still has it there.
   */
  remember(block: SignedBlock, height: number): void {
    this.held.set(block.hash, { block, height });
  }

  private read(hash: string): HeldBlock | undefined {
    this.misses += 1;
    // Only after a miss in `held` or a stale entry dropped: nothing to drop for a block not stored.
    const rec = this.source.getBlock(hash);
    if (rec === undefined) return undefined;
    const e = { block: rec.block, height: rec.height };
    this.held.set(hash, e);
    return e;
  }
}
