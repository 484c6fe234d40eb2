import { createHash, hash } from 'node:crypto';

/**
 * The performance benchmark's work (reference-behavior.md 4.7), synchronous: it runs inside the
 * benchmark worker thread (benchmark.ts), never on the event loop. Node's native SHA-256 is used
 * for speed: the reference workload is 375 million hashes.
 *
 * 1. cpuHash: h = seed, then h = SHA-256(h), `iterations` times.
 * 2. A table of `tableEntries` entries, entry i = SHA-256(cpuHash || i as u64 BE).
 * 3. `reads` dependent reads: the first index is cpuHash's first 8 bytes (BE) mod n; each entry read
 *    is fed into a running SHA-256 and gives the next index by its first 8 bytes (BE) mod n. The
 *    running digest is memoryProof.
 * 4. work_proof = hex SHA-256(cpuHash || memoryProof) (the spec marks this last step UNCONFIRMED).
 */
export interface BenchmarkWork {
  /** 32 bytes (protocol/certificate.ts certificateSeed). */
  seed: Uint8Array;
  iterations: number;
  tableEntries: number;
  reads: number;
}

/**
 * The index arithmetic below stays exact in doubles while (n-1)^2 < 2^53; 2^26 entries is a 2 GiB
 * table, far above the reference's 2^23.
 */
export const MAX_TABLE_ENTRIES = 2 ** 26;

export function checkBenchmarkWork(w: BenchmarkWork): void {
  if (!(w.seed instanceof Uint8Array) || w.seed.length !== 32) throw new RangeError('seed must be 32 bytes');
  if (!Number.isSafeInteger(w.iterations) || w.iterations < 0) {
    throw new RangeError('iterations must be a non-negative integer');
  }
  if (!Number.isInteger(w.tableEntries) || w.tableEntries < 1 || w.tableEntries > MAX_TABLE_ENTRIES) {
    throw new RangeError(`tableEntries must be an integer from 1 to ${MAX_TABLE_ENTRIES}`);
  }
  if (!Number.isSafeInteger(w.reads) || w.reads < 0) {
    throw new RangeError('reads must be a non-negative integer');
  }
}

const TWO_32 = 2 ** 32;

/** The first 8 bytes of `b` at `off`, read as a u64 BE, mod n, without leaving exact doubles. */
function indexOf(b: Uint8Array, off: number, n: number): number {
  const hi = ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0;
  const lo = ((b[off + 4]! << 24) | (b[off + 5]! << 16) | (b[off + 6]! << 8) | b[off + 7]!) >>> 0;
  return ((hi % n) * (TWO_32 % n) + (lo % n)) % n;
}

/** Units of work: one per hash, table entry and read (each about one SHA-256 block). */
export function benchmarkUnits(w: BenchmarkWork): number {
  return w.iterations + w.tableEntries + w.reads;
}

/**
 * Runs the work and returns work_proof (64 hex). `onProgress(done)` is called every `every` units
 * (and at the end of each step) with the units done so far.
 */
export function computeWorkProof(
  w: BenchmarkWork,
  onProgress: (done: number) => void = () => {},
  every = Math.max(1, Math.ceil(benchmarkUnits(w) / 200)),
): string {
  checkBenchmarkWork(w);
  let done = 0;
  // Each step runs in chunks of `every` units, so the hot loops carry no progress bookkeeping.
  const chunked = (count: number, run: (from: number, to: number) => void) => {
    for (let from = 0; from < count;) {
      const to = Math.min(count, from + every);
      run(from, to);
      done += to - from;
      from = to;
      onProgress(done);
    }
  };

  let cpuHash: Uint8Array = new Uint8Array(w.seed);
  chunked(w.iterations, (from, to) => {
    let h = cpuHash;
    for (let i = from; i < to; i++) h = hash('sha256', h, 'buffer');
    cpuHash = h;
  });

  const n = w.tableEntries;
  const table = new Uint8Array(n * 32);
  const input = new Uint8Array(40);
  const view = new DataView(input.buffer);
  input.set(cpuHash, 0);
  chunked(n, (from, to) => {
    for (let i = from; i < to; i++) {
      view.setUint32(32, Math.floor(i / TWO_32));
      view.setUint32(36, i >>> 0);
      table.set(hash('sha256', input, 'buffer'), i * 32);
    }
  });

  const running = createHash('sha256');
  let idx = indexOf(cpuHash, 0, n);
  chunked(w.reads, (from, to) => {
    for (let r = from; r < to; r++) {
      const off = idx * 32;
      running.update(table.subarray(off, off + 32));
      idx = indexOf(table, off, n);
    }
  });
  const memoryProof = running.digest();

  const last = new Uint8Array(64);
  last.set(cpuHash, 0);
  last.set(memoryProof, 32);
  return hash('sha256', last, 'hex');
}
