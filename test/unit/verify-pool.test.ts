import { afterEach, describe, expect, it } from 'vitest';
import { signBytesNode, verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { VerifyPool, type WorkerLoss } from '../../node-core/fastpath/verify-pool.ts';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { turnsDuring } from '../helpers/event-loop.ts';
import { crashWorker } from '../helpers/verify-pool.ts';

/** Polls until `cond` holds (a worker thread takes a few tens of ms to start); fails after 10 s. */
async function waitFor(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the verify workers');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The signature-verification pool (real worker threads): same verdicts as node:crypto inline. */
describe('VerifyPool', () => {
  let pool: VerifyPool | undefined;
  afterEach(async () => {
    await pool?.stop();
    pool = undefined;
  });

  const seed = randomSeed();
  const pub = hexToBytes(keyPairFromSeed(seed).pub_key);
  /** 60 messages, every third one with a signature that does not match it. */
  const cases = Array.from({ length: 60 }, (_, i) => {
    const msg = new Uint8Array(32).fill(i);
    const sig = signBytesNode(i % 3 === 0 ? new Uint8Array(32).fill(255 - i) : msg, seed);
    return { msg, sig };
  });

  /**
   * A pool of one worker that answers each message after 200 ms (test/fixtures/slow-verify-worker.ts),
   * busy with one request (`first`, true) once this returns: what comes next meets a busy worker.
   */
  async function busySlowPool(maxBatch?: number): Promise<{ slow: VerifyPool; first: Promise<boolean> }> {
    const slow = new VerifyPool({
      threads: 1,
      initialThreads: 1,
      ...(maxBatch ? { maxBatch } : {}),
      workerFile: new URL('../fixtures/slow-verify-worker.ts', import.meta.url),
    });
    pool = slow; // stopped after the test
    slow.start();
    await waitFor(() => slow.onlineWorkers() === 1);
    const first = slow.verify(cases[1]!.sig, cases[1]!.msg, pub);
    await new Promise((r) => setImmediate(r));
    return { slow, first };
  }

  it('gives the verdicts node:crypto gives, for requests batched into one worker message', async () => {
    pool = new VerifyPool({ threads: 1, maxBatch: 16 });
    pool.start();
    const got = await Promise.all(cases.map((c) => pool!.verify(c.sig, c.msg, pub)));
    const want = cases.map((c) => verifyBytesNode(c.sig, c.msg, pub));
    expect(got).toEqual(want);
    expect(got.filter((ok) => !ok)).toHaveLength(20);
  });

  it('spreads a burst over every worker, with the same verdicts', async () => {
    const lost: WorkerLoss[] = [];
    pool = new VerifyPool({ threads: 2, initialThreads: 2, onWorkerLost: (l) => lost.push(l) });
    pool.start();
    const pending = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    // The burst is handed out at the end of this event-loop turn: half to each worker.
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()).toEqual([30, 30]);
    const got = await Promise.all(pending);
    expect(got).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
    // Nothing is left unanswered. (Once in a CI run, under the whole suite's load, one of the two
    // workers died here, why was not recorded then, and its checks were answered here as designed,
    // which the tests below hold. A loss is printed with its cause; the answers are asserted.)
    if (lost.length > 0) console.warn('a verify worker died during the burst:', lost);
    expect(pool.workload()).toEqual(Array(2 - lost.length).fill(0));
  });

  it('starts its second worker only when a burst comes, and uses it once it runs', async () => {
    pool = new VerifyPool({ threads: 2 });
    pool.start();
    // One request at a time is no burst: one worker.
    for (const c of cases.slice(0, 3)) await pool.verify(c.sig, c.msg, pub);
    expect(pool.workload()).toEqual([0]);
    // A burst starts the second worker; this burst goes to the first, which is running.
    const first = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()).toEqual([60, 0]);
    await Promise.all(first);
    await waitFor(() => pool!.onlineWorkers() === 2);
    const second = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()).toEqual([30, 30]);
    expect(await Promise.all(second)).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
  });

  it('holds requests made while every worker is busy and sends them together once one answers', async () => {
    const { slow, first } = await busySlowPool();
    expect(slow.workload()).toEqual([1]);
    const wave = cases.map((c) => slow.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(slow.workload(), 'the wave waits: the worker is busy').toEqual([1]);
    expect(await first).toBe(true);
    expect(slow.workload(), 'the whole wave went out with the answer').toEqual([60]);
    expect(await Promise.all(wave)).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
    expect(slow.workload()).toEqual([0]);
  });

  it('holds a wave while its worker still answers the messages of a larger burst', async () => {
    // A burst held for the busy worker goes out in messages of 16: one answer leaves three more.
    const { slow, first } = await busySlowPool(16);
    const burst = cases.map((c) => slow.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(await first).toBe(true);
    expect(slow.workload(), 'the burst went out with the answer').toEqual([60]);
    const wave = cases.map((c) => slow.verify(c.sig, c.msg, pub));
    await burst[0];
    expect(slow.workload(), 'the wave waits for the rest of the burst').toEqual([44]);
    const want = cases.map((c) => verifyBytesNode(c.sig, c.msg, pub));
    expect(await Promise.all(burst)).toEqual(want);
    expect(await Promise.all(wave)).toEqual(want);
  });

  it('answers the requests it holds for a busy worker when that worker dies', async () => {
    const { slow, first } = await busySlowPool();
    const held = cases.map((c) => slow.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(slow.workload(), 'the wave is held for the busy worker').toEqual([1]);
    // It ends before it answers.
    await crashWorker(slow);
    expect(await first).toBe(true);
    expect(await Promise.all(held)).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
  });

  it('loses no request when a worker thread dies (the worker is terminated from outside)', async () => {
    const lost: WorkerLoss[] = [];
    pool = new VerifyPool({ threads: 1, onWorkerLost: (l) => lost.push(l) });
    pool.start();
    await waitFor(() => pool!.onlineWorkers() === 1);
    const pending = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()).toEqual([60]);
    await crashWorker(pool);
    expect(await Promise.all(pending)).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
    expect(pool.workload()).toEqual([]);
    // The loss is told (the node logs it), with what the worker held.
    expect(lost).toEqual([{ ran: true, exitCode: 1, unanswered: 60 }]);
    // Later requests are still answered, and a new worker takes over.
    expect(await pool.verify(cases[1]!.sig, cases[1]!.msg, pub)).toBe(true);
    expect(await pool.verify(cases[3]!.sig, cases[3]!.msg, pub)).toBe(false);
    await waitFor(() => pool!.onlineWorkers() === 1);
    const again = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()[0]).toBeGreaterThan(0);
    expect(await Promise.all(again)).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
  });

  it('checks a burst here a slice at a time while its first worker starts, not in one go', async () => {
    // As the node runs it: no worker until the first signatures come.
    pool = new VerifyPool({ threads: 1, initialThreads: 0 });
    pool.start();
    const burst = Array.from({ length: 8 }, () => cases).flat(); // 480 checks: tens of ms in one go
    const { result: got, turns } = await turnsDuring(() =>
      Promise.all(burst.map((c) => pool!.verify(c.sig, c.msg, pub))),
    );
    expect(got).toEqual(burst.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
    expect(turns, 'event-loop turns while the burst was checked').toBeGreaterThan(1);
    // The worker started meanwhile takes the next burst.
    await waitFor(() => pool!.onlineWorkers() === 1);
    const next = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()).toEqual([60]);
    expect(await Promise.all(next)).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
  });

  it('verifies inline, without spawning again and again, when its worker cannot start', async () => {
    pool = new VerifyPool({ threads: 2, workerFile: new URL('./no-such-verify-worker.js', import.meta.url) });
    pool.start();
    for (let round = 0; round < 5; round++) {
      const got = await Promise.all(cases.map((c) => pool!.verify(c.sig, c.msg, pub)));
      expect(got).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(pool.onlineWorkers()).toBe(0);
    // Another burst starts no new worker: it is verified inline at once.
    const last = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()).toEqual([]);
    expect(await Promise.all(last)).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
  });

  it('answers false at once for a signature or key of the wrong length', async () => {
    pool = new VerifyPool({ threads: 1 });
    pool.start();
    const c = cases[1]!;
    expect(await pool.verify(c.sig.subarray(0, 63), c.msg, pub)).toBe(false);
    expect(await pool.verify(c.sig, c.msg, pub.subarray(0, 31))).toBe(false);
    expect(await pool.verify(c.sig, c.msg, pub)).toBe(true);
  });

  it('settles every request when stopped, none is left waiting', async () => {
    pool = new VerifyPool({ threads: 1 });
    pool.start();
    const pending = cases.map((c) =>
      pool!.verify(c.sig, c.msg, pub).then(
        () => 'settled',
        () => 'settled',
      ),
    );
    await pool.stop();
    pool = undefined;
    expect(await Promise.all(pending)).toEqual(cases.map(() => 'settled'));
  });

  it('verifies inline without threads, a burst a slice at a time, and never starts a worker', async () => {
    pool = new VerifyPool({ threads: 0 });
    pool.start();
    const got = await Promise.all(cases.map((c) => pool!.verify(c.sig, c.msg, pub)));
    expect(got).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
    // 480 checks (tens of ms in one go, a catch-up page's worth): other work runs between slices.
    const burst = Array.from({ length: 8 }, () => cases).flat();
    const { result: all, turns } = await turnsDuring(() =>
      Promise.all(burst.map((c) => pool!.verify(c.sig, c.msg, pub))),
    );
    expect(all).toEqual(burst.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
    expect(turns, 'event-loop turns while the burst was checked').toBeGreaterThan(1);
    expect(pool.workload()).toEqual([]);
    expect(pool.onlineWorkers()).toBe(0);
  });
});
