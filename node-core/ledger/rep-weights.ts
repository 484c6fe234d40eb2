/**
 * Delegated XE weight per representative with the running sum of it (issue #18).
 *
 * Consensus needs two things of the weights with every applied block (inline finality) and every
 * vote: one representative's weight and the total. Copying the whole table to get them cost time
 * in proportion to the number of representatives: with 1,000 of them about 325 µs a block, more
 * than the rest of a block's work at ingest; with 10,000, 6.4 ms. Kept as a map and a sum updated
 * with each write, both answers cost the same whatever the number of representatives.
 */

/** One representative's weight and the sum of all (only positive weights exist). */
export interface WeightLookup {
  /** The representative's weight; undefined when it has none. */
  get(rep: string): bigint | undefined;
  /** The sum of every representative's weight. */
  readonly total: bigint;
}

/** A lookup that can also list every representative (the API's listings; not per block). */
export interface WeightView extends WeightLookup {
  entries(): IterableIterator<[string, bigint]>;
  /** Changes with every write: figures derived from the view hold while it stays the same. */
  readonly version: number;
  /** How many representatives have weight. */
  readonly size: number;
}

/** A mutable table of positive weights with their sum; a weight of 0 removes the entry. */
export class RepWeights implements WeightView {
  private readonly map = new Map<string, bigint>();
  private sum = 0n;
  private writes = 0;

  static from(entries: Iterable<[string, bigint]>): RepWeights {
    const w = new RepWeights();
    for (const [rep, v] of entries) w.set(rep, v);
    return w;
  }

  get total(): bigint {
    return this.sum;
  }

  get version(): number {
    return this.writes;
  }

  get size(): number {
    return this.map.size;
  }

  get(rep: string): bigint | undefined {
    return this.map.get(rep);
  }

  /** Sets a weight (clamped at 0: none is negative), keeping the sum. */
  set(rep: string, weight: bigint): void {
    this.writes += 1;
    this.sum -= this.map.get(rep) ?? 0n;
    if (weight <= 0n) this.map.delete(rep);
    else {
      this.map.set(rep, weight);
      this.sum += weight;
    }
  }

  entries(): IterableIterator<[string, bigint]> {
    return this.map.entries();
  }
}

/**
 * The weights as a group transaction's writes so far leave them: the stored table (`base`) with the
 * group's running values over it (a 0 there: the weight is gone). `total` is the base's sum plus
 * what those writes added to it, which the writer keeps with each change: no pass over the group's
 * representatives either.
 */
export class GroupWeights implements WeightLookup {
  readonly total: bigint;
  private readonly base: WeightLookup;
  private readonly changed: ReadonlyMap<string, bigint>;

  constructor(base: WeightLookup, changed: ReadonlyMap<string, bigint>, delta: bigint) {
    this.base = base;
    this.changed = changed;
    this.total = base.total + delta;
  }

  get(rep: string): bigint | undefined {
    const v = this.changed.get(rep);
    if (v === undefined) return this.base.get(rep);
    return v > 0n ? v : undefined;
  }
}
