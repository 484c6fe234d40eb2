import { useQueries, useQuery, type QueryClient } from '@tanstack/react-query';
import type { ChainBlock } from '../../../node-core/client/client.ts';
import { api } from '../api.ts';
import { fetchBalances } from './balances.ts';
import { claimAllowance, fetchFaucet } from './faucet.ts';
import { rowOf, type HistoryRow } from './history.ts';

/** The node's data as react-query queries, with the refresh rhythm of each. */
export const REFRESH_MS = 4000;

export const qk = {
  node: ['node'] as const,
  balances: (a: string) => ['balances', a] as const,
  pending: (a: string) => ['pending', a] as const,
  chain: (a: string, count: number) => ['chain', a, count] as const,
  block: (h: string) => ['block', h] as const,
  faucet: ['faucet'] as const,
  allowance: (a: string) => ['allowance', a] as const,
  recent: ['recent'] as const,
};

export function useNodeInfo() {
  return useQuery({
    queryKey: qk.node,
    queryFn: () => api().node(),
    refetchInterval: 3000,
    retry: false,
  });
}

export function useBalances(address: string) {
  return useQuery({
    queryKey: qk.balances(address),
    queryFn: () => fetchBalances(api(), address),
    refetchInterval: REFRESH_MS,
  });
}

export function usePending(address: string) {
  return useQuery({
    queryKey: qk.pending(address),
    queryFn: () => api().pending(address),
    refetchInterval: REFRESH_MS,
  });
}

/** Pending sends of several accounts (auto-receive, the account list's badges). */
export function usePendingMany(addresses: readonly string[]) {
  return useQueries({
    queries: addresses.map((a) => ({
      queryKey: qk.pending(a),
      queryFn: () => api().pending(a),
      refetchInterval: REFRESH_MS,
    })),
  });
}

export function useBalancesMany(addresses: readonly string[]) {
  return useQueries({
    queries: addresses.map((a) => ({
      queryKey: qk.balances(a),
      queryFn: () => fetchBalances(api(), a),
      refetchInterval: REFRESH_MS,
    })),
  });
}

export interface ChainWindow {
  total: number;
  /** Newest first, with heights. */
  blocks: { height: number; entry: ChainBlock }[];
}

/** The newest `count` blocks of a chain (newest first); an unknown account has none. */
export async function fetchChainWindow(address: string, count: number): Promise<ChainWindow> {
  const client = api();
  const head = await client.chain(address, 0, 1);
  if (!head || head.total === 0) return { total: 0, blocks: [] };
  const total = head.total;
  const start = Math.max(0, total - count);
  const out: ChainWindow['blocks'] = [];
  for (let offset = start; offset < total;) {
    const page = await client.chain(address, offset, Math.min(1000, total - offset));
    if (!page || page.blocks.length === 0) break;
    page.blocks.forEach((entry, i) => out.push({ height: offset + i + 1, entry }));
    offset += page.blocks.length;
  }
  return { total, blocks: out.reverse() };
}

export function useChainWindow(address: string, count: number) {
  return useQuery({
    queryKey: qk.chain(address, count),
    queryFn: () => fetchChainWindow(address, count),
    refetchInterval: REFRESH_MS,
  });
}

export function useBlock(hash: string | undefined) {
  return useQuery({
    queryKey: qk.block(hash ?? ''),
    queryFn: () => api().block(hash!),
    enabled: hash !== undefined,
    // A finalized block never changes; an unfinalized one only becomes final.
    staleTime: (q) => (q.state.data?.finalized ? Infinity : 5000),
  });
}

/** History rows of a chain window, with each receive's source send read (once; blocks are immutable). */
export function useHistoryRows(address: string, count: number) {
  const chain = useChainWindow(address, count);
  const sources = (chain.data?.blocks ?? [])
    .map((b) => b.entry.block)
    .filter((b) => b.type === 'receive' && b.source !== undefined)
    .map((b) => b.source!);
  const sourceQueries = useQueries({
    queries: sources.map((h) => ({
      queryKey: qk.block(h),
      queryFn: () => api().block(h),
      staleTime: Infinity,
    })),
  });
  const byHash = new Map(sources.map((h, i) => [h, sourceQueries[i]?.data?.block]));
  const rows: HistoryRow[] | undefined = chain.data?.blocks.map((b) =>
    rowOf(b.entry, b.height, b.entry.block.source ? byHash.get(b.entry.block.source) : undefined),
  );
  return { chain, rows, total: chain.data?.total ?? 0 };
}

export function useFaucet() {
  return useQuery({ queryKey: qk.faucet, queryFn: () => fetchFaucet(api()), staleTime: 60_000 });
}

export function useClaimAllowance(address: string) {
  const faucet = useFaucet();
  return useQuery({
    queryKey: qk.allowance(address),
    queryFn: () => claimAllowance(api(), address, faucet.data!, BigInt(Date.now()) * 1_000_000n),
    enabled: faucet.data != null,
    refetchInterval: 30_000,
  });
}

/** After a write: everything about the accounts touched is stale. */
export function invalidateAccounts(qc: QueryClient, ...addresses: string[]): Promise<void> {
  return Promise.all(
    addresses.flatMap((a) => [
      qc.invalidateQueries({ queryKey: ['balances', a] }),
      qc.invalidateQueries({ queryKey: ['pending', a] }),
      qc.invalidateQueries({ queryKey: ['chain', a] }),
      qc.invalidateQueries({ queryKey: ['allowance', a] }),
      qc.invalidateQueries({ queryKey: qk.node }),
      qc.invalidateQueries({ queryKey: qk.recent }),
    ]),
  ).then(() => undefined);
}
