import { ApiRequestError, type ChainBlock, type LedgerClient } from '../../../node-core/client/client.ts';

/**
 * Balances of an account with the spendable part apart. The proxy form of the API
 * (`GET /api/v1/accounts/{a}/balance` → `{balances, spendable, final_height}`) says it directly; where
 * a node has no proxy form yet (404), the same figure is computed from the node form: the balance at
 * the finalized height, minus every unfinalized outflow above it (unfinalized inflows are not yet
 * spendable), as the ledger itself defines it.
 */
export interface AccountBalances {
  /** Non-zero balances, unfinalized inflows included. */
  balances: Record<string, bigint>;
  /** What can be spent now: finalized funds less unfinalized outflows. */
  spendable: Record<string, bigint>;
  /** Blocks up to this height (1-based; 0 = none) are final. */
  finalHeight: number | undefined;
  /** Which form of the API answered. */
  source: 'proxy' | 'node';
}

/** Types whose amount leaves the account (as the ledger counts them for spendable funds). */
const OUTFLOW_TYPES = new Set(['send', 'burn']);

let proxyForm: 'present' | 'absent' | undefined;

/** Forgets what was learnt about the proxy form (tests; a node upgraded under a running page). */
export function resetProxyProbe(): void {
  proxyForm = undefined;
}

/** The message of a proxy-form error body (`{error: {code, message, ...}}`), or of a node-form one. */
export function proxyErrorText(body: unknown): string | undefined {
  const e = (body as { error?: unknown } | undefined)?.error;
  if (typeof e === 'string') return e;
  const m = (e as { message?: unknown } | undefined)?.message;
  return typeof m === 'string' ? m : undefined;
}

function toBigMap(v: unknown): Record<string, bigint> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const out: Record<string, bigint> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'bigint') return undefined;
    const n = BigInt(x);
    if (n > 0n) out[k] = n;
  }
  return out;
}

export async function fetchBalances(client: LedgerClient, address: string): Promise<AccountBalances> {
  let proxy404 = false;
  if (proxyForm !== 'absent') {
    const path = `/api/v1/accounts/${address}/balance`;
    const r = await client.request('GET', path);
    if (r.status === 200) {
      const body = r.body as Record<string, unknown> | undefined;
      const balances = toBigMap(body?.balances);
      const spendable = toBigMap(body?.spendable);
      if (balances && spendable) {
        proxyForm = 'present';
        const fh = body?.final_height;
        return {
          balances,
          spendable,
          finalHeight: typeof fh === 'number' || typeof fh === 'bigint' ? Number(fh) : undefined,
          source: 'proxy',
        };
      }
      proxyForm = 'absent'; // something else answers there
    } else if (r.status === 404) {
      if (proxyForm === 'present') return { balances: {}, spendable: {}, finalHeight: 0, source: 'proxy' };
      proxy404 = true;
    } else if (proxyForm === 'present') {
      throw new ApiRequestError(
        r.status,
        { error: proxyErrorText(r.body) ?? `HTTP ${r.status}` },
        'GET',
        path,
      );
    }
  }
  const balances = await client.balances(address);
  // The node form knows the account but the proxy form answered 404: the proxy form is not there.
  if (proxy404 && Object.keys(balances).length > 0) proxyForm = 'absent';
  const { spendable, finalHeight } = await spendableFromChain(client, address, balances);
  return { balances, spendable, finalHeight, source: 'node' };
}

/** Pages of the chain read backwards while working out spendable funds. */
const PAGE = 100;

async function spendableFromChain(
  client: LedgerClient,
  address: string,
  balances: Record<string, bigint>,
): Promise<{ spendable: Record<string, bigint>; finalHeight: number }> {
  const head = await client.chain(address, 0, 1);
  if (!head || head.total === 0) return { spendable: {}, finalHeight: 0 };
  const total = head.total;
  const newestFirst: ChainBlock[] = [];
  let end = total;
  // The common case, everything final, costs one small read: a final newest block means no outflow is pending.
  let page = 1;
  for (;;) {
    const start = Math.max(0, end - page);
    const got = await client.chain(address, start, end - start);
    if (!got) return { spendable: {}, finalHeight: 0 };
    newestFirst.push(...got.blocks.slice().reverse());
    const r = spendableFromBlocks(newestFirst, start === 0, total, balances);
    if (r) return r;
    end = start;
    page = PAGE;
  }
}

/**
 * Spendable funds from the newest blocks of a chain (newest first; `reachedStart` when they run to
 * the first block). Returns undefined when more (older) blocks are needed to decide.
 */
export function spendableFromBlocks(
  newestFirst: readonly ChainBlock[],
  reachedStart: boolean,
  total: number,
  balances: Record<string, bigint>,
): { spendable: Record<string, bigint>; finalHeight: number } | undefined {
  const k = newestFirst.findIndex((b) => b.finalized);
  if (k < 0 && !reachedStart) return undefined;
  if (k === 0) {
    // Nothing above the final height: every balance is spendable.
    const all: Record<string, bigint> = {};
    for (const [asset, v] of Object.entries(balances)) if (v > 0n) all[asset] = v;
    return { spendable: all, finalHeight: total };
  }
  const unfinal = k < 0 ? newestFirst : newestFirst.slice(0, k);
  const finalHeight = k < 0 ? 0 : total - k;
  const spendable: Record<string, bigint> = {};
  // Only assets with a positive balance now can have anything spendable.
  for (const asset of Object.keys(balances)) {
    if ((balances[asset] ?? 0n) <= 0n) continue;
    let finalBalance: bigint | undefined;
    if (k >= 0) {
      for (let i = k; i < newestFirst.length; i++) {
        const b = newestFirst[i]!.block;
        if (b.asset === asset) {
          finalBalance = b.balance;
          break;
        }
      }
    }
    if (finalBalance === undefined) {
      if (!reachedStart) return undefined;
      finalBalance = 0n;
    }
    let s = finalBalance;
    for (const { block } of unfinal) {
      if (block.asset === asset && OUTFLOW_TYPES.has(block.type)) s -= block.amount ?? 0n;
    }
    if (s > 0n) spendable[asset] = s;
  }
  return { spendable, finalHeight };
}
