import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import {
  acceptBlock,
  attest,
  certify,
  fundedAccount,
  leaseBlock,
  MINUTE_NS,
  SHORT_WINDOWS,
  SMALL_COST,
} from '../helpers/lease-kit.ts';
import {
  Account,
  expectRejected,
  freshSupply,
  http,
  type Kit,
  kitOf,
  waitFinal,
  XE,
  nowNs,
} from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * The local archive sweep (reference-behavior.md 4.3, LS-04) on a real node whose clock the test
 * moves: an accepted lease nobody settled or force-settled becomes `expired` and settled once the
 * local clock passes expiry + escrow expiry + archive gap; its escrow is burned (the supply stays
 * conserved), no block is made, and the result is on disk.
 *
 * Short windows: grace 1 min, force-settle gap 21 min, escrow expiry 30 min, archive gap 10 min.
 */
type Json = Record<string, JsonValue>;
const WINDOWS = { ...SHORT_WINDOWS, lease_archive_gap_ns: 10n * MINUTE_NS };

describe('archive sweep', () => {
  let t: TestNode;
  let kit: Kit;
  const clock = { offset: 0n };
  const start = (again?: { dataDir: string; apiPort: number }) =>
    startTestNode({ ...again, genesisSet: WINDOWS, now: () => nowNs() + clock.offset });
  const lease = async (hash: string) => (await http(kit.url, 'GET', `/leases/${hash}`)).body as Json;
  const pending = async (address: string) =>
    ((await http(kit.url, 'GET', `/pending/${address}`)).body as { hash: string }[]).map((e) => e.hash);
  const term = (s: Json, k: string) => BigInt((s.assets as Record<string, Record<string, string>>).XUSD![k]!);

  beforeAll(async () => {
    t = await start();
    kit = await kitOf(t);
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('expires an accepted, unsettled lease past its escrow, burns the escrow, and keeps it so across a restart', async () => {
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    const c = await fundedAccount(kit, minter);
    const p = new Account(kit);
    await p.claim(XE);
    const cert = await certify(t, kit, p);
    const accepted = await c.commit(leaseBlock(c, p, cert));
    const created = await c.commit(leaseBlock(c, p, cert));
    const begun = nowNs() - 5n * MINUTE_NS;
    await p.commit(acceptBlock(t, p, accepted, begun));
    await waitFinal(kit, p.address);
    const supply0 = await freshSupply(kit);
    const blocks0 = supply0.blocks;

    // Short of expiry + escrow expiry + archive gap (by a second: the clock runs on): nothing happens.
    const archiveAt = begun + MINUTE_NS + 40n * MINUTE_NS;
    clock.offset = archiveAt - 1_000_000_000n - nowNs();
    expect(await t.node.archiveSweep!.sweep()).toEqual([]);
    expect((await lease(accepted.hash!)).state).toBe('accepted');

    // Past it: the node's own 10 s sweep archives the lease.
    clock.offset = archiveAt + MINUTE_NS - nowNs();
    await waitFor(async () => (await lease(accepted.hash!)).state === 'expired', 15_000, 'the sweep');
    expect(await lease(accepted.hash!)).toMatchObject({ state: 'expired', settled: true });
    expect((await lease(created.hash!)).state).toBe('created'); // never accepted: not the sweep's
    expect(await pending(p.address)).toEqual([created.hash]);
    const supply1 = await freshSupply(kit);
    expect(supply1.conserved).toBe(true);
    expect(term(supply1, 'escrow_burned') - term(supply0, 'escrow_burned')).toBe(SMALL_COST);
    expect(supply1.blocks).toBe(blocks0); // no block
    // Settled: no lease block can follow (LS-13).
    const at = nowNs() + clock.offset;
    await expectRejected(
      kit,
      c.build({
        type: 'lease_force_settle',
        asset: 'XUSD',
        source: accepted.hash!,
        balance: c.bal('XUSD') + SMALL_COST,
        attestations: [attest(t, accepted.hash!, at)],
        timestamp: at,
      }),
      { status: 400, reason: 'lease already settled' },
    );

    // Durable: the same after a restart.
    await t.stop({ keepData: true });
    t = await start({ dataDir: t.dataDir, apiPort: Number(new URL(kit.url).port) });
    // (A kept-alive connection to the old server may fail once.)
    await waitFor(() =>
      http(kit.url, 'GET', '/health').then(
        (r) => r.status === 200,
        () => false,
      ),
    );
    expect(await lease(accepted.hash!)).toMatchObject({ state: 'expired', settled: true });
    expect(await pending(p.address)).toEqual([created.hash]);
    const supply2 = await freshSupply(kit);
    expect(supply2.conserved).toBe(true);
    expect(term(supply2, 'escrow_burned')).toBe(term(supply1, 'escrow_burned'));
    expect(await t.node.archiveSweep!.sweep()).toEqual([]);
  }, 40_000);
});
