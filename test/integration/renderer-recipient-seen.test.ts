import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerClient } from '../../node-core/client/client.ts';
import { recipientSeen } from '../../renderer/src/wallet/recipient-seen.ts';
import { Account, type Kit, kitOf, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * The send form's question "has this node ever seen the address?" against a real node: an opened
 * account has, an address that sends already wait for has, any other address has not.
 */
describe('renderer: recipientSeen on a real node', () => {
  let t: TestNode;
  let kit: Kit;
  let client: LedgerClient;
  let payer: Account;
  const waiting = '5e'.repeat(32);
  const never = '7a'.repeat(32);

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    client = new LedgerClient(t.node.url);
    payer = new Account(kit);
    await payer.claim(10n * XE);
    await payer.commit(payer.sendBlock(waiting, XE));
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('an opened account', async () => {
    expect(await recipientSeen(client, payer.address)).toBe('account');
  });

  it('an address a send waits for, not yet opened', async () => {
    expect(await client.chain(waiting, 0, 1)).toBeUndefined();
    expect(await recipientSeen(client, waiting)).toBe('pending');
  });

  it('an address nobody has used', async () => {
    expect(await recipientSeen(client, never)).toBe('never');
  });
});
