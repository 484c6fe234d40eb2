import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BenchmarkError,
  benchmarkWorkFor,
  type BenchmarkWork,
  startBenchmark,
} from '../../node-core/leasing/benchmark.ts';
import { computeWorkProof } from '../../node-core/leasing/benchmark-work.ts';
import { REFERENCE_WORKLOAD } from '../../node-core/protocol/certificate.ts';

/** reference-behavior.md 4.7, written out plainly (BigInt indices, a fresh hash object per step). */
function specWorkProof(seed: Uint8Array, iterations: number, n: number, reads: number): string {
  const sha = (...parts: Uint8Array[]) => {
    const h = createHash('sha256');
    for (const p of parts) h.update(p);
    return h.digest();
  };
  let h: Uint8Array = seed;
  for (let i = 0; i < iterations; i++) h = sha(h);
  const cpuHash = h;
  const table: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const be = Buffer.alloc(8);
    be.writeBigUInt64BE(BigInt(i));
    table.push(sha(cpuHash, be));
  }
  const first8 = (b: Uint8Array) => Buffer.from(b).readBigUInt64BE(0);
  const running = createHash('sha256');
  let idx = Number(first8(cpuHash) % BigInt(n));
  for (let r = 0; r < reads; r++) {
    const entry = table[idx]!;
    running.update(entry);
    idx = Number(first8(entry) % BigInt(n));
  }
  return sha(cpuHash, running.digest()).toString('hex');
}

const seed = createHash('sha256').update('benchmark seed').digest();
const tiny: BenchmarkWork = { seed, iterations: 1000, tableEntries: 64, reads: 500 };

describe('computeWorkProof (in-thread)', () => {
  it('matches the specification’s algorithm', () => {
    expect(computeWorkProof(tiny)).toBe(specWorkProof(seed, 1000, 64, 500));
  });

  it('reduces indices mod a table size that is not a power of two, and with 0 iterations', () => {
    const w = { seed, iterations: 0, tableEntries: 1000, reads: 3000 };
    expect(computeWorkProof(w)).toBe(specWorkProof(seed, 0, 1000, 3000));
    const one = { seed, iterations: 3, tableEntries: 1, reads: 2 };
    expect(computeWorkProof(one)).toBe(specWorkProof(seed, 3, 1, 2));
  });

  it('refuses a malformed workload', () => {
    expect(() => computeWorkProof({ ...tiny, seed: seed.subarray(0, 31) })).toThrow(RangeError);
    expect(() => computeWorkProof({ ...tiny, tableEntries: 0 })).toThrow(RangeError);
    expect(() => computeWorkProof({ ...tiny, iterations: 1.5 })).toThrow(RangeError);
    expect(() => computeWorkProof({ ...tiny, reads: -1 })).toThrow(RangeError);
  });
});

describe('startBenchmark (worker thread)', () => {
  it('returns the work proof and the elapsed seconds, with progress up to 1', async () => {
    const fractions: number[] = [];
    const work = { seed, iterations: 20_000, tableEntries: 4096, reads: 10_000 };
    const run = startBenchmark(work, { onProgress: (f) => fractions.push(f) });
    const r = await run.result;
    expect(r.work_proof).toBe(specWorkProof(seed, 20_000, 4096, 10_000));
    expect(r.elapsed_seconds).toBeGreaterThan(0);
    expect(fractions.length).toBeGreaterThan(2);
    expect(fractions.at(-1)).toBe(1);
    for (let i = 1; i < fractions.length; i++)
      expect(fractions[i]!).toBeGreaterThanOrEqual(fractions[i - 1]!);
    expect(fractions.every((f) => f > 0 && f <= 1)).toBe(true);
  });

  it('keeps the event loop free while it works', async () => {
    const run = startBenchmark({ seed, iterations: 500_000, tableEntries: 16, reads: 16 });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    await run.result;
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
  });

  it('stop() terminates the worker and rejects the result as cancelled', async () => {
    let progressed!: () => void;
    const started = new Promise<void>((resolve) => (progressed = resolve));
    // Far more work than the test would wait for; the first progress comes after 1/200 of it.
    const run = startBenchmark(
      { seed, iterations: 100_000_000, tableEntries: 16, reads: 16 },
      { onProgress: () => progressed() },
    );
    await started;
    const t = performance.now();
    await run.stop();
    await expect(run.result).rejects.toMatchObject({ code: 'ERR_BENCHMARK_CANCELLED' });
    await expect(run.result).rejects.toBeInstanceOf(BenchmarkError);
    expect(performance.now() - t).toBeLessThan(5000);
    await run.stop(); // idempotent
  });

  it('an AbortSignal cancels too, even one aborted before the start', async () => {
    const ac = new AbortController();
    const run = startBenchmark(
      { seed, iterations: 1_000_000_000, tableEntries: 16, reads: 16 },
      { signal: ac.signal },
    );
    ac.abort();
    await expect(run.result).rejects.toMatchObject({ code: 'ERR_BENCHMARK_CANCELLED' });
    const early = startBenchmark(tiny, { signal: AbortSignal.abort() });
    await expect(early.result).rejects.toMatchObject({ code: 'ERR_BENCHMARK_CANCELLED' });
  });

  it('derives the work from a workload (the reference one is version 3)', () => {
    expect(benchmarkWorkFor(REFERENCE_WORKLOAD, seed)).toEqual({
      seed,
      iterations: 375_000_000,
      tableEntries: 8_388_608,
      reads: 1_000_000,
    });
  });
});
