import { afterAll, describe, expect, it } from 'vitest';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import {
  Account,
  finalFlags,
  http,
  type Kit,
  kitOf,
  nowNs,
  sealed,
  waitFinal,
  XE,
} from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';

/**
 * Conflicts on one node (reference-behavior.md 2.5 and section 9: C-14, C-16), with finality stalled
 * by delegating most weight to a representative that never votes, so positions stay open:
 * a staged candidate and its conflict survive a restart (the candidate can still win afterwards);
 * a conflict whose position a cascade rollback undid is swept instead of wedging the account; and a
 * sibling is staged only if it passes every rule of its type against the parent state.
 */
/** Re-seals `make(k)` for k = 0, 1, ... until its hash satisfies `ok` (hashes are uniform). */
function sealUntil(make: (k: bigint) => Block, ok: (hash: string) => boolean): Block {
  for (let k = 0n; ; k++) {
    const b = make(k);
    if (ok(b.hash!)) return b;
  }
}

/** Delegates 30M of the 42M XE to a representative that never votes: nothing finalizes. */
async function stallFinality(kit: Kit, treasury: Account): Promise<Account> {
  const x = new Account(kit);
  const big = await treasury.send(x.address, 30_000_000n * XE);
  await waitFinal(kit, treasury.address);
  await x.commit(
    x.build({
      type: 'receive',
      asset: 'XE',
      source: big.hash!,
      balance: 30_000_000n * XE,
      representative: new Account(kit).address,
    }),
  );
  return x;
}

/** x delegates back to the node's representative: quorum returns. */
async function restoreFinality(kit: Kit, x: Account, to: string): Promise<void> {
  await x.commit(
    x.build({
      type: 'send',
      asset: 'XE',
      destination: to,
      amount: 1n,
      balance: x.bal() - 1n,
      representative: kit.nodeAddress,
    }),
  );
}

