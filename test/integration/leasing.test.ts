import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { type JsonValue, stringifyJson } from '../../node-core/protocol/json.ts';
import { type StateBlock, signStateBlock, stateBlockToJson } from '../../node-core/protocol/statechain.ts';
import { restoreFinality, stallFinality } from '../helpers/finality.ts';
import {
  acceptBlock,
  attest,
  certify,
  leaseBlock,
  MINUTE_NS,
  settleBlock,
  SHORT_WINDOWS,
  SMALL,
  SMALL_COST,
  SMALL_EMISSION,
} from '../helpers/lease-kit.ts';
import {
  Account,
  expectRejected,
  freshSupply,
  http,
  type Kit,
  kitOf,
  sealed,
  snapshot,
  waitFinal,
  XE,
  nowNs,
  openConflicts,
} from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * Leasing in the ledger (issue #11; reference-behavior.md 4.3, 9.3) on a real node: every lease
 * block through HTTP, each rule refused with nothing changed, the whole lifecycle with a restart in
 * the middle, supply conservation, force-settle windows on a clock the test moves, and rollback
 * (cancel-wins over an unfinalized accept; a settle undone by a conflict below its lease).
 *
 * The network pins short windows: settle grace 1 min, force-settle gap 21 min (> 2 x 10 min skew),
 * escrow expiry 30 min. Attestations come from the devnet timekeeper (the node's own key).
 */

type Lease = Record<string, JsonValue>;

describe('leasing in the ledger', () => {
  let t: TestNode;
  let kit: Kit;
  let treasury: Account;
  let minter: Account;
  /** The node clock is real time plus this (the live windows read the node clock). */
  const clock = { offset: 0n };

  const lease = async (hash: string) => (await http(kit.url, 'GET', `/leases/${hash}`)).body as Lease;

  /** An opened account holding `xusd` micro-XUSD (minted, sent and received). */
  async function consumer(xusd = 10n * XE): Promise<Account> {
    const c = new Account(kit);
    await c.claim(XE);
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: xusd, balance: minter.bal('XUSD') + xusd }),
    );
    await c.receive(await minter.send(c.address, xusd, 'XUSD'));
    return c;
  }

  async function provider(): Promise<Account> {
    const p = new Account(kit);
    await p.claim(XE);
    return p;
  }

  beforeAll(async () => {
    t = await startTestNode({ genesisSet: SHORT_WINDOWS, now: () => nowNs() + clock.offset });
    kit = await kitOf(t);
    treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('pins the genesis windows and shows them in /node (lease_timing), with its account', async () => {
    const node = (await http(kit.url, 'GET', '/node')).body as Record<string, JsonValue>;
    expect(node.lease_timing).toEqual({
      min_duration_secs: 60,
      settle_grace_ns: 60_000_000_000,
      force_settle_gap_ns: 1_260_000_000_000,
      escrow_expiry_ns: 1_800_000_000_000,
      archive_gap_ns: 3_600_000_000_000,
      max_attestation_skew_ns: 600_000_000_000,
    });
    expect(node.account).toBe(node.address);
  });

  it('a whole lease: escrow, accept, a restart, settle; balances, lease records and supply at each step', async () => {
    const c = await consumer();
    const p = await provider();
    const cert = await certify(t, kit, p);
    const supply0 = await freshSupply(kit);

    const l = await c.commit(leaseBlock(c, p, cert));
    expect(l.amount).toBe(SMALL_COST);
    expect(await lease(l.hash!)).toMatchObject({
      lease_hash: l.hash,
      state: 'created',
      consumer: c.address,
      provider: p.address,
      vcpus: 1,
      memory_mb: 1024,
      disk_gb: 1,
      duration: 60,
      cost: String(SMALL_COST),
      stake: '0',
      start_time: 0,
      certificate_hash: cert.hash,
      settled: false,
      access_pub_key: 'ef'.repeat(32),
    });
    // The escrow is the provider's pending entry, which only lease blocks may move.
    const pending = (await http(kit.url, 'GET', `/pending/${p.address}`)).body as {
      hash: string;
      amount: string;
    }[];
    expect(pending).toEqual([
      expect.objectContaining({ hash: l.hash, amount: String(SMALL_COST), asset: 'XUSD' }),
    ]);
    await expectRejected(
      kit,
      p.build({ type: 'receive', asset: 'XUSD', source: l.hash!, balance: SMALL_COST }),
      {
        status: 400,
        reason: 'cannot receive a live lease escrow',
      },
    );

    const start = nowNs() - 5n * MINUTE_NS;
    await p.commit(acceptBlock(t, p, l, start));
    expect(await lease(l.hash!)).toMatchObject({
      state: 'accepted',
      start_time: start,
      locked_r: 2000,
      stake: '0',
    });

    // A restart in the middle: the accepted lease and its escrow are on disk.
    // (Same port: the accounts' kit keeps the node's address.)
    await t.stop({ keepData: true });
    t = await startTestNode({
      dataDir: t.dataDir,
      apiPort: Number(new URL(kit.url).port),
      genesisSet: SHORT_WINDOWS,
      now: () => nowNs() + clock.offset,
    });
    await waitFor(() =>
      http(kit.url, 'GET', '/health').then(
        (r) => r.status === 200,
        () => false,
      ),
    );
    expect((await lease(l.hash!)).state).toBe('accepted');

    const settle = (at: bigint, over: Partial<Block> = {}) =>
      p.build({
        type: 'lease_settle',
        asset: 'XE',
        source: l.hash!,
        amount: SMALL_EMISSION,
        balance: p.bal('XE') + SMALL_EMISSION,
        attestations: [attest(t, l.hash!, at)],
        ...over,
      });
    const expiry = start + 60n * 1_000_000_000n;
    await expectRejected(kit, settle(expiry - 1n), { status: 400, reason: 'lease not yet expired' });
    await expectRejected(kit, settle(expiry + MINUTE_NS + 1n), {
      status: 400,
      reason: 'lease settle past grace',
    });
    await expectRejected(
      kit,
      settle(expiry, { amount: SMALL_EMISSION + 1n, balance: p.bal('XE') + SMALL_EMISSION + 1n }),
      {
        status: 400,
        reason: `amount must be the emission ${SMALL_EMISSION}, not ${SMALL_EMISSION + 1n}`,
      },
    );
    await p.commit(settle(expiry + MINUTE_NS)); // the window is closed at both ends
    expect(await lease(l.hash!)).toMatchObject({ state: 'settled', settled: true });
    expect((await http(kit.url, 'GET', `/accounts/${p.address}/balance`)).body).toEqual({
      XE: String(XE + SMALL_EMISSION),
    });
    expect((await http(kit.url, 'GET', `/accounts/${c.address}/balance`)).body).toEqual({
      XE: String(XE),
      XUSD: String(10n * XE - SMALL_COST),
    });
    expect((await http(kit.url, 'GET', `/pending/${p.address}`)).body).toEqual([]);
    await expectRejected(kit, settle(expiry + MINUTE_NS), { status: 400, reason: 'lease already settled' });

    const supply1 = await freshSupply(kit);
    const term = (s: Record<string, JsonValue>, asset: string, k: string) =>
      BigInt((s.assets as Record<string, Record<string, string>>)[asset]![k]!);
    expect(term(supply1, 'XE', 'emitted') - term(supply0, 'XE', 'emitted')).toBe(SMALL_EMISSION);
    expect(term(supply1, 'XUSD', 'escrow_burned') - term(supply0, 'XUSD', 'escrow_burned')).toBe(SMALL_COST);
    expect(supply1.conserved).toBe(true);
    const listed = (await http(kit.url, 'GET', `/leases?provider=${p.address}&state=settled`))
      .body as Lease[];
    expect(listed.map((x) => x.lease_hash)).toEqual([l.hash]);
  });

  it('lease: wrong cost, self-lease, unknown, foreign and expired certificates, bounds, asset', async () => {
    const c = await consumer();
    const p = await provider();
    const other = await provider();
    const cert = await certify(t, kit, p);
    const foreign = await certify(t, kit, other);
    const expired = await certify(t, kit, p, {
      issuedAt: nowNs() - 2n * 24n * 60n * MINUTE_NS,
      expiresAt: nowNs() - MINUTE_NS,
    });
    const reject = (b: Block, status: 400 | 503, reason: string | RegExp) =>
      expectRejected(kit, b, { status, reason });

    await reject(
      leaseBlock(c, p, cert, SMALL, { amount: SMALL_COST + 1n, balance: c.bal('XUSD') - SMALL_COST - 1n }),
      400,
      `amount must be the lease cost ${SMALL_COST}, not ${SMALL_COST + 1n}`,
    );
    await reject(leaseBlock(c, c, cert), 400, 'cannot lease to self');
    await reject(
      leaseBlock(c, p, { ...cert, hash: '12'.repeat(32) }),
      503,
      `certificate ${'12'.repeat(32)} not found`,
    );
    await reject(leaseBlock(c, p, foreign), 400, 'the certificate is not the provider’s');
    await reject(leaseBlock(c, p, expired), 400, 'certificate expired');
    await reject(
      leaseBlock(c, p, cert, { ...SMALL, vcpus: 0n, memory_mb: 0n, disk_gb: 0n }),
      400,
      /at least one of vcpus, memory_mb or disk_gb/,
    );
    await reject(leaseBlock(c, p, cert, { ...SMALL, duration: 59n }), 400, /duration/);
    await reject(
      leaseBlock(c, p, cert, SMALL, { asset: 'XE', balance: c.bal('XE') - SMALL_COST }),
      400,
      'lease is XUSD only',
    );
    await reject(leaseBlock(c, p, cert, { ...SMALL, vcpus: 4097n }), 400, /vcpus/);
    // A lease costing more than the balance.
    const poor = await consumer(SMALL_COST - 1n);
    await reject(
      leaseBlock(poor, p, cert, SMALL, { balance: 0n }),
      400,
      `insufficient balance: ${SMALL_COST - 1n} XUSD available`,
    );
  });

  it('accept: provider mismatch, attestations (none, unknown key, stale), locked params, stake, twice', async () => {
    const c = await consumer();
    const p = await provider();
    const stranger = await provider();
    const cert = await certify(t, kit, p);
    const l = await c.commit(leaseBlock(c, p, cert));
    const now = nowNs();
    const reject = (b: Block, reason: string | RegExp, status: 400 | 503 = 400) =>
      expectRejected(kit, b, { status, reason });

    await reject(acceptBlock(t, stranger, l, now), 'provider account mismatch');
    await reject(acceptBlock(t, p, l, now, { attestations: [] }), '0 attestations, need 1');
    const fake = new Account(kit);
    const { signAttestation } = await import('../../node-core/protocol/payloads.ts');
    await reject(
      acceptBlock(t, p, l, now, {
        attestations: [signAttestation(l.hash!, now, fake.seed, fake.key.pub_key)],
      }),
      'only 0 valid attestations from trusted timekeepers, need 1',
    );
    await reject(
      acceptBlock(t, p, l, now - 11n * MINUTE_NS),
      'only 0 valid attestations from trusted timekeepers, need 1',
    );
    await reject(acceptBlock(t, p, l, now, { locked_r: 0n }), 'missing locked emission params');
    await reject(
      acceptBlock(t, p, l, now, { locked_r: 1999n }),
      'locked emission params match no epoch at the attested time',
    );
    await reject(
      acceptBlock(t, p, l, now, { amount: 1n, balance: 0n }),
      'amount must be the provider stake 0, not 1',
    );
    await reject(
      acceptBlock(t, p, l, now, { certificate_hash: '34'.repeat(32) }),
      'certificate_hash differs from the lease’s',
    );
    const accept = await p.commit(acceptBlock(t, p, l, now));
    await reject(acceptBlock(t, p, l, now), 'lease already accepted');
    expect((await lease(l.hash!)).state).toBe('accepted');
    expect((await lease(l.hash!)).accept_hash).toBe(accept.hash);
  });

  it('cancel: a created lease is refunded; only the consumer; not against a finalized accept', async () => {
    const c = await consumer();
    const p = await provider();
    const cert = await certify(t, kit, p);
    const l = await c.commit(leaseBlock(c, p, cert));
    const cancel = (who: Account, source: string) =>
      who.build({ type: 'lease_cancel', asset: 'XUSD', source, balance: who.bal('XUSD') + SMALL_COST });
    await expectRejected(kit, cancel(p, l.hash!), {
      status: 400,
      reason: 'only the consumer can cancel a lease',
    });
    await c.commit(cancel(c, l.hash!));
    expect(await lease(l.hash!)).toMatchObject({ state: 'cancelled', settled: false });
    expect(c.bal('XUSD')).toBe(10n * XE);
    expect((await http(kit.url, 'GET', `/pending/${p.address}`)).body).toEqual([]);
    await expectRejected(kit, cancel(c, l.hash!), {
      status: 400,
      reason: 'cannot cancel lease in cancelled state',
    });

    const l2 = await c.commit(leaseBlock(c, p, cert));
    await p.commit(acceptBlock(t, p, l2, nowNs()));
    await waitFinal(kit, p.address);
    await expectRejected(kit, cancel(c, l2.hash!), {
      status: 400,
      reason: 'cannot cancel lease in accepted state: accept is finalized',
    });
  });

  it('force-settle: closed before expiry + grace + gap and from expiry + escrow expiry; forfeits the stake', async () => {
    const c = await consumer();
    const p = await provider();
    const cert = await certify(t, kit, p);
    const l1 = await c.commit(leaseBlock(c, p, cert));
    const l2 = await c.commit(leaseBlock(c, p, cert));
    const start = nowNs() - 5n * MINUTE_NS;
    await p.commit(acceptBlock(t, p, l1, start));
    await p.commit(acceptBlock(t, p, l2, start));
    const expiry = start + MINUTE_NS;
    const force = (l: Block, at: bigint) =>
      c.build({
        type: 'lease_force_settle',
        asset: 'XUSD',
        source: l.hash!,
        balance: c.bal('XUSD') + SMALL_COST,
        attestations: [attest(t, l.hash!, at)],
        timestamp: at,
      });
    try {
      await expectRejected(kit, force(l1, nowNs()), {
        status: 400,
        reason: 'lease not yet force-settleable',
      });
      // The node clock moves on: the window opens at expiry + 22 min and closes at expiry + 30 min.
      clock.offset = expiry + 22n * MINUTE_NS - nowNs();
      await c.commit(force(l1, expiry + 22n * MINUTE_NS));
      expect(await lease(l1.hash!)).toMatchObject({ state: 'unfulfilled', settled: true });
      clock.offset = expiry + 30n * MINUTE_NS - nowNs();
      await expectRejected(kit, force(l2, expiry + 30n * MINUTE_NS), {
        status: 400,
        reason: 'lease escrow expired: refund window closed',
      });
      // The provider cannot settle either: the settle window closed long ago.
      await expectRejected(
        kit,
        p.build({
          type: 'lease_settle',
          asset: 'XE',
          source: l2.hash!,
          amount: SMALL_EMISSION,
          balance: p.bal('XE') + SMALL_EMISSION,
          attestations: [attest(t, l2.hash!, expiry + 30n * MINUTE_NS)],
          timestamp: expiry + 30n * MINUTE_NS,
        }),
        { status: 400, reason: 'lease settle past grace' },
      );
    } finally {
      clock.offset = 0n;
    }
    expect(c.bal('XUSD')).toBe(10n * XE - SMALL_COST);
    expect((await freshSupply(kit)).conserved).toBe(true);
  });

  it('renew (our extension, D7): before expiry, by the consumer, at the certificate price; the settle pays for the whole time', async () => {
    const c = await consumer();
    const p = await provider();
    const cert = await certify(t, kit, p);
    const l = await c.commit(leaseBlock(c, p, cert));
    const start = nowNs() - 5n * MINUTE_NS;
    await p.commit(acceptBlock(t, p, l, start));
    const renew = (who: Account, at: bigint, over: Partial<Block> = {}) =>
      who.build({
        type: 'lease_renew',
        asset: 'XUSD',
        source: l.hash!,
        amount: SMALL_COST,
        duration: 60n,
        balance: who.bal('XUSD') - SMALL_COST,
        attestations: [attest(t, l.hash!, at)],
        certificate_hash: cert.hash,
        locked_r: 2000n,
        locked_payout_cap: 0n,
        locked_twap_milli: 0n,
        ...over,
      });
    const expiry = start + MINUTE_NS;
    await expectRejected(kit, renew(c, expiry), {
      status: 400,
      reason: 'lease expired: a renewal must be attested before its expiry',
    });
    await expectRejected(kit, renew(p, expiry - 1n, { balance: 0n }), {
      status: 400,
      reason: 'only the consumer can renew a lease',
    });
    await expectRejected(
      kit,
      renew(c, expiry - 1n, { amount: SMALL_COST - 1n, balance: c.bal('XUSD') - SMALL_COST + 1n }),
      {
        status: 400,
        reason: `amount must be the renewal cost ${SMALL_COST}, not ${SMALL_COST - 1n}`,
      },
    );
    const r = await c.commit(renew(c, expiry - 1n));
    expect(await lease(l.hash!)).toMatchObject({
      duration: 120,
      cost: String(2n * SMALL_COST),
      renewals: [{ renew_hash: r.hash, duration: 60, cost: String(SMALL_COST), start_time: expiry - 1n }],
    });
    const escrow = (await http(kit.url, 'GET', `/pending/${p.address}`)).body as {
      hash: string;
      amount: string;
    }[];
    expect(escrow).toEqual([expect.objectContaining({ hash: l.hash, amount: String(2n * SMALL_COST) })]);
    // The old expiry is no settle time any more; the new one is, and pays both parts.
    const settle = (at: bigint, amount: bigint) =>
      p.build({
        type: 'lease_settle',
        asset: 'XE',
        source: l.hash!,
        amount,
        balance: p.bal('XE') + amount,
        attestations: [attest(t, l.hash!, at)],
      });
    await expectRejected(kit, settle(expiry, 2n * SMALL_EMISSION), {
      status: 400,
      reason: 'lease not yet expired',
    });
    await p.commit(settle(expiry + MINUTE_NS, 2n * SMALL_EMISSION));
    expect(await lease(l.hash!)).toMatchObject({ state: 'settled' });
    expect((await freshSupply(kit)).conserved).toBe(true);
  });

  it('settle and force-settle before the accept are retryable (LS-05)', async () => {
    const c = await consumer();
    const p = await provider();
    const cert = await certify(t, kit, p);
    const l = await c.commit(leaseBlock(c, p, cert));
    const now = nowNs();
    await expectRejected(
      kit,
      p.build({
        type: 'lease_settle',
        asset: 'XE',
        source: l.hash!,
        amount: SMALL_EMISSION,
        balance: p.bal('XE') + SMALL_EMISSION,
        attestations: [attest(t, l.hash!, now)],
      }),
      { status: 503, reason: 'lease not yet accepted for settle: retry after accept' },
    );
    await expectRejected(
      kit,
      c.build({
        type: 'lease_force_settle',
        asset: 'XUSD',
        source: l.hash!,
        balance: c.bal('XUSD') + SMALL_COST,
        attestations: [attest(t, l.hash!, now)],
      }),
      { status: 503, reason: 'lease not yet accepted for force-settle: retry after accept' },
    );
  });
});

describe('leasing: rollback', () => {
  let t: TestNode;
  let kit: Kit;
  afterAll(async () => {
    await t?.stop();
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  beforeAll(async () => {
    t = await startTestNode({ genesisSet: SHORT_WINDOWS, consensusTiming: { stabilityMs: 50 } });
    kit = await kitOf(t);
  });

  it('cancel wins over an unfinalized accept (LS-11), and a conflict below a lease undoes its settle', async () => {
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    // Funds first, finalized; then finality stalls (most weight on a representative that never votes).
    const c = new Account(kit);
    const claim = await c.claim(XE);
    await minter.commit(minter.build({ type: 'mint', asset: 'XUSD', amount: 10n * XE, balance: 10n * XE }));
    const toC = await minter.send(c.address, 5n * XE, 'XUSD');
    const toC2 = await minter.send(c.address, 5n * XE, 'XUSD');
    const p = new Account(kit);
    await p.claim(XE);
    const cert = await certify(t, kit, p);
    await waitFinal(kit, c.address);
    await waitFinal(kit, p.address);
    const x = await stallFinality(kit, treasury);
    const before = await snapshot(kit);
    const supplyBefore = await freshSupply(kit);

    // Cancel-wins: the accept is the provider's unfinalized frontier, so the cancel undoes it.
    const recv = await c.receive(toC);
    const l1 = await c.commit(leaseBlock(c, p, cert));
    const accept = await p.commit(acceptBlock(t, p, l1, nowNs()));
    await c.commit(
      c.build({ type: 'lease_cancel', asset: 'XUSD', source: l1.hash!, balance: c.bal('XUSD') + SMALL_COST }),
    );
    expect((await http(kit.url, 'GET', `/leases/${l1.hash}`)).body).toMatchObject({
      state: 'cancelled',
      start_time: 0,
    });
    expect((await http(kit.url, 'GET', `/blocks/${accept.hash}`)).status).toBe(404);
    const pHead = (await http(kit.url, 'GET', `/accounts/${p.address}/chain`)).body as { hash: string }[];
    expect(pHead.map((b) => b.hash)).not.toContain(accept.hash);
    p.frontier = pHead.at(-1)!.hash;

    // A whole lease on top of c's receive, then a rival of that receive wins: everything built on
    // it goes, the provider's accept and settle included, and the supply is as it was.
    const l2 = await c.commit(leaseBlock(c, p, cert));
    const start = nowNs() - 5n * MINUTE_NS;
    await p.commit(acceptBlock(t, p, l2, start));
    const expiry = start + MINUTE_NS;
    await p.commit(
      p.build({
        type: 'lease_settle',
        asset: 'XE',
        source: l2.hash!,
        amount: SMALL_EMISSION,
        balance: p.bal('XE') + SMALL_EMISSION,
        attestations: [attest(t, l2.hash!, expiry + 1n)],
      }),
    );
    expect((await http(kit.url, 'GET', `/leases/${l2.hash}`)).body).toMatchObject({ state: 'settled' });

    // The rival: c receives the other send at the same position.
    const rival = sealed(
      {
        type: 'receive',
        account: c.address,
        previous: claim.hash!,
        asset: 'XUSD',
        source: toC2.hash!,
        balance: 5n * XE,
        timestamp: recv.timestamp,
      },
      c.seed,
      kit,
    );
    const staged = await http(kit.url, 'POST', '/blocks/receive', blockToJson(rival));
    expect(staged.status, staged.text).toBe(202);
    // The votes' verdict goes in through the ledger's resolution, as consensus applies it (which
    // candidate the votes pick is consensus's part, tested in conflicts.test.ts).
    await t.node.ledger.resolveConflict(c.address, 2, rival.hash!);
    await restoreFinality(kit, x, treasury.address);
    await waitFor(
      async () => (await openConflicts(kit, c.address)).length === 0,
      15_000,
      'the conflict to settle',
    );

    expect((await http(kit.url, 'GET', `/leases/${l2.hash}`)).status).toBe(404);
    expect((await http(kit.url, 'GET', `/leases/${l1.hash}`)).status).toBe(404);
    const pChain = (await http(kit.url, 'GET', `/accounts/${p.address}/chain`)).body as { type: string }[];
    expect(pChain.map((b) => b.type)).toEqual(['claim']);
    expect((await http(kit.url, 'GET', `/accounts/${p.address}/balance`)).body).toEqual({ XE: String(XE) });
    const cChain = (await http(kit.url, 'GET', `/accounts/${c.address}/chain`)).body as { hash: string }[];
    expect(cChain.map((b) => b.hash)).toEqual([claim.hash, rival.hash]);
    const after = await snapshot(kit);
    expect(after.pending).not.toEqual(before.pending); // toC is pending again instead of toC2
    const supplyAfter = await freshSupply(kit);
    const assets = (s: Record<string, JsonValue>) => s.assets as Record<string, Record<string, string>>;
    for (const k of ['emitted', 'escrow_burned', 'minted'])
      for (const a of ['XE', 'XUSD'])
        expect(assets(supplyAfter)[a]![k], `${a}.${k}`).toBe(assets(supplyBefore)[a]![k]);
    expect(supplyAfter.conserved).toBe(true);
  });
});

describe('leasing: conflicts', () => {
  let t: TestNode;
  let kit: Kit;
  afterAll(async () => {
    await t?.stop();
  });
  beforeAll(async () => {
    t = await startTestNode({ genesisSet: SHORT_WINDOWS, consensusTiming: { stabilityMs: 50 } });
    kit = await kitOf(t);
  });

  it('lease-family siblings are staged when valid at the parent state, refused when not (C-16), and can win', async () => {
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    const c = new Account(kit);
    await c.claim(XE);
    await minter.commit(minter.build({ type: 'mint', asset: 'XUSD', amount: 10n * XE, balance: 10n * XE }));
    await c.receive(await minter.send(c.address, 10n * XE, 'XUSD'));
    const p = new Account(kit);
    await p.claim(XE);
    const cert = await certify(t, kit, p);
    await waitFinal(kit, c.address);
    await waitFinal(kit, p.address);
    await stallFinality(kit, treasury);

    // Two leases at one position of c's chain: the second is staged (202), then wins.
    const l1 = await c.commit(leaseBlock(c, p, cert));
    c.frontier = l1.previous;
    c.balances.XUSD = 10n * XE;
    const l2 = leaseBlock(c, p, cert, { ...SMALL, duration: 120n });
    const staged = await http(kit.url, 'POST', '/blocks/lease', blockToJson(l2));
    expect(staged.status, staged.text).toBe(202);
    // The position of l1: c's chain is claim, receive, l1.
    const height = Number(
      (await http(kit.url, 'GET', `/accounts/${c.address}/chain`)).headers.get('x-total-count'),
    );
    await t.node.ledger.resolveConflict(c.address, height, l2.hash!);
    expect((await http(kit.url, 'GET', `/leases/${l1.hash}`)).status).toBe(404);
    expect((await http(kit.url, 'GET', `/leases/${l2.hash}`)).body).toMatchObject({
      state: 'created',
      duration: 120,
    });
    const escrow = (await http(kit.url, 'GET', `/pending/${p.address}`)).body as { hash: string }[];
    expect(escrow.map((e) => e.hash)).toEqual([l2.hash]);
    c.advance(l2);

    // The provider accepts; at that position a settle is judged against the parent state, where the
    // lease is not accepted yet: refused (it would pass against the state with the accept applied).
    const start = nowNs() - 5n * MINUTE_NS;
    const accept = await p.commit(acceptBlock(t, p, l2, start));
    p.frontier = accept.previous;
    const settleHere = p.build({
      type: 'lease_settle',
      asset: 'XE',
      source: l2.hash!,
      amount: 2n * SMALL_EMISSION,
      balance: p.bal('XE') + 2n * SMALL_EMISSION,
      attestations: [attest(t, l2.hash!, start + 2n * MINUTE_NS)],
    });
    await expectRejected(kit, settleHere, {
      status: 503,
      reason: 'lease not yet accepted for settle: retry after accept',
    });
    // A second accept of the same lease at that position is valid at the parent: staged.
    const rivalAccept = acceptBlock(t, p, l2, start + 1n);
    const r = await http(kit.url, 'POST', '/blocks/lease_accept', blockToJson(rivalAccept));
    expect(r.status, r.text).toBe(202);
    expect((await http(kit.url, 'GET', `/conflicts/${p.address}`)).status).toBe(200);
  });
});

describe('leasing: provider stake (LS-12)', () => {
  let t: TestNode;
  let kit: Kit;
  afterAll(async () => {
    await t?.stop();
  });
  beforeAll(async () => {
    t = await startTestNode({ genesisSet: SHORT_WINDOWS, consensusTiming: { stabilityMs: 50 } });
    kit = await kitOf(t);
    // The DAO sets a stake of 20 % (sys.lease.stake_milli, decisions D7; 0 on the devnet).
    const tip = (await http(kit.url, 'GET', '/statechain/tip')).body as {
      index: bigint | number;
      hash: string;
    };
    let sb: StateBlock = {
      index: BigInt(tip.index) + 1n,
      prev_hash: tip.hash,
      ops: [{ type: 'set', key: 'sys.lease', value: '{"stake_milli":200}' }],
      signatures: [],
      timestamp: nowNs(),
    };
    for (const k of t.keys.dao.slice(0, t.keys.dao_threshold)) sb = signStateBlock(sb, seedOf(k.seed_hex));
    const r = await http(kit.url, 'POST', '/statechain/blocks', stringifyJson(stateBlockToJson(sb)));
    expect(r.status, r.text).toBe(201);
  });

  it('the accept stakes, the settle returns the stake outside its balance field, and a rollback takes both back', async () => {
    const STAKE = 104n; // ceil(517 x 200 / 1000)
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    const c = new Account(kit);
    const claim = await c.claim(XE);
    await minter.commit(minter.build({ type: 'mint', asset: 'XUSD', amount: 20n * XE, balance: 20n * XE }));
    const toC = await minter.send(c.address, 5n * XE, 'XUSD');
    const toC2 = await minter.send(c.address, 5n * XE, 'XUSD');
    const p = new Account(kit);
    await p.claim(XE);
    await p.receive(await minter.send(p.address, XE, 'XUSD'));
    const cert = await certify(t, kit, p);
    await waitFinal(kit, c.address);
    await waitFinal(kit, p.address);
    const x = await stallFinality(kit, treasury);
    const supplyBefore = await freshSupply(kit);
    const xusd = (s: Record<string, JsonValue>) => (s.assets as Record<string, Record<string, string>>).XUSD!;

    const recv = await c.receive(toC);
    const l = await c.commit(leaseBlock(c, p, cert));
    const start = nowNs() - 5n * MINUTE_NS;
    await expectRejected(kit, acceptBlock(t, p, l, start), {
      status: 400,
      reason: `amount must be the provider stake ${STAKE}, not 0`,
    });
    await p.commit(acceptBlock(t, p, l, start, { amount: STAKE, balance: XE - STAKE }));
    expect(await lease(l.hash!)).toMatchObject({ state: 'accepted', stake: String(STAKE) });
    const locked = await freshSupply(kit);
    expect(xusd(locked)).toMatchObject({ locked_stake: String(STAKE), conserved: true });

    await p.commit(settleBlock(t, p, l, start + MINUTE_NS));
    // The stake comes back to the provider's XUSD although the settle's balance field is XE.
    expect((await http(kit.url, 'GET', `/accounts/${p.address}/balance`)).body).toEqual({
      XE: String(XE + SMALL_EMISSION),
      XUSD: String(XE),
    });
    expect(xusd(await freshSupply(kit))).toMatchObject({ locked_stake: '0', conserved: true });
    // The next XUSD block of the provider counts the credit.
    p.balances.XUSD = XE;
    await p.send(minter.address, 1n, 'XUSD');

    // A rival of c's receive wins: the lease, its accept and settle and the send after go, and the
    // provider's XUSD is what it was before the accept.
    const rival = sealed(
      {
        type: 'receive',
        account: c.address,
        previous: claim.hash!,
        asset: 'XUSD',
        source: toC2.hash!,
        balance: 5n * XE,
        timestamp: recv.timestamp,
      },
      c.seed,
      kit,
    );
    expect((await http(kit.url, 'POST', '/blocks/receive', blockToJson(rival))).status).toBe(202);
    await t.node.ledger.resolveConflict(c.address, 2, rival.hash!);
    await restoreFinality(kit, x, treasury.address);
    expect((await http(kit.url, 'GET', `/leases/${l.hash}`)).status).toBe(404);
    expect((await http(kit.url, 'GET', `/accounts/${p.address}/balance`)).body).toEqual({
      XE: String(XE),
      XUSD: String(XE),
    });
    const after = await freshSupply(kit);
    for (const k of ['locked_stake', 'escrow_burned', 'stake_forfeited', 'minted', 'created'])
      expect(xusd(after)[k], k).toBe(xusd(supplyBefore)[k]);
    expect(after.conserved).toBe(true);
  });

  const lease = async (hash: string) => (await http(kit.url, 'GET', `/leases/${hash}`)).body as Lease;
});
