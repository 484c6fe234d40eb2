/** An in-memory stand-in for an LMDB string database: sorted keys, ranges with reverse, limit and end. */
export class MemoryDb {
  readonly map = new Map<string, string>();
  get(key: string): string | undefined {
    return this.map.get(key);
  }
  putSync(key: string, value: string): void {
    this.map.set(key, value);
  }
  removeSync(key: string): void {
    this.map.delete(key);
  }
  *getRange(opts: { reverse?: boolean; limit?: number; start?: string; end?: string } = {}) {
    const keys = [...this.map.keys()].sort();
    if (opts.reverse === true) keys.reverse();
    let n = 0;
    for (const key of keys) {
      if (opts.start !== undefined && (opts.reverse === true ? key > opts.start : key < opts.start)) continue;
      if (opts.end !== undefined && (opts.reverse === true ? key <= opts.end : key >= opts.end)) break;
      if (opts.limit !== undefined && n++ >= opts.limit) break;
      yield { key, value: this.map.get(key)! };
    }
  }
  *getKeys(opts: { reverse?: boolean; limit?: number; start?: string; end?: string } = {}) {
    for (const { key } of this.getRange(opts)) yield key;
  }
}
