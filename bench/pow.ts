/**
 * Proof-of-work benchmark: the WebAssembly kernels (one core, and all cores through PowSolver),
 * the scalar fallback and the pure-JS reference, each against a native C baseline measured in the
 * same run, plus the time to solve one block at the network difficulty (expected and measured).
 *
 * Throughput figures, native and wasm alike, are the best of ROUNDS short windows, and the native
 * and wasm windows alternate: on a shared machine the least disturbed window is the closest to what
 * the code can do, and alternating spreads any disturbance over both sides of each ratio.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { PowSolver } from '../node-core/fastpath/pow-solver.ts';
import { bytesToHex, hexToBytes } from '../node-core/protocol/hex.ts';
import {
  BLOCK_POW_DIFFICULTY,
  expectedAttempts,
  formatDifficulty,
  powHash,
  powValid,
} from '../node-core/protocol/pow.ts';
import { U64_MAX } from '../node-core/protocol/int.ts';
import { loadPowKernelSync, type PowKernelKind } from '../node-core/protocol/pow-wasm.ts';
import { buildNative, nativeHashesPerSecond, type NativeVector } from './pow-native.ts';

/** Never reached in a benchmark run (about 4e9 attempts), so searches run for their full time. */
const UNREACHABLE = 0xffffffff00000000n;
/** Solve times are geometric (std dev = mean): 40 solves give the mean within about ±16%. */
const BLOCK_SOLVES = 40;

const mhs = (hps: number): string => `${(hps / 1e6).toFixed(1).padStart(5)} M hashes/s`;
const ratio = (x: number, base: number | undefined): string => (base ? `${(x / base).toFixed(2)}x` : 'n/a');

function loadVectors(): NativeVector[] {
  const file = new URL('../test/fixtures/vectors.json', import.meta.url);
  const json = JSON.parse(readFileSync(file, 'utf8')) as {
    pow_vectors: { hash_hex: string; nonce: string; pow_hash: string }[];
  };
  return json.pow_vectors.map((v) => ({
    targetHex: v.hash_hex,
    nonce: BigInt(v.nonce),
    pow: BigInt(v.pow_hash),
  }));
}

function randomTarget(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(32));
}

const ROUNDS = 3;
const WINDOW_SECONDS = 0.5;

/** Measures one kernel on this thread, searching at an unreachable difficulty. */
function kernelMeter(kind: PowKernelKind): (seconds: number) => number {
  const kernel = loadPowKernelSync({ kind });
  const target = randomTarget();
  const chunk = 1 << 17;
  let nonce = 0n;
  const measure = (seconds: number): number => {
    const start = performance.now();
    let hashes = 0;
    while (performance.now() - start < seconds * 1000) {
      if (kernel.search(target, nonce, chunk, U64_MAX) !== null) throw new Error('unexpected solution');
      nonce += BigInt(chunk);
      hashes += chunk;
    }
    return (hashes / (performance.now() - start)) * 1000;
  };
  measure(0.3); // tier-up to optimised code
  return measure;
}

/** Hashes/s of the pure-JS reference (allocation and all: that is its real cost). */
function measureJs(seconds: number): number {
  const target = randomTarget();
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < seconds * 1000) {
    for (let i = 0; i < 1000; i++) powHash(target, BigInt(n + i));
    n += 1000;
  }
  return (n / (performance.now() - start)) * 1000;
}

/**
 * All-core hashes/s of PowSolver: how fast its attempt counter grows during a search that cannot
 * succeed, over `seconds` after a short warm-up (thread wake-up, first chunks).
 */
async function measureAllCores(solver: PowSolver, seconds: number, attempt = 0): Promise<number> {
  const samples: { t: number; attempts: bigint }[] = [];
  const controller = new AbortController();
  const solving = solver.solve(randomTarget(), UNREACHABLE, {
    signal: controller.signal,
    onProgress: (attempts) => samples.push({ t: performance.now(), attempts }),
  });
  const warmUpMs = 150;
  await new Promise((resolve) => setTimeout(resolve, warmUpMs + seconds * 1000));
  controller.abort();
  await solving.catch(() => {});
  const t0 = samples[0]?.t ?? 0;
  const first = samples.find((s) => s.t >= t0 + warmUpMs);
  const last = samples.at(-1);
  if (first === undefined || last === undefined || last.t - first.t < 100) {
    // With every core hashing, this thread's timer turns (the progress samples) can come late:
    // measure again over a longer window rather than fail the whole run.
    if (attempt < 3) return measureAllCores(solver, seconds * 2, attempt + 1);
    throw new Error('too few progress samples');
  }
  return (Number(last.attempts - first.attempts) / (last.t - first.t)) * 1000;
}

async function measureBlockSolves(
  solver: PowSolver,
  count: number,
): Promise<{ avgMs: number; medianMs: number; maxMs: number; avgAttempts: number }> {
  const times: number[] = [];
  let attempts = 0n;
  for (let i = 0; i < count; i++) {
    const target = randomTarget();
    // Wall time of the whole call: it includes waiting for the workers to leave the previous solve.
    const started = performance.now();
    const r = await solver.solve(target, BLOCK_POW_DIFFICULTY);
    times.push(performance.now() - started);
    if (!powValid(target, r.nonce, BLOCK_POW_DIFFICULTY)) {
      throw new Error(`invalid solution for ${bytesToHex(target)}: ${r.nonce}`);
    }
    attempts += r.attempts;
  }
  times.sort((a, b) => a - b);
  return {
    avgMs: times.reduce((a, b) => a + b, 0) / count,
    medianMs: times[Math.floor(count / 2)]!,
    maxMs: times.at(-1)!,
    avgAttempts: Number(attempts) / count,
  };
}

