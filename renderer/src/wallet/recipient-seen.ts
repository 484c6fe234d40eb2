import { useQuery } from '@tanstack/react-query';
import type { LedgerClient } from '../../../node-core/client/client.ts';
import { api } from '../api.ts';

/**
 * Has this node ever seen the address on the ledger? An account with a chain (opened), or one that
 * sends are already waiting for, has been seen; anything else may be a typo, which a send cannot
 * take back. The node form's chain route answers 404 for an account it does not know.
 */
export type RecipientSeen = 'account' | 'pending' | 'never';

export async function recipientSeen(client: LedgerClient, address: string): Promise<RecipientSeen> {
  const chain = await client.chain(address, 0, 1);
  if (chain && chain.total > 0) return 'account';
  const pending = await client.pending(address);
  return pending.length > 0 ? 'pending' : 'never';
}

/** The check for the send form's review; off for own accounts and contacts (they are known). */
export function useRecipientSeen(address: string, enabled: boolean) {
  return useQuery({
    queryKey: ['recipient-seen', address],
    queryFn: () => recipientSeen(api(), address),
    enabled,
    // Asked afresh at every review: a send made a minute ago may have opened the address since.
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
}
