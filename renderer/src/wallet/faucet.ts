import { ApiRequestError, type LedgerClient } from '../../../node-core/client/client.ts';

/**
 * The test-funds faucet: its terms come from the state chain (`sys.faucet`: an amount per period),
 * and what an account may still claim is worked out from its own claim blocks, so the app can say
 * "come back at 14:05" before signing anything instead of decoding a rejection.
 */
export interface FaucetTerms {
  amount: bigint;
  periodNs: bigint;
}

/** The claim the "Get test funds" button makes: 1,000 XE (less if less is left in the period). */
export const TEST_FUNDS = 1_000_000_000n;

export async function fetchFaucet(client: LedgerClient): Promise<FaucetTerms | null> {
  const path = '/statechain/kv/sys.faucet';
  const r = await client.request('GET', path);
  if (r.status === 404) return null;
  if (r.status >= 400) throw new ApiRequestError(r.status, r.body, 'GET', path);
  const value = (r.body as { value?: unknown } | undefined)?.value;
  if (typeof value !== 'object' || value === null)
    throw new Error('the node answered sys.faucet without its value');
  const v = value as { amount: string | bigint; period_ns: string | bigint };
  return { amount: BigInt(v.amount), periodNs: BigInt(v.period_ns) };
}

export interface ClaimAllowance {
  /** Micro-units that can be claimed now. */
  left: bigint;
  /** When more becomes claimable (Unix ns), if the allowance is used up. */
  nextAt?: bigint;
}

/** What `address` may claim at `nowNs`, from its claim blocks inside the faucet's window. */
export async function claimAllowance(
  client: LedgerClient,
  address: string,
  terms: FaucetTerms,
  nowNs: bigint,
): Promise<ClaimAllowance> {
  const since = nowNs - terms.periodNs;
  const head = await client.chain(address, 0, 1);
  const claims: [bigint, bigint][] = [];
  if (head && head.total > 0) {
    let end = head.total;
    // Newest first, stopping at the first block older than the window.
    outer: while (end > 0) {
      const start = Math.max(0, end - 100);
      const page = await client.chain(address, start, end - start);
      if (!page) break;
      for (let i = page.blocks.length - 1; i >= 0; i--) {
        const b = page.blocks[i]!.block;
        if (b.timestamp <= since) break outer;
        if (b.type === 'claim') claims.push([b.timestamp, b.amount ?? 0n]);
      }
      end = start;
    }
  }
  const used = claims.reduce((s, [, a]) => s + a, 0n);
  const left = terms.amount > used ? terms.amount - used : 0n;
  if (left > 0n) return { left };
  const oldest = claims.reduce((m, [t]) => (t < m ? t : m), nowNs);
  return { left, nextAt: oldest + terms.periodNs };
}
