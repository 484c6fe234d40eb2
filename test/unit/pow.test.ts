import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPowKernelModuleSource, GENERATED_PATH } from '../../scripts/gen-pow-kernel.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import {
  BLOCK_POW_DIFFICULTY,
  CHAT_POW_DIFFICULTY,
  expectedAttempts,
  formatDifficulty,
  parseDifficulty,
  powHash,
  powValid,
  solvePowJs,
} from '../../node-core/protocol/pow.ts';
import { U64_MAX } from '../../node-core/protocol/int.ts';
import {
  loadPowKernel,
  loadPowKernelSync,
  MAX_SEARCH_COUNT,
  powSimdSupported,
  solvePow,
  type PowKernel,
} from '../../node-core/protocol/pow-wasm.ts';

interface PowVector {
  hash_hex: string;
  nonce: string;
  pow_hash: string;
}
const fixtures = JSON.parse(readFileSync(new URL('../fixtures/vectors.json', import.meta.url), 'utf8')) as {
  pow_vectors: PowVector[];
  pow_difficulty: string;
};
const vectors = fixtures.pow_vectors.map((v) => ({
  target: hexToBytes(v.hash_hex, 32),
  nonce: BigInt(v.nonce),
  pow: BigInt(v.pow_hash),
  label: `${v.hash_hex.slice(0, 8)}… nonce ${v.nonce}`,
}));
const TARGET = vectors[0]!.target;

/** The reference answer of `search`: the first nonce of the range reaching the difficulty. */
function referenceSearch(
  target: Uint8Array,
  start: bigint,
  count: number,
  difficulty: bigint,
): bigint | null {
  for (let i = 0; i < count; i++) {
    const nonce = (start + BigInt(i)) & U64_MAX;
    if (powHash(target, nonce) >= difficulty) return nonce;
  }
  return null;
}

function expectProtocolError(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    expect((e as ProtocolError).code).toBe(code);
    return;
  }
  throw new Error(`expected ProtocolError ${code}`);
}

describe('pow reference (pure JS)', () => {
  it('has the 12 vectors and the network difficulty', () => {
    expect(vectors).toHaveLength(12);
    expect(parseDifficulty(fixtures.pow_difficulty)).toBe(BLOCK_POW_DIFFICULTY);
  });

  it.each(vectors)('powHash matches $label', ({ target, nonce, pow }) => {
    expect(powHash(target, nonce)).toBe(pow);
    expect(powValid(target, nonce, pow)).toBe(true);
    if (pow < U64_MAX) expect(powValid(target, nonce, pow + 1n)).toBe(false);
    expect(powValid(target, nonce, 0n)).toBe(true);
  });

  it('rejects bad targets and nonces', () => {
    expectProtocolError(() => powHash(new Uint8Array(31), 0n), 'ERR_LENGTH');
    expectProtocolError(() => powHash(TARGET, -1n), 'ERR_FIELD_RANGE');
    expectProtocolError(() => powHash(TARGET, U64_MAX + 1n), 'ERR_FIELD_RANGE');
  });

  it('solvePowJs finds valid nonces at tiny difficulties, wrapping at 2^64', () => {
    const solved = solvePowJs(TARGET, 0x8000000000000000n, U64_MAX - 1n, 1000);
    expect(solved).not.toBeNull();
    expect(powValid(TARGET, solved!.nonce, 0x8000000000000000n)).toBe(true);
    expect(solvePowJs(TARGET, 2n, 5n)).toEqual({ nonce: 5n, attempts: 1 });
    expect(solvePowJs(TARGET, U64_MAX, 0n, 10)).toBeNull();
  });

  it('expectedAttempts', () => {
    expect(expectedAttempts(0n)).toBe(1);
    expect(expectedAttempts(BLOCK_POW_DIFFICULTY)).toBe(2 ** 21);
    expect(expectedAttempts(CHAT_POW_DIFFICULTY)).toBe(2 ** 18);
  });
});

describe('difficulty wire form', () => {
  it('round-trips every u64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), (d) => {
        const hex = formatDifficulty(d);
        expect(hex).toMatch(/^[0-9a-f]{16}$/);
        expect(parseDifficulty(hex)).toBe(d);
        expect(parseDifficulty('0x' + hex)).toBe(d);
      }),
    );
  });

  it('parses short and prefixed forms', () => {
    expect(parseDifficulty('2')).toBe(2n);
    expect(parseDifficulty('0x0000000000000002')).toBe(2n);
    expect(parseDifficulty('fffff80000000000')).toBe(BLOCK_POW_DIFFICULTY);
    expect(parseDifficulty('FFFFC00000000000')).toBe(CHAT_POW_DIFFICULTY);
    expect(formatDifficulty(2n)).toBe('0000000000000002');
    expect(formatDifficulty(BLOCK_POW_DIFFICULTY)).toBe('fffff80000000000');
  });

  it.each([
    '',
    '0x',
    '0x1ffffffffffffffff',
    '1ffffffffffffffff',
    'xyz',
    '-1',
    ' 1',
    '1 ',
    '0x-1',
    '1_0',
    '0g1',
  ])('rejects %j', (s) => expectProtocolError(() => parseDifficulty(s), 'ERR_HEX'));

  it('formatDifficulty rejects values outside u64', () => {
    expectProtocolError(() => formatDifficulty(-1n), 'ERR_FIELD_RANGE');
    expectProtocolError(() => formatDifficulty(U64_MAX + 1n), 'ERR_FIELD_RANGE');
  });
});

