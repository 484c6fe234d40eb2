import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerError } from '../../node-core/ledger/errors.ts';
import { Account, type Kit, kitOf, sealed, XE } from '../helpers/ledger-kit.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { randomSeed } from '../../node-core/protocol/keys.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * A gossiped block is checked (precheck: hash, proof of work, signature) before it is relayed, then
 * submitted. One that arrives before its previous is refused for now and parked; when it is tried
 * again, its signature is not verified a second time. One refused for good is forgotten: the same
 * block submitted later is verified again. Real node, real verify pool (its calls counted).
 */
describe('a prechecked block refused for now', () => {
  let t: TestNode;
  let kit: Kit;
  let verifies = 0;

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    const pool = t.node.verifyPool;
    const verify = pool.verify.bind(pool);
    pool.verify = (...args) => {
      verifies += 1;
      return verify(...args);
    };
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('is not verified again when it is retried after its previous block', async () => {
    const a = new Account(kit);
    await a.claim(10n * XE);
    const dest = new Account(kit).address;
    const first = a.sendBlock(dest, 1n);
    a.advance(first); // built on locally, not submitted yet
    const second = a.sendBlock(dest, 1n);

    const before = verifies;
    await t.node.ledger.precheck(second, { live: true });
    expect(verifies).toBe(before + 1);
    const early = await t.node.ledger.submit(second, { live: true }).catch((e: unknown) => e);
    expect(early).toBeInstanceOf(LedgerError);
    expect(early).toMatchObject({ code: 'previous_not_found', retryable: true });

    await t.node.ledger.submit(first, { live: true });
    expect(verifies).toBe(before + 2); // the first block's own check
    const retried = await t.node.ledger.submit(second, { live: true });
    expect(retried.status).toBe('accepted');
    expect(verifies).toBe(before + 2);
  });

  it('is verified again once it was refused for good', async () => {
    const a = new Account(kit);
    await a.claim(10n * XE);
    // Claims a balance that does not follow from the chain: refused whatever arrives later.
    const wrong = a.build({
      type: 'send',
      asset: 'XE',
      destination: new Account(kit).address,
      amount: 1n,
      balance: 5n,
    });

    const before = verifies;
    await t.node.ledger.precheck(wrong, { live: true });
    const refused = await t.node.ledger.submit(wrong, { live: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LedgerError);
    expect((refused as LedgerError).retryable).toBe(false);
    expect(verifies).toBe(before + 1);
    await t.node.ledger.submit(wrong, { live: true }).catch(() => {});
    expect(verifies).toBe(before + 2);
  });

  it('verifies a block of an account whose open is only prechecked with the key the open declared', async () => {
    const dest = new Account(kit).address;
    // An account whose open this node has not seen: refused for now, as before.
    const unseen = new Account(kit);
    unseen.advance(unseen.claimBlock(XE));
    await expect(t.node.ledger.precheck(unseen.sendBlock(dest, 1n), { live: true })).rejects.toMatchObject({
      code: 'unopened_account',
      retryable: true,
    });

    // A gossip batch holding an open and the next block: both prechecked in one turn, neither
    // submitted yet, and both pass.
    const a = new Account(kit);
    const open = a.claimBlock(10n * XE);
    a.advance(open);
    const next = a.sendBlock(dest, 1n);
    const before = verifies;
    await Promise.all([
      t.node.ledger.precheck(open, { live: true }),
      t.node.ledger.precheck(next, { live: true }),
    ]);
    expect(verifies).toBe(before + 2);
    expect(t.node.ledger.getBlock(open.hash!)).toBeUndefined();
    // Submitted in order, both are accepted and neither is verified again.
    expect((await t.node.ledger.submit(open, { live: true })).status).toBe('accepted');
    expect((await t.node.ledger.submit(next, { live: true })).status).toBe('accepted');
    expect(verifies).toBe(before + 2);
  });

  it('submits a prechecked block with one look-up by hash, and answers a copy stored meanwhile as a duplicate', async () => {
    const ledger = t.node.ledger as unknown as { readBlock(hash: string | Uint8Array): unknown };
    const readBlock = ledger.readBlock.bind(ledger);
    const looked: string[] = [];
    ledger.readBlock = (hash: string | Uint8Array) => {
      // By hex or, where the caller has them, by the hash's bytes.
      looked.push(typeof hash === 'string' ? hash : bytesToHex(hash));
      return readBlock(hash);
    };
    try {
      const a = new Account(kit);
      await a.claim(10n * XE);
      const block = a.sendBlock(new Account(kit).address, 1n);
      await t.node.ledger.precheck(block, { live: true });
      looked.length = 0;
      expect((await t.node.ledger.submit(block, { live: true })).status).toBe('accepted');
      // applyBlock's own look-up inside the write, not process's before it as well.
      expect(looked.filter((h) => h === block.hash)).toHaveLength(1);

      // The same block arriving again by another peer (another object), prechecked before the
      // first copy was stored: stored now, it is a duplicate, with the stored block's height.
      a.advance(block);
      const next = a.sendBlock(new Account(kit).address, 1n);
      const copy = structuredClone(next);
      await t.node.ledger.precheck(next, { live: true });
      await t.node.ledger.precheck(copy, { live: true });
      const first = await t.node.ledger.submit(next, { live: true });
      expect(first.status).toBe('accepted');
      const again = await t.node.ledger.submit(copy, { live: true });
      expect(again.status).toBe('duplicate');
      expect(again.height).toBe(first.height);
    } finally {
      ledger.readBlock = readBlock;
    }
  });

  it('learns no key from an open whose key does not derive its account', async () => {
    const a = new Account(kit);
    const other = randomSeed();
    const genuine = a.claimBlock(XE);
    // The open names a's address but declares another key, and signs with that key.
    const forged = sealed(a.draft({ type: 'claim', asset: 'XE', amount: XE, balance: XE }), other, kit);
    await expect(t.node.ledger.precheck(forged, { live: true })).rejects.toMatchObject({
      code: 'pub_key_rule',
      retryable: false,
    });
    a.advance(forged);
    const next = sealed(
      a.draft({ type: 'send', asset: 'XE', destination: new Account(kit).address, amount: 1n, balance: 0n }),
      other,
      kit,
    );
    await expect(t.node.ledger.precheck(next, { live: true })).rejects.toMatchObject({
      code: 'unopened_account',
    });
    // a's own open, seen later, does not make the other key's block pass: its key is a's.
    await t.node.ledger.precheck(genuine, { live: true });
    await expect(t.node.ledger.precheck(next, { live: true })).rejects.toMatchObject({
      code: 'invalid_signature',
    });
  });
});
