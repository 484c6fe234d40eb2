import type { Ledger } from './ledger.ts';
import type { AssetSupply } from './counters.ts';

/**
 * The supply report and its conservation identity (reference-behavior.md sections 1.3 and 3.5):
 * created = genesis + faucet + minted + emitted; destroyed = burned + escrow_burned + stake_forfeited;
 * observed = balances + in_flight (pending sends); accounted = observed + locked_stake + destroyed;
 * an asset is conserved when accounted = created.
 */
export interface AssetReport extends AssetSupply {
  created: bigint;
  destroyed: bigint;
  locked_stake: bigint;
  balances: bigint;
  in_flight: bigint;
  observed: bigint;
  accounted: bigint;
  discrepancy: bigint;
  conserved: boolean;
}

export interface SupplyReport {
  genesis_supply: bigint;
  assets: Record<'XE' | 'XUSD', AssetReport>;
  accounts: number;
  blocks: number;
  pending: number;
  conserved: boolean;
  stable: boolean;
  attempts: number;
  computed_at: bigint;
  duration_ms: number;
}

/** Walks every account and pending send; retried (up to 3 times) until no block landed meanwhile. */
export function computeSupply(ledger: Ledger, now: () => bigint): SupplyReport {
  const started = performance.now();
  let attempts = 0;
  for (;;) {
    attempts++;
    ledger.counters.load();
    const before = ledger.counters.current;
    const held = ledger.sumHoldings();
    const { accounts, pending } = held;
    const balances = { XE: 0n, XUSD: 0n, ...held.balances };
    const inFlight = { XE: 0n, XUSD: 0n, ...held.inFlight };
    // Provider stakes on accepted leases: out of every balance, not yet returned or forfeited.
    const lockedStake = { XE: 0n, XUSD: ledger.leases.lockedStake() };
    ledger.counters.load();
    const after = ledger.counters.current;
    const stable = after.blocks === before.blocks;
    if (!stable && attempts < 3) continue;
    const assets = {} as Record<'XE' | 'XUSD', AssetReport>;
    for (const asset of ['XE', 'XUSD'] as const) {
      const s = after.supply[asset];
      const created = s.genesis + s.faucet + s.minted + s.emitted;
      const destroyed = s.burned + s.escrow_burned + s.stake_forfeited;
      const observed = balances[asset]! + inFlight[asset]!;
      const accounted = observed + lockedStake[asset] + destroyed;
      assets[asset] = {
        ...s,
        created,
        destroyed,
        locked_stake: lockedStake[asset],
        balances: balances[asset]!,
        in_flight: inFlight[asset]!,
        observed,
        accounted,
        discrepancy: accounted - created,
        conserved: accounted === created,
      };
    }
    return {
      genesis_supply: after.supply.XE.genesis,
      assets,
      accounts,
      blocks: after.blocks,
      pending,
      conserved: assets.XE.conserved && assets.XUSD.conserved,
      stable,
      attempts,
      computed_at: now(),
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    };
  }
}
