import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { epochCandidates, EpochTable } from '../../node-core/leasing/epochs.ts';
import { stringifyJson } from '../../node-core/protocol/json.ts';
import { signStateBlock, type StateBlock, stateBlockToJson } from '../../node-core/protocol/statechain.ts';
import { http, type Kit, kitOf, nowNs } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/** An epoch value as the oracle writes it (genesis.ts's epoch.0, renumbered). */
function epochValue(n: number, startNs: bigint, r: number): string {
  return stringifyJson({
    epoch: n,
    start_ns: startNs,
    end_ns: 0,
    twap_milli_usd: 0,
    twav_milli_usd: 0,
    r_volume: r,
    r_price_floor: 0,
    r_collusion: 0,
    r_effective: r,
    r_source: 'oracle',
    phase: 1,
    s_milli: 0,
    payout_cap: 0,
  });
}

/**
 * The lease rules' epochs (issue #18): read and parsed once per state-chain tip, not once per lease
 * block judged, and read again as soon as the state chain takes a block.
 */
describe('leasing: the epoch table', () => {
  let t: TestNode;
  let kit: Kit;

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  async function oracleWrites(epochs: [number, bigint, number][]): Promise<void> {
    const tip = (await http(kit.url, 'GET', '/statechain/tip')).body as { index: number; hash: string };
    const b: StateBlock = {
      index: BigInt(tip.index) + 1n,
      prev_hash: tip.hash,
      ops: epochs.map(([n, start, r]) => ({
        type: 'set',
        key: `epoch.${n}`,
        value: epochValue(n, start, r),
      })),
      signatures: [],
      timestamp: nowNs(),
    };
    const signed = signStateBlock(b, seedOf(t.keys.oracle.seed_hex));
    const r = await http(kit.url, 'POST', '/statechain/blocks', stringifyJson(stateBlockToJson(signed)));
    expect(r.status, r.text).toBe(201);
  }

  it('reads the state chain once per tip, in epoch order (epoch.10 after epoch.9), and again after a block', async () => {
    const leasing = t.node.ledger.leasing;
    const reads = vi.spyOn(t.node.statechain, 'kvList');
    const first = leasing.epochs();
    expect(first.map((e) => e.epoch)).toEqual([0n]);
    expect(leasing.epochs()).toBe(first);
    expect(reads).toHaveBeenCalledTimes(1);

    // Eleven epochs, one a minute from t0: the keys sort as text (epoch.10 before epoch.2).
    const t0 = nowNs();
    const minute = 60_000_000_000n;
    await oracleWrites(
      Array.from({ length: 11 }, (_, i): [number, bigint, number] => [
        i + 1,
        t0 + BigInt(i) * minute,
        1000 + i,
      ]),
    );
    const after = leasing.epochs();
    expect(reads).toHaveBeenCalledTimes(2);
    expect(after.map((e) => e.epoch)).toEqual(Array.from({ length: 12 }, (_, i) => BigInt(i)));
    expect(after[11]!.r_effective).toBe(1010n);
    for (let i = 0; i < 5; i++) leasing.epochs();
    expect(reads).toHaveBeenCalledTimes(2);

    // What the rules see: the epoch covering t and up to 3 before it.
    const at = t0 + 9n * minute + 1n;
    const candidates = leasing.view.epochCandidates(at)!;
    expect(candidates.map((e) => e.r_effective)).toEqual([1009n, 1008n, 1007n, 1006n]);
    expect(reads).toHaveBeenCalledTimes(2);
    reads.mockRestore();
  });

  it('EpochTable: skips values that are not epochs, re-reads only when the version changes', () => {
    let version = 1;
    const rows = [
      { key: 'epoch.2', value: '{"epoch":2,"start_ns":"200","r_effective":7}' },
      { key: 'epoch.10', value: '{"epoch":10,"start_ns":"1000","r_effective":9}' },
      { key: 'epoch.x', value: '{}' },
      { key: 'epoch.3', value: 'not json' },
    ];
    const read = vi.fn(() => rows);
    const table = new EpochTable(read, () => version);
    expect(table.list().map((e) => e.epoch)).toEqual([2n, 10n]);
    table.list();
    expect(read).toHaveBeenCalledTimes(1);
    rows.push({ key: 'epoch.5', value: '{"epoch":5,"start_ns":"500"}' });
    expect(table.list().map((e) => e.epoch)).toEqual([2n, 10n]);
    version = 2;
    expect(table.list().map((e) => e.epoch)).toEqual([2n, 5n, 10n]);
    expect(read).toHaveBeenCalledTimes(2);
    expect(epochCandidates(table.list(), 600n)!.map((e) => e.epoch)).toEqual([5n, 2n]);
  });
});
