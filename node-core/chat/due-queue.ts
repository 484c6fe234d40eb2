/**
 * Ids with a due time each, the earliest first (the chat outbox's schedule). A binary heap whose
 * entries go stale when their id is set again or removed (each `set` is a new version of the id):
 * they are dropped as they surface,
 * and the heap is rebuilt when stale entries outnumber live ones. Taking the next due id costs
 * O(log n) where a walk over every id cost O(n); the outbox took one after each attempt, and a
 * week of messages to an offline recipient can hold thousands.
 */
interface Entry {
  at: number;
  id: string;
  version: number;
}

export class DueQueue {
  private readonly due = new Map<string, { at: number; version: number }>();
  private heap: Entry[] = [];
  private versions = 0;

  get size(): number {
    return this.due.size;
  }

  keys(): IterableIterator<string> {
    return this.due.keys();
  }

  get(id: string): number | undefined {
    return this.due.get(id)?.at;
  }

  set(id: string, at: number): void {
    const version = ++this.versions;
    this.due.set(id, { at, version });
    this.push({ at, id, version });
    if (this.heap.length > 2 * this.due.size + 64) this.rebuild();
  }

  delete(id: string): void {
    this.due.delete(id);
  }

  /** The earliest id and its time, without taking it; undefined when none is due at all. */
  peek(): { id: string; at: number } | undefined {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || this.due.get(top.id)?.version === top.version) return top;
      this.pop();
    }
  }

  /**
   * Takes the earliest id off the heap (it keeps its time until `set` or `delete`: an id being
   * attempted is due until the attempt records its outcome).
   */
  take(): { id: string; at: number } | undefined {
    const top = this.peek();
    if (top !== undefined) this.pop();
    return top;
  }

  /** The live entries only (an id taken and not set again stays out). */
  private rebuild(): void {
    const live = this.heap.filter((e) => this.due.get(e.id)?.version === e.version);
    this.heap = [];
    for (const e of live) this.push(e);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.at <= e.at) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = e;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const child = r < h.length && h[r]!.at < h[l]!.at ? r : l;
      if (h[child]!.at >= last.at) break;
      h[i] = h[child]!;
      i = child;
    }
    h[i] = last;
  }
}
