import { afterEach, describe, expect, it } from 'vitest';
import { signBytesNode, verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { crashWorker } from '../helpers/verify-pool.ts';

/**
 * A node whose signature-check worker dies says so in its log (the GUI's log view reads the same
 * ring) and still answers every check: before, a dead worker was silent.
 */
describe('a signature-check worker that dies', () => {
  let t: TestNode | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('is logged as a warning with its cause, and the checks it held are answered', async () => {
    t = await startTestNode({ verifyThreads: 1 });
    const pool = t.node.verifyPool;
    const seed = randomSeed();
    const pub = hexToBytes(keyPairFromSeed(seed).pub_key);
    const checks = Array.from({ length: 40 }, (_, i) => {
      const msg = new Uint8Array(32).fill(i);
      return { msg, sig: signBytesNode(i % 4 === 0 ? new Uint8Array(32).fill(200 - i) : msg, seed) };
    });
    const want = checks.map((c) => verifyBytesNode(c.sig, c.msg, pub));
    // The node starts its worker with the first burst; the next burst goes to it.
    await Promise.all(checks.map((c) => pool.verify(c.sig, c.msg, pub)));
    await waitFor(() => pool.onlineWorkers() === 1, 10_000, 'the verify worker to start');
    const held = checks.map((c) => pool.verify(c.sig, c.msg, pub));
    await new Promise((r) => setImmediate(r));
    expect(pool.workload(), 'the burst went to the worker').toEqual([40]);
    // It ends before it answers, as a crash would.
    await crashWorker(pool);
    expect(await Promise.all(held)).toEqual(want);

    const lines = t.node.logRing.query({ level: 'warn', text: 'signature-check worker died' });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields.worker).toEqual({ ran: true, exitCode: 1, unanswered: 40 });
  });
});
