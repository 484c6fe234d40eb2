import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import type { Block } from '../../node-core/protocol/block.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { restoreFinality, stallFinality } from '../helpers/finality.ts';
import {
  acceptBlock,
  attest,
  cancelBlock,
  certify,
  fundedAccount,
  leaseBlock,
  MINUTE_NS,
  settleBlock,
  SHORT_WINDOWS,
  SMALL_COST,
} from '../helpers/lease-kit.ts';
import {
  Account,
  http,
  type Kit,
  kitOf,
  sealed,
  waitFinal,
  XE,
  nowNs,
  openConflicts,
} from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * Lease reputation (reference-behavior.md 1.3, 4.3; LS-03, LS-21) through HTTP: accept, settle,
 * force-settle and cancel each move their counters for the provider and the consumer, the hours are
 * hours, and a rollback that undoes the blocks takes their reputation with them.
 */
type Json = Record<string, JsonValue>;

const ZERO = {
  version: 2,
  leases_accepted_as_provider: 0,
  leases_settled_as_provider: 0,
  lease_hours_settled_as_provider: 0,
  leases_unfulfilled_as_provider: 0,
  leases_accepted_as_consumer: 0,
  leases_settled_as_consumer: 0,
  leases_cancelled_as_consumer: 0,
  lease_hours_settled_as_consumer: 0,
  leases_unfulfilled_as_consumer: 0,
};

