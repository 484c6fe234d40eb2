/**
 * The order in which keys were last touched, oldest first, beside a Map its owner keeps: for bounded
 * tables that drop their least recently touched entry (the vote duplicate filter, the API's rate
 * limiter, the marketplace's messages seen, the vote book's hashes and ballots). The owner stamps
 * each touch (a timestamp, a counter) and keeps each key's latest stamp; a place in the queue whose
 * stamp is no longer its key's (touched again since, or removed) is passed over when it reaches the
 * front. Every operation is O(1) amortized.
 *
 * Why not the Map's own insertion order (deleting a key and setting it again to move it to the end,
 * and dropping the first key): V8 keeps a deleted entry's slot in a Map's table until the table is
 * rebuilt, and finding the first key walks every such slot from the front. At their bounds, counting
 * a vote took 20-150 µs instead of 3.5 (the filter's 200,000 votes, reached after 80 s of 2,500 votes
 * a second), a request from a new client 13-36 µs instead of 0.7-1 (100,000 clients), and a fresh
 * marketplace message 107 µs instead of 1.6 (10,000 held) (issue #18).
 */
export class RecencyQueue<K, S> {
  private readonly latest: (key: K) => S | undefined;
  private readonly live: () => number;
  private keys: K[] = [];
  private stamps: S[] = [];
  private head = 0;
  /** Places looked at by `oldest` (tests: amortized O(1) a touch). */
  visited = 0;

  /** `latest`: a key's current stamp, undefined once removed; `live`: how many keys the owner holds. */
  constructor(latest: (key: K) => S | undefined, live: () => number) {
    this.latest = latest;
    this.live = live;
  }

  /** The key was touched now, with `stamp` (which the owner now returns as its latest). */
  touch(key: K, stamp: S): void {
    this.keys.push(key);
    this.stamps.push(stamp);
    // Places passed over pile up behind: compacted once they outnumber the keys held.
    if (this.keys.length - this.head > 2 * this.live() + 1024) this.compact();
  }

  /** The least recently touched key still held, or undefined. */
  oldest(): K | undefined {
    while (this.head < this.keys.length) {
      this.visited += 1;
      const key = this.keys[this.head]!;
      if (this.latest(key) === this.stamps[this.head]) return key;
      this.head += 1;
    }
    return undefined;
  }

  /** Passes over the place of the key `oldest` just returned (its owner removes the key). */
  shift(): void {
    if (this.head >= this.keys.length) return;
    this.head += 1;
    if (this.head > 4096 && this.head * 2 > this.keys.length) this.compact();
  }

  /** The queue without the places passed over, in the same order. */
  private compact(): void {
    const keys: K[] = [];
    const stamps: S[] = [];
    for (let i = this.head; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (this.latest(key) !== this.stamps[i]) continue;
      keys.push(key);
      stamps.push(this.stamps[i]!);
    }
    this.keys = keys;
    this.stamps = stamps;
    this.head = 0;
  }
}
