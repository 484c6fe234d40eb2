import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { powHash } from '../../node-core/protocol/pow.ts';
import {
  Account,
  expectRejected,
  failingNonce,
  http,
  type Kit,
  kitOf,
  sealed,
  submit,
  XE,
} from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/** Proof of work on a network with a real (if small) difficulty: 1 nonce in 16 fails. */
const DIFFICULTY = 0x0fffffffffffffffn;

describe('ledger rules: proof of work', () => {
  let t: TestNode;
  let kit: Kit;

  beforeAll(async () => {
    t = await startTestNode({ powDifficulty: DIFFICULTY });
    kit = await kitOf(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** A signed opening claim whose nonce 0 is (or is not) valid work; no nonce attached. */
  function claimWhereZero(a: Account, valid: boolean): Block {
    for (let amount = XE; ; amount++) {
      const b = sealed(a.draft({ type: 'claim', asset: 'XE', amount, balance: amount }), a.seed, {
        ...kit,
        difficulty: 0n,
      });
      if (powHash(hexToBytes(b.hash!), 0n) >= DIFFICULTY === valid) return b;
    }
  }

  it('publishes the difficulty as 16 hex digits without 0x', async () => {
    expect(((await http(kit.url, 'GET', '/node')).body as Record<string, unknown>).pow_difficulty).toBe(
      '0fffffffffffffff',
    );
    expect(kit.difficulty).toBe(DIFFICULTY);
  });

  it('rejects a nonce that fails the difficulty, accepts a solved one', async () => {
    const a = new Account(kit);
    const block = a.claimBlock(10n * XE);
    await expectRejected(
      kit,
      { ...block, pow_nonce: failingNonce(block, DIFFICULTY) },
      {
        status: 400,
        reason: 'invalid proof of work',
      },
    );
    await a.commit(block);
    expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '10000000' });
  });

  it('a missing pow_nonce means nonce 0: rejected when 0 fails, accepted when 0 is valid work', async () => {
    const a = new Account(kit);
    const failing = claimWhereZero(a, false);
    await expectRejected(kit, failing, { status: 400, reason: 'invalid proof of work' });
    await expectRejected(
      kit,
      { ...failing, pow_nonce: 0n },
      { status: 400, reason: 'invalid proof of work' },
    );
    // The node form omits a zero nonce, so a block solved by nonce 0 must be accepted without one.
    const passing = claimWhereZero(a, true);
    const r = await submit(kit, { ...passing, pow_nonce: 0n });
    expect(r.status, r.text).toBe(201);
    // The answer writes the nonce, 0 included (issue #14).
    expect(r.body).toMatchObject({ pow_nonce: 0 });
  });
});
