import { afterEach, describe, expect, it } from 'vitest';
import { signBytesNode, verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { VerifyPool } from '../../node-core/fastpath/verify-pool.ts';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';

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

  it('gives the verdicts node:crypto gives, for requests batched into one worker message', async () => {
    pool = new VerifyPool({ threads: 1, maxBatch: 16 });
    pool.start();
    const got = await Promise.all(cases.map((c) => pool!.verify(c.sig, c.msg, pub)));
    const want = cases.map((c) => verifyBytesNode(c.sig, c.msg, pub));
    expect(got).toEqual(want);
    expect(got.filter((ok) => !ok)).toHaveLength(20);
  });

  it('spreads a burst over every worker, with the same verdicts', async () => {
    pool = new VerifyPool({ threads: 2 });
    pool.start();
    const pending = cases.map((c) => pool!.verify(c.sig, c.msg, pub));
    // The burst is handed out at the end of this event-loop turn: half to each worker.
    await new Promise((r) => setImmediate(r));
    expect(pool.workload()).toEqual([30, 30]);
    const got = await Promise.all(pending);
    expect(got).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
    expect(pool.workload()).toEqual([0, 0]);
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

  it('verifies inline without threads', async () => {
    pool = new VerifyPool({ threads: 0 });
    pool.start();
    const got = await Promise.all(cases.map((c) => pool!.verify(c.sig, c.msg, pub)));
    expect(got).toEqual(cases.map((c) => verifyBytesNode(c.sig, c.msg, pub)));
  });
});