describe('reputation', () => {
  let t: TestNode;
  let kit: Kit;
  let minter: Account;
  const clock = { offset: 0n };
  const reputation = (address: string) => http(kit.url, 'GET', `/accounts/${address}/reputation`);
  const counters = async (address: string) => {
    const r = await reputation(address);
    expect(r.status, r.text).toBe(200);
    return r.body as Json;
  };
  const settle = (p: Account, l: Block, at: bigint) => settleBlock(t, p, l, at);
  const cancel = (c: Account, l: Block) => cancelBlock(c, l);
  async function provider(): Promise<[Account, Awaited<ReturnType<typeof certify>>]> {
    const p = new Account(kit);
    await p.claim(XE);
    return [p, await certify(t, kit, p)];
  }

  beforeAll(async () => {
    t = await startTestNode({
      genesisSet: SHORT_WINDOWS,
      now: () => nowNs() + clock.offset,
      consensusTiming: { stabilityMs: 50 },
    });
    kit = await kitOf(t);
    minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('accept, settle, cancel and force-settle each move their counters; hours are hours (LS-21)', async () => {
    const c = await fundedAccount(kit, minter);
    const [p, cert] = await provider();
    expect((await reputation(p.address)).status).toBe(404);
    expect((await reputation(p.address)).body).toEqual({ error: 'no reputation activity' });

    const l1 = await c.commit(leaseBlock(c, p, cert)); // a lease alone is no activity
    expect((await reputation(p.address)).status).toBe(404);
    const start = nowNs() - 5n * MINUTE_NS;
    await p.commit(acceptBlock(t, p, l1, start));
    expect(await counters(p.address)).toEqual({
      ...ZERO,
      leases_accepted_as_provider: 1,
      first_activity_at: start,
      last_activity_at: start,
    });
    expect(await counters(c.address)).toMatchObject({ ...ZERO, leases_accepted_as_consumer: 1 });

    const settled = await p.commit(settle(p, l1, start + MINUTE_NS));
    expect(await counters(p.address)).toEqual({
      ...ZERO,
      leases_accepted_as_provider: 1,
      leases_settled_as_provider: 1,
      lease_hours_settled_as_provider: 60 / 3600, // a 60 s lease is 1/60 h, not 60
      first_activity_at: start,
      last_activity_at: settled.timestamp,
    });
    expect(await counters(c.address)).toMatchObject({
      leases_settled_as_consumer: 1,
      lease_hours_settled_as_consumer: 60 / 3600,
    });

    // A cancel counts for the consumer; for the provider it is activity only.
    const l2 = await c.commit(leaseBlock(c, p, cert));
    const cancelled = await c.commit(cancel(c, l2));
    expect(await counters(c.address)).toMatchObject({
      leases_accepted_as_consumer: 1,
      leases_cancelled_as_consumer: 1,
      last_activity_at: cancelled.timestamp,
    });
    expect(await counters(p.address)).toMatchObject({
      leases_accepted_as_provider: 1,
      leases_settled_as_provider: 1,
      last_activity_at: cancelled.timestamp,
    });

    // Force-settle: the provider let the settle window pass (LS-03).
    const l3 = await c.commit(leaseBlock(c, p, cert));
    await p.commit(acceptBlock(t, p, l3, start));
    const at = start + MINUTE_NS + 22n * MINUTE_NS;
    clock.offset = at - nowNs();
    try {
      await c.commit(
        c.build({
          type: 'lease_force_settle',
          asset: 'XUSD',
          source: l3.hash!,
          balance: c.bal('XUSD') + SMALL_COST,
          attestations: [attest(t, l3.hash!, at)],
          timestamp: at,
        }),
      );
    } finally {
      clock.offset = 0n;
    }
    expect(await counters(p.address)).toMatchObject({
      leases_accepted_as_provider: 2,
      leases_settled_as_provider: 1,
      leases_unfulfilled_as_provider: 1,
      last_activity_at: at,
    });
    expect(await counters(c.address)).toMatchObject({
      leases_accepted_as_consumer: 2,
      leases_unfulfilled_as_consumer: 1,
    });

    // GET /reputation: a map by address, in address order, paged.
    const all = (await http(kit.url, 'GET', '/reputation')).body as Record<string, Json>;
    expect(all[p.address]).toEqual(await counters(p.address));
    expect(all[c.address]).toEqual(await counters(c.address));
    const keys = Object.keys(all);
    expect(keys).toEqual([...keys].sort());
    const second = (await http(kit.url, 'GET', '/reputation?offset=1&limit=1')).body as Record<string, Json>;
    expect(Object.keys(second)).toEqual([keys[1]]);
  });

  it('a rollback puts them back: cancel-wins undoes an accept, a conflict undoes an accept and a settle', async () => {
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    const c = new Account(kit);
    const claim = await c.claim(XE);
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: 10n * XE, balance: minter.bal('XUSD') + 10n * XE }),
    );
    const toC = await minter.send(c.address, 5n * XE, 'XUSD');
    const toC2 = await minter.send(c.address, 5n * XE, 'XUSD');
    const [p, cert] = await provider();
    await waitFinal(kit, c.address);
    await waitFinal(kit, p.address);
    const x = await stallFinality(kit, treasury);

    const recv = await c.receive(toC);
    const l1 = await c.commit(leaseBlock(c, p, cert));
    const accept = await p.commit(acceptBlock(t, p, l1, nowNs()));
    expect(await counters(p.address)).toMatchObject({ leases_accepted_as_provider: 1 });
    await c.commit(cancel(c, l1)); // wins over the unfinalized accept, which is undone
    expect(await counters(p.address)).toMatchObject({ leases_accepted_as_provider: 0 });
    expect(await counters(c.address)).toMatchObject({
      leases_accepted_as_consumer: 0,
      leases_cancelled_as_consumer: 1,
    });
    p.frontier = accept.previous;

    const l2 = await c.commit(leaseBlock(c, p, cert));
    const start = nowNs() - 5n * MINUTE_NS;
    await p.commit(acceptBlock(t, p, l2, start));
    await p.commit(settle(p, l2, start + MINUTE_NS));
    expect(await counters(p.address)).toMatchObject({
      leases_accepted_as_provider: 1,
      leases_settled_as_provider: 1,
    });

    // A rival of c's receive wins: the lease, cancel, accept and settle built on it all go.
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
    await waitFor(
      async () => (await openConflicts(kit, c.address)).length === 0,
      15_000,
      'the conflict to settle',
    );
    expect((await reputation(p.address)).status).toBe(404);
    expect((await reputation(c.address)).status).toBe(404);
    const all = (await http(kit.url, 'GET', '/reputation')).body as Record<string, Json>;
    expect(all[p.address]).toBeUndefined();
  });
});