describe('conflicts', () => {
  let t: TestNode | undefined;
  afterAll(async () => {
    await t?.stop();
  });

  it('keeps the conflict and its staged candidate, and the candidate still wins afterwards', async () => {
    t = await startTestNode();
    const kit = await kitOf(t);
    const port = Number(new URL(t.node.url).port);
    const dataDir = t.dataDir;
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    const x = await stallFinality(kit, treasury);
    const y = new Account(kit);
    const toY = await treasury.send(y.address, XE);
    const yOpen = await y.receive(toY);

    // A claim at y's opening position, with a lower hash than the receive there.
    const sibling = sealUntil(
      (k) =>
        sealed(
          {
            account: y.address,
            previous: ZERO_HASH,
            timestamp: nowNs() + k,
            type: 'claim',
            asset: 'XE',
            amount: 2n * XE,
            balance: 2n * XE,
          },
          y.seed,
          kit,
        ),
      (h) => h < yOpen.hash!,
    );
    const staged = await http(kit.url, 'POST', '/blocks/claim', blockToJson(sibling));
    expect(staged.status).toBe(202);
    const before = await http(kit.url, 'GET', `/conflicts/${y.address}`);
    expect(before.status).toBe(200);

    await t.stop({ keepData: true });
    t = await startTestNode({ dataDir, apiPort: port });
    // The client's pooled keep-alive sockets went with the old process.
    await waitFor(() =>
      http(kit.url, 'GET', '/health').then(
        (r) => r.status === 200,
        () => false,
      ),
    );

    // The same conflict, detection time included, with both candidates.
    const after = await http(kit.url, 'GET', `/conflicts/${y.address}`);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
    const candidates = (after.body as { blocks: { hash: string }[] }[])[0]!.blocks.map((b) => b.hash).sort();
    expect(candidates).toEqual([yOpen.hash, sibling.hash].sort());
    expect(await finalFlags(kit, y.address)).toEqual([false]);

    // Quorum returns, and the staged claim (the preference) is swapped in.
    await restoreFinality(kit, x, treasury.address);
    await waitFor(
      async () => (await http(kit.url, 'GET', `/conflicts/${y.address}`)).status === 404,
      10_000,
      'the conflict to settle',
    );
    await waitFinal(kit, y.address, 10_000);
    const chain = (await http(kit.url, 'GET', `/accounts/${y.address}/chain`)).body as {
      hash: string;
      finalized: boolean;
    }[];
    expect(chain.map((b) => [b.hash, b.finalized])).toEqual([[sibling.hash, true]]);
    expect((await http(kit.url, 'GET', `/blocks/${yOpen.hash}`)).status).toBe(404);
    // The receive was undone: the send to y is pending again.
    const pending = (await http(kit.url, 'GET', `/pending/${y.address}`)).body as { hash: string }[];
    expect(pending.map((p) => p.hash)).toEqual([toY.hash]);
    const bal = (await http(kit.url, 'GET', `/accounts/${y.address}/balance`)).body;
    expect(bal).toEqual({ XE: String(2n * XE) });
  });

  it('drops a conflict whose position a cascade rollback undid, so the account is not wedged (C-14)', async () => {
    await t?.stop();
    t = await startTestNode();
    const kit = await kitOf(t);
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    const x = await stallFinality(kit, treasury);
    const a = new Account(kit);
    const b = new Account(kit);
    await a.claim(10n * XE);
    const s1 = await a.send(b.address, 3n * XE);
    const r1 = await b.receive(s1);

    // b's opening position: the receive (kept lower, so it is b's preference) and a staged claim.
    const claimB = sealUntil(
      (k) =>
        sealed(
          {
            account: b.address,
            previous: ZERO_HASH,
            timestamp: nowNs() + k,
            type: 'claim',
            asset: 'XE',
            amount: XE,
            balance: XE,
          },
          b.seed,
          kit,
        ),
      (h) => h > r1.hash!,
    );
    expect((await http(kit.url, 'POST', '/blocks/claim', blockToJson(claimB))).status).toBe(202);
    // a's send position: a sibling with a lower hash, which wins and takes s1 (and r1) with it.
    const aSibling = sealUntil(
      (k) =>
        sealed(
          {
            account: a.address,
            previous: s1.previous,
            timestamp: nowNs() + k,
            type: 'send',
            asset: 'XE',
            destination: treasury.address,
            amount: 2n * XE,
            balance: 8n * XE,
          },
          a.seed,
          kit,
        ),
      (h) => h < s1.hash!,
    );
    expect((await http(kit.url, 'POST', '/blocks/send', blockToJson(aSibling))).status).toBe(202);
    expect(((await http(kit.url, 'GET', '/conflicts')).body as unknown[]).length).toBe(2);

    await restoreFinality(kit, x, treasury.address);
    await waitFor(
      async () => ((await http(kit.url, 'GET', '/conflicts')).body as unknown[]).length === 0,
      10_000,
      'every conflict to settle',
    );
    expect((await http(kit.url, 'GET', `/blocks/${aSibling.hash}`)).body).toMatchObject({
      hash: aSibling.hash,
    });
    expect((await http(kit.url, 'GET', `/blocks/${r1.hash}`)).status).toBe(404);
    expect((await http(kit.url, 'GET', `/conflicts/${b.address}`)).status).toBe(404);
    // b is free again: its claim, submitted anew, is accepted as an ordinary opening block.
    expect((await http(kit.url, 'POST', '/blocks/claim', blockToJson(claimB))).status).toBe(201);
    await waitFinal(kit, b.address, 10_000);
  });

  it('stages a sibling only when the full rules of its type pass at the parent (C-16)', async () => {
    await t?.stop();
    t = await startTestNode();
    const kit = await kitOf(t);
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    await stallFinality(kit, treasury);
    const m = new Account(kit);
    await m.claim(600n * XE);
    const opening = (fields: Partial<Block>, k: bigint): Block =>
      sealed(
        { account: m.address, previous: ZERO_HASH, timestamp: nowNs() + k, asset: 'XE', ...fields } as Block,
        m.seed,
        kit,
      );
    const refused = async (b: Block, reason: RegExp) => {
      const r = await http(kit.url, 'POST', `/blocks/${b.type}`, blockToJson(b));
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect((r.body as { error: string }).error).toMatch(reason);
    };
    // Each would have balanced against the parent, but breaks a rule of its type.
    await refused(opening({ type: 'mint', asset: 'XUSD', amount: 5n, balance: 5n }, 1n), /not a minter/);
    await refused(opening({ type: 'claim', amount: 1001n * XE, balance: 1001n * XE }, 2n), /claim limit/);
    await refused(opening({ type: 'claim', amount: 0n, balance: 0n }, 3n), /greater than 0/);
    expect((await http(kit.url, 'GET', `/conflicts/${m.address}`)).status).toBe(404);

    // A receive of a send this chain already received below the fork would credit it twice.
    const s1 = await treasury.send(m.address, 5n * XE);
    await m.receive(s1);
    const top = await m.claim(XE);
    const again = sealed(
      {
        account: m.address,
        previous: top.previous,
        timestamp: top.timestamp,
        type: 'receive',
        asset: 'XE',
        source: s1.hash!,
        balance: m.bal() - XE + 5n * XE,
      },
      m.seed,
      kit,
    );
    await refused(again, /already received/);
    expect((await http(kit.url, 'GET', `/conflicts/${m.address}`)).status).toBe(404);

    // Within the rules, a sibling is staged.
    const ok = opening({ type: 'claim', amount: 900n * XE, balance: 900n * XE }, 4n);
    expect((await http(kit.url, 'POST', '/blocks/claim', blockToJson(ok))).status).toBe(202);
    expect((await http(kit.url, 'GET', `/conflicts/${m.address}`)).status).toBe(200);
  });
});
