/**
 * The duplicate filter's memory (consensus/vote-book.ts): a key's newest timestamp, and the order in
 * which keys were last marked, oldest first, so the oldest can be dropped one at a time.
 *
 * Why not a Map kept in that order (deleting a key and setting it again to move it to the end, and
 * dropping the first key): V8 leaves a deleted entry's slot in a Map's table until the table is
 * rebuilt, and finding the first key walks every such slot from the front. With the filter at its
 * bound (200,000 votes, reached after 80 s of 2,500 votes a second), counting a vote took 20-150 µs
 * instead of 3.5 (issue #18). Here the order is a queue of (key, timestamp) beside the Map: a key
 * marked again (always with a newer timestamp: an older copy is a duplicate) is queued again, and its
 * older place in the queue, whose timestamp no longer matches, is skipped when it reaches the front.
 * Every operation is O(1) amortized.
 */
export class SeenFilter {
  private readonly latest = new Map<string, bigint>();
  private keys: string[] = [];
  private marks: bigint[] = [];
  private head = 0;
  /** Places of the queue looked at by `oldest` (tests: amortized O(1) a mark). */
  visited = 0;

  get size(): number {
    return this.latest.size;
  }

  get(key: string): bigint | undefined {
    return this.latest.get(key);
  }

  /** Records `ts` as the key's newest timestamp; the key becomes the most recently marked. */
  mark(key: string, ts: bigint): void {
    this.latest.set(key, ts);
    this.keys.push(key);
    this.marks.push(ts);
    // Places of keys marked again pile up behind: compacted once they outnumber the keys held.
    if (this.keys.length - this.head > 2 * this.latest.size + 1024) this.compact();
  }

  /**
   * The oldest marked key and its timestamp, or undefined when empty (places of keys marked again
   * since are passed over for good).
   */
  oldest(): { key: string; ts: bigint } | undefined {
    while (this.head < this.keys.length) {
      this.visited += 1;
      const key = this.keys[this.head]!;
      const ts = this.latest.get(key);
      if (ts !== undefined && ts === this.marks[this.head]) return { key, ts };
      this.head += 1;
    }
    return undefined;
  }

  /** Forgets the oldest marked key (the one `oldest` returned). */
  dropOldest(): void {
    const o = this.oldest();
    if (o === undefined) return;
    this.latest.delete(o.key);
    this.head += 1;
    if (this.head > 4096 && this.head * 2 > this.keys.length) this.compact();
  }

  /** The queue without the places passed over, in the same order. */
  private compact(): void {
    const keys: string[] = [];
    const marks: bigint[] = [];
    for (let i = this.head; i < this.keys.length; i++) {
      const ts = this.latest.get(this.keys[i]!);
      if (ts !== undefined && ts === this.marks[i]) {
        keys.push(this.keys[i]!);
        marks.push(this.marks[i]!);
      }
    }
    this.keys = keys;
    this.marks = marks;
    this.head = 0;
  }
}
