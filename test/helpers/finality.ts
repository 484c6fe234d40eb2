import { Account, type Kit, waitFinal, XE } from './ledger-kit.ts';

/** Finality on one node, held back and given back (for tests of unfinalized blocks and conflicts). */

/**
 * Delegates 30M of the 42M XE to another representative (by default one that never votes): the
 * node's own 29 % finalizes nothing alone.
 */
export async function stallFinality(
  kit: Kit,
  treasury: Account,
  rep = new Account(kit).address,
): Promise<Account> {
  const x = new Account(kit);
  const big = await treasury.send(x.address, 30_000_000n * XE);
  await waitFinal(kit, treasury.address);
  await x.commit(
    x.build({
      type: 'receive',
      asset: 'XE',
      source: big.hash!,
      balance: 30_000_000n * XE,
      representative: rep,
    }),
  );
  return x;
}

/** x delegates back to the node's representative: quorum returns. */
export async function restoreFinality(kit: Kit, x: Account, to: string): Promise<void> {
  await x.commit(
    x.build({
      type: 'send',
      asset: 'XE',
      destination: to,
      amount: 1n,
      balance: x.bal() - 1n,
      representative: kit.nodeAddress,
    }),
  );
}
