import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PowSolver } from '../../node-core/fastpath/pow-solver.ts';
import { powValid } from '../../node-core/protocol/pow.ts';

/**
 * The workers are .ts files loaded by Node itself, which needs Node >= 22.18 (type stripping).
 * `npm test` runs vitest on the pinned Node 22; `node_modules/.bin/vitest` alone may pick up an
 * older system `node` through its shebang.
 */
const nodeRunsTs = Boolean((process.features as { typescript?: unknown }).typescript);
if (!nodeRunsTs)
  console.warn(`pow-solver tests skipped: Node ${process.version} cannot run .ts workers; use npm test`);

const MODEST = 0xfff0000000000000n; // ~4096 attempts
// ~7e16 attempts: never found in a test (at 0xffffffff00000000, ~4e9, a lucky find within 150 ms
// came up about once in a thousand runs and failed the abort test).
const UNREACHABLE = 0xffffffffffffff00n;

const target = (fill: number): Uint8Array => new Uint8Array(32).fill(fill);
const messagePorts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;

describe.skipIf(!nodeRunsTs)('PowSolver', () => {
  const solver = new PowSolver({ progressIntervalMs: 10 });
  beforeAll(() => solver.start());
  afterAll(() => solver.stop());

  it('uses one SIMD worker per core by default', () => {
    expect(solver.threads).toBe(availableParallelism());
    expect(solver.running).toBe(true);
    expect(solver.simd).toBe(true);
  });

  it('solves at a modest difficulty and the nonce verifies', async () => {
    for (let i = 0; i < 5; i++) {
      const t = target(i);
      const r = await solver.solve(t, MODEST);
      expect(powValid(t, r.nonce, MODEST)).toBe(true);
      expect(r.attempts).toBeGreaterThan(0n);
      expect(r.ms).toBeGreaterThanOrEqual(0);
    }
  });

  it('queues concurrent solves and solves each', async () => {
    const targets = [1, 2, 3, 4].map(target);
    const results = await Promise.all(targets.map((t) => solver.solve(t, MODEST)));
    results.forEach((r, i) => expect(powValid(targets[i]!, r.nonce, MODEST)).toBe(true));
  });

  it('searches from startNonce: each worker starts at its share of the range after it', async () => {
    // At difficulty 0 every nonce is valid, so the answer is the first nonce of whichever worker
    // reports first: startNonce itself, or startNonce plus a multiple of 2^64 / threads.
    const r = await solver.solve(target(9), 0n, { startNonce: 1234n });
    const spacing = (1n << 64n) / BigInt(solver.threads);
    const starts = Array.from(
      { length: solver.threads },
      (_, i) => (1234n + BigInt(i) * spacing) % (1n << 64n),
    );
    expect(starts).toContain(r.nonce);
  });

  it('reports progress and rejects promptly with ERR_POW_ABORTED on abort', async () => {
    const controller = new AbortController();
    const progress: bigint[] = [];
    const solving = solver.solve(target(5), UNREACHABLE, {
      signal: controller.signal,
      onProgress: (a) => progress.push(a),
    });
    await new Promise((r) => setTimeout(r, 150));
    const abortedAt = performance.now();
    controller.abort();
    await expect(solving).rejects.toMatchObject({ code: 'ERR_POW_ABORTED', name: 'AbortError' });
    expect(performance.now() - abortedAt).toBeLessThan(100); // settled on abort, not after the workers stop
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.every((a, i) => i === 0 || a >= progress[i - 1]!)).toBe(true);
    expect(progress.at(-1)).toBeGreaterThan(100_000n);
    // The workers are free again at once.
    const r = await solver.solve(target(6), MODEST);
    expect(powValid(target(6), r.nonce, MODEST)).toBe(true);
  });

  it('drops an aborted queued solve without disturbing the running one', async () => {
    const first = new AbortController();
    const second = new AbortController();
    const running = solver.solve(target(7), UNREACHABLE, { signal: first.signal });
    const queued = solver.solve(target(8), MODEST, { signal: second.signal });
    second.abort();
    await expect(queued).rejects.toMatchObject({ code: 'ERR_POW_ABORTED' });
    first.abort();
    await expect(running).rejects.toMatchObject({ code: 'ERR_POW_ABORTED' });
    await expect(solver.solve(target(8), MODEST, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ERR_POW_ABORTED',
    });
  });

  it('rejects bad arguments', async () => {
    await expect(solver.solve(new Uint8Array(31), MODEST)).rejects.toMatchObject({ code: 'ERR_LENGTH' });
    await expect(solver.solve(target(1), -1n)).rejects.toMatchObject({ code: 'ERR_FIELD_RANGE' });
    expect(() => new PowSolver({ threads: 0 })).toThrow(RangeError);
  });
});

describe.skipIf(!nodeRunsTs)('PowSolver lifecycle', () => {
  it('stop() terminates the workers and rejects pending solves', async () => {
    const other = new PowSolver({ threads: 2 });
    const before = messagePorts();
    await other.start();
    const running = expect(other.solve(target(10), UNREACHABLE)).rejects.toMatchObject({
      code: 'ERR_POW_STOPPED',
    });
    const queued = expect(other.solve(target(11), UNREACHABLE)).rejects.toMatchObject({
      code: 'ERR_POW_STOPPED',
    });
    expect(messagePorts()).toBe(before + 2); // busy workers hold the process open
    await other.stop();
    await running;
    await queued;
    expect(other.running).toBe(false);
    expect(messagePorts()).toBe(before);
    await expect(other.solve(target(10), MODEST)).rejects.toMatchObject({ code: 'ERR_POW_NOT_STARTED' });
    // It can be started again.
    await other.start();
    const r = await other.solve(target(12), MODEST);
    expect(powValid(target(12), r.nonce, MODEST)).toBe(true);
    await other.stop();
    expect(messagePorts()).toBe(before);
  });
});
