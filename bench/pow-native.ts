/**
 * The native baseline of the PoW benchmark: builds bench/native/blake2b_pow.c with the system C
 * compiler into a temporary directory, checks it against the protocol's PoW vectors, and measures
 * its hashes/s on a number of threads.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SOURCE = fileURLToPath(new URL('./native/blake2b_pow.c', import.meta.url));

export interface NativeVector {
  readonly targetHex: string;
  readonly nonce: bigint;
  readonly pow: bigint;
}

export interface NativeBuildSpec {
  readonly name: string;
  readonly flags: readonly string[];
}

/** A built and verified native binary. */
export interface NativeBinary {
  readonly build: string;
  readonly path: string;
}

/**
 * The builds measured; the benchmark compares against the fastest. The first is the plain
 * `cc -O3 -march=native` build; the second asks gcc for 512-bit vectors (x86 with AVX-512, where
 * gcc otherwise prefers 256-bit), and is skipped where the compiler rejects the flag.
 */
export const NATIVE_BUILDS: readonly NativeBuildSpec[] = [
  { name: 'cc -O3 -march=native, 8 lanes', flags: ['-DLANES=8'] },
  {
    name: 'cc -O3 -march=native, 16 lanes, 512-bit vectors',
    flags: ['-DLANES=16', '-mprefer-vector-width=512'],
  },
];

async function build(dir: string, spec: NativeBuildSpec, index: number): Promise<string | null> {
  const binary = join(dir, `blake2b_pow_${index}`);
  try {
    await run('cc', ['-O3', '-march=native', '-pthread', ...spec.flags, '-o', binary, SOURCE]);
    return binary;
  } catch {
    return null;
  }
}

/** Throws unless the binary reproduces every vector: a wrong baseline is worse than none. */
async function checkVectors(binary: string, vectors: readonly NativeVector[]): Promise<void> {
  await Promise.all(
    vectors.map(async (v) => {
      const { stdout } = await run(binary, ['hash', v.targetHex, v.nonce.toString()]);
      if (BigInt(stdout.trim()) !== v.pow) {
        throw new Error(
          `native PoW mismatch for ${v.targetHex} nonce ${v.nonce}: ${stdout.trim()} != ${v.pow}`,
        );
      }
    }),
  );
}

/** Hashes/s of one run of `seconds` on `threads` threads. */
export async function nativeHashesPerSecond(
  binary: NativeBinary,
  threads: number,
  seconds: number,
): Promise<number> {
  const { stdout } = await run(binary.path, ['bench', String(threads), String(seconds)]);
  const m = /hashes=(\d+) seconds=([\d.]+)/.exec(stdout);
  if (m === null) throw new Error(`unexpected native bench output: ${stdout}`);
  return Number(m[1]) / Number(m[2]);
}

/**
 * Builds every variant that compiles into a temporary directory and checks each against the
 * vectors. Null when there is no working C compiler. Call `dispose` to remove the binaries.
 */
export async function buildNative(
  vectors: readonly NativeVector[],
): Promise<{ binaries: NativeBinary[]; dispose: () => Promise<void> } | null> {
  const dir = await mkdtemp(join(tmpdir(), 'pow-native-'));
  const dispose = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const binaries: NativeBinary[] = [];
    for (const [i, spec] of NATIVE_BUILDS.entries()) {
      const path = await build(dir, spec, i);
      if (path === null) continue;
      await checkVectors(path, vectors);
      binaries.push({ build: spec.name, path });
    }
    if (binaries.length > 0) return { binaries, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
  await dispose();
  return null;
}