const best = (xs: readonly number[]): number => Math.max(...xs);

export default async function benchPow(log: (line: string) => void): Promise<Record<string, number>> {
  const threads = availableParallelism();
  const vectors = loadVectors();
  // The pure-JS reference must agree with the vectors before anything is measured against it.
  for (const v of vectors) {
    if (powHash(hexToBytes(v.targetHex, 32), v.nonce) !== v.pow) throw new Error('powHash fails the vectors');
  }
  const figures: Record<string, number> = {};
  const native = await buildNative(vectors);
  if (native === null) log('pow: native baseline unavailable (no working `cc`): ratios are n/a');
  const binaries = native?.binaries ?? [];
  const solver = new PowSolver({ threads, progressIntervalMs: 50 });
  try {
    await solver.start();
    const simdMeter = kernelMeter('simd');
    const native1 = binaries.map((): number[] => []);
    const nativeAll = binaries.map((): number[] => []);
    const simd1: number[] = [];
    const wasmAll: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, b] of binaries.entries())
        native1[i]!.push(await nativeHashesPerSecond(b, 1, WINDOW_SECONDS));
      simd1.push(simdMeter(WINDOW_SECONDS));
      for (const [i, b] of binaries.entries()) {
        nativeAll[i]!.push(await nativeHashesPerSecond(b, threads, WINDOW_SECONDS));
      }
      wasmAll.push(await measureAllCores(solver, WINDOW_SECONDS));
    }

    binaries.forEach((b, i) => {
      const one = best(native1[i]!);
      const all = best(nativeAll[i]!);
      log(`pow: native 1 core     ${mhs(one)}   all ${threads} cores ${mhs(all)}   (${b.build})`);
      figures[`native${i}_1core_hps`] = one;
      figures[`native${i}_all_hps`] = all;
    });
    // The baseline is the fastest native build; the plain -O3 -march=native build is shown too.
    const native1Best = binaries.length > 0 ? best(native1.map(best)) : undefined;
    const nativeAllBest = binaries.length > 0 ? best(nativeAll.map(best)) : undefined;
    const plain1 = native1[0] ? best(native1[0]) : undefined;
    const plainAll = nativeAll[0] ? best(nativeAll[0]) : undefined;
    const vs = (x: number, base: number | undefined, plain: number | undefined, label: string): string =>
      `(${ratio(x, base)} native ${label}; ${ratio(x, plain)} vs the plain build)`;

    const simd = best(simd1);
    const all = best(wasmAll);
    log(`pow: wasm simd 1 core  ${mhs(simd)}  ${vs(simd, native1Best, plain1, '1 core')}`);
    log(`pow: wasm all ${threads} cores ${mhs(all)}  ${vs(all, nativeAllBest, plainAll, 'all cores')}`);
    figures.wasm_simd_1core_hps = simd;
    figures.wasm_all_hps = all;
    if (native1Best !== undefined && nativeAllBest !== undefined) {
      figures.native_1core_hps = native1Best;
      figures.native_all_hps = nativeAllBest;
      figures.ratio_simd_1core = simd / native1Best;
      figures.ratio_all_cores = all / nativeAllBest;
    }
    if (plain1 !== undefined && plainAll !== undefined) {
      figures.ratio_simd_1core_plain = simd / plain1;
      figures.ratio_all_cores_plain = all / plainAll;
    }

    const scalarMeter = kernelMeter('scalar');
    const scalar = best(Array.from({ length: ROUNDS }, () => scalarMeter(WINDOW_SECONDS / 2)));
    log(`pow: wasm scalar 1 core ${mhs(scalar)}  (${ratio(scalar, native1Best)} native 1 core)`);
    figures.wasm_scalar_1core_hps = scalar;

    const js = measureJs(0.5);
    log(
      `pow: pure JS 1 core    ${(js / 1e3).toFixed(0).padStart(5)} k hashes/s  (${ratio(js, native1Best)} native 1 core)`,
    );
    figures.js_1core_hps = js;

    const expectedMs = (expectedAttempts(BLOCK_POW_DIFFICULTY) / all) * 1000;
    const solves = await measureBlockSolves(solver, BLOCK_SOLVES);
    log(
      `pow: block ${formatDifficulty(BLOCK_POW_DIFFICULTY)} on all cores: expected ${expectedMs.toFixed(0)} ms ` +
        `(2^21 attempts at the all-core rate); measured over ${BLOCK_SOLVES} solves: avg ${solves.avgMs.toFixed(0)} ms, ` +
        `median ${solves.medianMs.toFixed(0)} ms, max ${solves.maxMs.toFixed(0)} ms ` +
        `(avg ${(solves.avgAttempts / 1e6).toFixed(2)} M attempts)`,
    );
    figures.block_expected_ms = expectedMs;
    figures.block_avg_ms = solves.avgMs;
    figures.block_median_ms = solves.medianMs;
    figures.block_avg_attempts = solves.avgAttempts;
  } finally {
    await solver.stop();
    await native?.dispose();
  }
  return figures;
}
