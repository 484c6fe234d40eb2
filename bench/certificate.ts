/**
 * The performance-certificate benchmark (reference-behavior.md 4.7) at the reference workload,
 * version 3: 375,000,000 chained SHA-256, a table of 8,388,608 entries (256 MiB), 1,000,000
 * dependent reads. It takes minutes, so `npm run bench` runs it only when named:
 * `npm run bench -- certificate`. The score a certificate would carry is 1 / seconds.
 */
import { startBenchmark, benchmarkWorkFor } from '../node-core/leasing/benchmark.ts';
import { REFERENCE_WORKLOAD } from '../node-core/protocol/certificate.ts';

export default async function certificate(log: (line: string) => void): Promise<Record<string, number>> {
  const seed = new Uint8Array(32).fill(0x5a);
  let nextTenth = 0.1;
  const run = startBenchmark(benchmarkWorkFor(REFERENCE_WORKLOAD, seed), {
    onProgress: (f) => {
      if (f < nextTenth) return;
      log(`  ${Math.round(f * 100)}%`);
      nextTenth = Math.floor(f * 10 + 1) / 10;
    },
  });
  const r = await run.result;
  log(`reference workload v${REFERENCE_WORKLOAD.workload_version}: ${r.elapsed_seconds.toFixed(1)} s`);
  log(`score ${(1 / r.elapsed_seconds).toPrecision(4)}, work_proof ${r.work_proof}`);
  return { seconds: r.elapsed_seconds };
}
