import { createHash } from 'node:crypto';

/** Buckets of the address space: an address's first byte (its first two hex digits). */
export const DIGEST_BUCKETS = 256;
/** Bytes of one bucket's digest. */
export const DIGEST_BYTES = 16;

/** The bucket an address (64 hex) falls in. */
export function bucketOf(address: string): number {
  return parseInt(address.slice(0, 2), 16);
}

/** A bucket's first address and its last (the bounds of its range in a `frontiers` walk). */
export function bucketStart(b: number): string {
  return `${b.toString(16).padStart(2, '0')}${'0'.repeat(62)}`;
}
export function bucketEnd(b: number): string {
  return `${b.toString(16).padStart(2, '0')}${'f'.repeat(62)}`;
}

/**
 * A digest of the ledger's frontiers per bucket of accounts, for sync rounds (net/sync.ts, issue
 * #18): two nodes whose digests of a bucket are equal hold the same frontier for every account in
 * it, so a round asks a peer for the frontiers of the differing buckets only. Before, every round
 * (each peer, every 30 s) walked and sent every account: two idle nodes of 100,000 accounts spent
 * 5-8 s of CPU a minute each on it, and it grows with the ledger.
 *
 * A bucket's digest is the first DIGEST_BYTES of SHA-256 over one line `<address>:<frontier>\n`
 * (lowercase hex) per account of the bucket, in address order: the same on every node that holds
 * the same frontiers, and as hard to collide as SHA-256 (an XOR of per-account hashes, which could be
 * kept up to date a write at a time, can be made to cancel out by anyone who grinds the hashes of a
 * few blocks of their own: Wagner's generalized birthday attack). It is computed from the ledger when
 * asked for and kept until an account of the bucket is written (`touch`, called by the ledger's
 * every account write or removal), so a quiet ledger's digests cost nothing and a busy one computes
 * again only the buckets it wrote.
 */
export class FrontierDigests {
  private readonly heads: (bucket: number) => Iterable<[string, { frontier: string }]>;
  private readonly kept: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(DIGEST_BUCKETS);
  /** Buckets computed since start (diagnostics, tests). */
  computed = 0;

  /** `heads`: the bucket's accounts with their frontiers, read from the ledger now. */
  constructor(heads: (bucket: number) => Iterable<[string, { frontier: string }]>) {
    this.heads = heads;
  }

  /** An account of `address`'s bucket was written or removed: its digest is computed again when asked. */
  touch(address: string): void {
    this.kept[bucketOf(address)] = undefined;
  }

  bucket(b: number): Uint8Array {
    let d = this.kept[b];
    if (d === undefined) {
      const h = createHash('sha256');
      for (const [address, head] of this.heads(b)) h.update(`${address}:${head.frontier}\n`);
      d = new Uint8Array(h.digest().subarray(0, DIGEST_BYTES));
      this.kept[b] = d;
      this.computed += 1;
    }
    return d;
  }

  /**
   * Every bucket's digest, in order (DIGEST_BUCKETS x DIGEST_BYTES bytes). `between` runs after each
   * bucket (a yield to the event loop when a slice is used up: a bucket of a large ledger takes a
   * few ms to compute). A bucket written meanwhile is as it was when computed, as a page of
   * frontiers shows each account as it was when read.
   */
  async all(between: () => Promise<void>): Promise<Uint8Array> {
    const out = new Uint8Array(DIGEST_BUCKETS * DIGEST_BYTES);
    for (let b = 0; b < DIGEST_BUCKETS; b++) {
      out.set(this.bucket(b), b * DIGEST_BYTES);
      await between();
    }
    return out;
  }
}

/**
 * The buckets whose digests differ between two digest sets, as ranges of consecutive buckets
 * [from, to] (inclusive): one walk of frontiers each. A set of the wrong size differs everywhere.
 */
export function differingRanges(mine: Uint8Array, theirs: Uint8Array): [number, number][] {
  const out: [number, number][] = [];
  const whole = theirs.length !== mine.length;
  for (let b = 0; b < DIGEST_BUCKETS; b++) {
    let differs = whole;
    for (let i = b * DIGEST_BYTES; !differs && i < (b + 1) * DIGEST_BYTES; i++)
      differs = mine[i] !== theirs[i];
    if (!differs) continue;
    const last = out.at(-1);
    if (last && last[1] === b - 1) last[1] = b;
    else out.push([b, b]);
  }
  return out;
}