describe('generated kernel', () => {
  it('is up to date with scripts/gen-pow-kernel.ts (run `npm run gen:pow-kernel`)', async () => {
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(await buildPowKernelModuleSource());
  });

  it('SIMD is available on this engine and picked by default', () => {
    expect(powSimdSupported()).toBe(true);
    expect(loadPowKernelSync().simd).toBe(true);
  });
});

describe.each(['simd', 'scalar'] as const)('wasm %s kernel', (kind) => {
  let kernel: PowKernel;
  beforeAll(async () => {
    kernel = await loadPowKernel({ kind });
    expect(kernel.simd).toBe(kind === 'simd');
  });

  it.each(vectors)('hash matches $label on every lane', ({ target, nonce, pow }) => {
    expect(kernel.hash(target, nonce)).toBe(pow);
    const lanes = kernel.hashLanes(target, nonce);
    expect(lanes).toHaveLength(kernel.lanes);
    lanes.forEach((value, j) => expect(value).toBe(powHash(target, (nonce + BigInt(j)) & U64_MAX)));
  });

  it.each(vectors)('search finds exactly $label', ({ target, nonce, pow }) => {
    expect(kernel.search(target, nonce, 1, pow)).toBe(nonce);
    if (pow < U64_MAX) expect(kernel.search(target, nonce, 1, pow + 1n)).toBeNull();
  });

  it('returns null when nothing qualifies, and for count 0', () => {
    expect(kernel.search(TARGET, 0n, 10_000, U64_MAX)).toBeNull();
    expect(kernel.search(TARGET, 0n, 0, 0n)).toBeNull();
  });

  it('accepts everything at difficulty 0', () => {
    expect(kernel.search(TARGET, 123n, 1, 0n)).toBe(123n);
    expect(kernel.search(TARGET, U64_MAX, 7, 0n)).toBe(U64_MAX);
  });

  it('wraps around at 2^64', () => {
    // Vectors of this target: nonce 2^64-1 -> 4535831936323162800, nonce 0 -> 13311502639261453178.
    const d = 13311502639261453178n;
    expect(powHash(TARGET, U64_MAX)).toBeLessThan(d);
    expect(kernel.search(TARGET, U64_MAX, 1, d)).toBeNull();
    expect(kernel.search(TARGET, U64_MAX, 2, d)).toBe(0n);
    expect(kernel.hash(TARGET, 0n)).toBe(13311502639261453178n);
  });

  it('agrees with a reference scan for any start, count and difficulty', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.bigInt({ min: U64_MAX - 20n, max: U64_MAX }), fc.bigInt({ min: 0n, max: U64_MAX })),
        fc.integer({ min: 1, max: 17 }),
        fc.integer({ min: 0, max: 16 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (start, count, pick, target) => {
          // A difficulty taken from the range itself, so hits land on varied lanes.
          const values = Array.from({ length: count }, (_, i) =>
            powHash(target, (start + BigInt(i)) & U64_MAX),
          );
          const difficulty = values[pick % count]! + (pick % 3 === 0 ? 1n : 0n);
          expect(kernel.search(target, start, count, difficulty)).toBe(
            referenceSearch(target, start, count, difficulty),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('validates its arguments', () => {
    expectProtocolError(() => kernel.search(new Uint8Array(33), 0n, 1, 0n), 'ERR_LENGTH');
    expectProtocolError(() => kernel.search(TARGET, -1n, 1, 0n), 'ERR_FIELD_RANGE');
    expectProtocolError(() => kernel.search(TARGET, 0n, 1, 1n << 64n), 'ERR_FIELD_RANGE');
    expectProtocolError(() => kernel.search(TARGET, 0n, MAX_SEARCH_COUNT + 1, 0n), 'ERR_FIELD_RANGE');
    expectProtocolError(() => kernel.search(TARGET, 0n, 1.5, 0n), 'ERR_FIELD_RANGE');
  });

  it('solvePow finds a valid nonce and counts attempts', async () => {
    const difficulty = 0xffc0000000000000n; // ~1024 attempts
    const start = 77n;
    const progress: bigint[] = [];
    const solved = await solvePow(kernel, TARGET, difficulty, {
      startNonce: start,
      chunk: 100,
      onProgress: (a) => progress.push(a),
    });
    expect(powValid(TARGET, solved.nonce, difficulty)).toBe(true);
    expect(solved.nonce).toBe(referenceSearch(TARGET, start, Number(solved.attempts), difficulty));
    expect(solved.attempts).toBe(solved.nonce - start + 1n);
    expect(progress.at(-1)).toBe(solved.attempts);
  });
});

describe('solvePow cancellation', () => {
  it('rejects with ERR_POW_ABORTED when aborted before or during the search', async () => {
    const kernel = loadPowKernelSync();
    await expect(solvePow(kernel, TARGET, U64_MAX, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ERR_POW_ABORTED',
      name: 'AbortError',
    });
    const controller = new AbortController();
    let chunks = 0;
    const solving = solvePow(kernel, TARGET, U64_MAX, {
      signal: controller.signal,
      chunk: 1000,
      onProgress: () => {
        if (++chunks === 3) controller.abort(new Error('user cancelled'));
      },
    });
    await expect(solving).rejects.toMatchObject({ code: 'ERR_POW_ABORTED' });
    expect(chunks).toBe(3);
  });

  it('yields to the event loop between chunks, so a timer can abort it', async () => {
    const kernel = loadPowKernelSync();
    const solving = solvePow(kernel, TARGET, U64_MAX, { signal: AbortSignal.timeout(30), chunk: 10_000 });
    await expect(solving).rejects.toMatchObject({ code: 'ERR_POW_ABORTED' });
  });
});
