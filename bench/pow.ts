/**
 * Proof-of-work benchmark: the WebAssembly kernels (one core, and all cores through PowSolver),
 * the scalar fallback and the pure-JS reference, each against a native C baseline measured in the
 * same run, plus the time to solve one block at the network difficulty (expected and measured).
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
  U64_MAX,
} from '../node-core/protocol/pow.ts';
import { loadPowKernelSync, type PowKernelKind } from '../node-core/protocol/pow-wasm.ts';
import { measureNative, type NativeResult, type NativeVector } from './pow-native.ts';

/** Never reached in a benchmark run (about 4e9 attempts), so searches run for their full time. */
const UNREACHABLE = 0xffffffff00000000n;
const BLOCK_SOLVES = 20;

const mhs = (hps: number): string => `${(hps / 1e6).toFixed(1).padStart(5)} M hashes/s`;
const ratio = (x: number, base: number | undefined): string => (base ? `${(x / base).toFixed(2)}x` : 'n/a');

function loadVectors(): NativeVector[] {
  const file = new URL('../test/fixtures/vectors.json', import.meta.url);
  const json = JSON.parse(readFileSync(file, 'utf8')) as {
    pow_vectors: { hash_hex: string; nonce: string; pow_hash: string }[];
  };
  return json.pow_vectors.map((v) => ({ targetHex: v.hash_hex, nonce: BigInt(v.nonce), pow: BigInt(v.pow_hash) }));
}

function randomTarget(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(32));
}

/** Hashes/s of one kernel on this thread, searching at an unreachable difficulty for `seconds`. */
function measureKernel(kind: PowKernelKind, seconds: number): number {
  const kernel = loadPowKernelSync({ kind });
  const target = randomTarget();
  const chunk = 1 << 18;
  let nonce = 0n;
  const runFor = (ms: number): { hashes: number; ms: number } => {
    const start = performance.now();
    let hashes = 0;
    while (performance.now() - start < ms) {
      if (kernel.search(target, nonce, chunk, U64_MAX) !== null) throw new Error('unexpected solution');
      nonce += BigInt(chunk);
      hashes += chunk;
    }
    return { hashes, ms: performance.now() - start };
  };
  runFor(300); // tier-up to optimised code
  const r = runFor(seconds * 1000);
  return (r.hashes / r.ms) * 1000;
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

/** All-core hashes/s of PowSolver: the attempt counter's growth during a search that cannot succeed. */
async function measureAllCores(solver: PowSolver, seconds: number): Promise<number> {
  const samples: { t: number; attempts: bigint }[] = [];
  const controller = new AbortController();
  const solving = solver.solve(randomTarget(), UNREACHABLE, {
    signal: controller.signal,
    onProgress: (attempts) => samples.push({ t: performance.now(), attempts }),
  });
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  controller.abort();
  await solving.catch(() => {});
  // Skip the first samples: thread wake-up and the first chunks are not steady state.
  const first = samples[Math.min(2, samples.length - 2)];
  const last = samples.at(-1);
  if (first === undefined || last === undefined || last.t <= first.t) throw new Error('no progress samples');
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
    const r = await solver.solve(target, BLOCK_POW_DIFFICULTY);
    if (!powValid(target, r.nonce, BLOCK_POW_DIFFICULTY)) {
      throw new Error(`invalid solution for ${bytesToHex(target)}: ${r.nonce}`);
    }
    times.push(r.ms);
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

export default async function benchPow(log: (line: string) => void): Promise<Record<string, number>> {
  const threads = availableParallelism();
  const vectors = loadVectors();
  // The pure-JS reference must agree with the vectors before anything is measured against it.
  for (const v of vectors) {
    if (powHash(hexToBytes(v.targetHex, 32), v.nonce) !== v.pow) throw new Error('powHash fails the vectors');
  }
  const figures: Record<string, number> = {};

  const natives = await measureNative({ threads, seconds: 1, vectors });
  let best: NativeResult | undefined;
  if (natives === null) {
    log('pow: native baseline unavailable (no working `cc`): ratios are n/a');
  } else {
    for (const [i, n] of natives.entries()) {
      log(`pow: native 1 core     ${mhs(n.oneCore)}   all ${threads} cores ${mhs(n.allCores)}   (${n.build})`);
      figures[`native${i}_1core_hps`] = n.oneCore;
      figures[`native${i}_all_hps`] = n.allCores;
    }
    const best1 = Math.max(...natives.map((n) => n.oneCore));
    const bestAll = Math.max(...natives.map((n) => n.allCores));
    best = { build: 'best native build', oneCore: best1, allCores: bestAll };
    figures.native_1core_hps = best1;
    figures.native_all_hps = bestAll;
  }
  const plain = natives?.[0];
  const vsNative = (x: number, key: 'oneCore' | 'allCores', label: string): string =>
    `(${ratio(x, best?.[key])} native ${label}; ${ratio(x, plain?.[key])} plain -O3 -march=native build)`;

  const simd = measureKernel('simd', 1.5);
  log(`pow: wasm simd 1 core  ${mhs(simd)}  ${vsNative(simd, 'oneCore', '1 core')}`);
  figures.wasm_simd_1core_hps = simd;

  const solver = new PowSolver({ threads });
  await solver.start();
  try {
    const all = await measureAllCores(solver, 2);
    log(`pow: wasm all ${threads} cores ${mhs(all)}  ${vsNative(all, 'allCores', 'all cores')}`);
    figures.wasm_all_hps = all;

    const scalar = measureKernel('scalar', 1);
    log(`pow: wasm scalar 1 core ${mhs(scalar)}  (${ratio(scalar, best?.oneCore)} native 1 core)`);
    figures.wasm_scalar_1core_hps = scalar;

    const js = measureJs(0.5);
    log(`pow: pure JS 1 core    ${mhs(js)}  (${ratio(js, best?.oneCore)} native 1 core)`);
    figures.js_1core_hps = js;

    const expectedMs = (expectedAttempts(BLOCK_POW_DIFFICULTY) / all) * 1000;
    const solves = await measureBlockSolves(solver, BLOCK_SOLVES);
    log(
      `pow: block ${formatDifficulty(BLOCK_POW_DIFFICULTY)} on all cores: expected ${expectedMs.toFixed(0)} ms; ` +
        `measured over ${BLOCK_SOLVES} solves: avg ${solves.avgMs.toFixed(0)} ms, median ${solves.medianMs.toFixed(0)} ms, ` +
        `max ${solves.maxMs.toFixed(0)} ms (avg ${(solves.avgAttempts / 1e6).toFixed(2)} M attempts)`,
    );
    figures.block_expected_ms = expectedMs;
    figures.block_avg_ms = solves.avgMs;
    figures.block_median_ms = solves.medianMs;
    figures.block_avg_attempts = solves.avgAttempts;
    if (best !== undefined) {
      figures.ratio_simd_1core = simd / best.oneCore;
      figures.ratio_all_cores = all / best.allCores;
    }
    if (plain !== undefined) {
      figures.ratio_simd_1core_plain = simd / plain.oneCore;
      figures.ratio_all_cores_plain = all / plain.allCores;
    }
  } finally {
    await solver.stop();
  }
  return figures;
}
