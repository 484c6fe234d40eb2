import { mergeEntry, mergeKeyedList } from '../window-store/merge.ts';
import type { VaultAccessKey, VaultAccount, VaultContents } from './vault.ts';

/**
 * Three-way merge of the vault's contents when two windows of one wallet changed it at once (one
 * added an account while the other renamed one): accounts by identity (a derived account by its
 * index, an imported one by its seed), access keys by public key. Whatever only one window changed
 * survives; where both changed one account, `ours` wins field by field. The phrase's next index is
 * the higher of the two, so no index is handed out twice.
 *
 * Undefined when the two are different wallets (different phrases): nothing to merge, and the
 * keystore then locks as before.
 */
export function mergeVaultContents(
  base: VaultContents | undefined,
  ours: VaultContents,
  theirs: VaultContents,
): VaultContents | undefined {
  if (ours.phrase && theirs.phrase && ours.phrase.entropy !== theirs.phrase.entropy) return undefined;
  // A phrase is never taken away (the keystore locks when one goes): one side may have added it.
  const phrase = ours.phrase?.entropy ?? theirs.phrase?.entropy;
  const nextIndex = Math.max(ours.phrase?.nextIndex ?? 0, theirs.phrase?.nextIndex ?? 0);
  const accounts = mergeKeyedList<VaultAccount>(
    base?.accounts,
    ours.accounts,
    theirs.accounts,
    (a) => (a.kind === 'derived' ? `derived:${a.index}` : `imported:${a.seed}`),
    (b, o, t) => ({
      ...withoutHidden(o),
      label: mergeEntry(b?.label, o.label, t.label) ?? o.label,
      ...(mergeEntry(b?.hidden ?? false, o.hidden ?? false, t.hidden ?? false) ? { hidden: true } : {}),
    }),
  );
  const accessKeys = mergeKeyedList<VaultAccessKey>(
    base?.accessKeys,
    ours.accessKeys ?? [],
    theirs.accessKeys ?? [],
    (k) => k.pub,
    // Both sides only ever add the lease hash to a key: keep whichever has it.
    (_b, o, t) => (o.lease ? o : t),
  );
  return {
    ...(phrase !== undefined ? { phrase: { entropy: phrase, nextIndex } } : {}),
    accounts,
    ...(accessKeys.length > 0 ? { accessKeys } : {}),
  };
}

function withoutHidden(a: VaultAccount): VaultAccount {
  const { hidden: _hidden, ...rest } = a;
  return rest;
}
