import { afterAll, describe, expect, it } from 'vitest';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import {
  Account,
  finalFlags,
  http,
  type Kit,
  kitOf,
  nowNs,
  openConflicts,
  sealed,
  waitFinal,
  XE,
} from '../helpers/ledger-kit.ts';
import type { SignedVote } from '../../node-core/consensus/consensus.ts';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { signVote } from '../../node-core/protocol/vote.ts';
import { signStateBlock, type StateBlock, stateBlockToJson } from '../../node-core/protocol/statechain.ts';
import { type JsonValue, stringifyJson } from '../../node-core/protocol/json.ts';
import type { NodeOptions } from '../../node-core/node.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { restoreFinality, stallFinality } from '../helpers/finality.ts';

/**
 * Conflicts on one node (reference-behavior.md 2.5 and section 9: C-14, C-16), with finality stalled
 * by delegating most weight to a representative that never votes, so positions stay open:
 * a staged candidate and its conflict survive a restart (the candidate can still win afterwards);
 * a conflict whose position a cascade rollback undid is swept instead of wedging the account; and a
 * sibling is staged only if it passes every rule of its type against the parent state.
 */
type Json = Record<string, JsonValue>;

/**
 * A block of `who` with `fields`, sealed with timestamps t0, t0 + 1, ... until its hash satisfies
 * `ok` (hashes are uniform, so a few tries do): how a test picks which sibling is the lower hash.
 */
function rival(
  kit: Kit,
  who: Account,
  fields: Omit<Block, 'account' | 'timestamp'>,
  ok: (hash: string) => boolean,
  t0 = nowNs(),
): Block {
  for (let k = 0n; ; k++) {
    const b = sealed({ ...fields, account: who.address, timestamp: t0 + k }, who.seed, kit);
    if (ok(b.hash!)) return b;
  }
}

/** A rival block (see rival), submitted and staged as a conflict candidate: answered 202. */
async function stageRival(...args: Parameters<typeof rival>): Promise<Block> {
  const b = rival(...args);
  const r = await http(args[0].url, 'POST', `/blocks/${b.type}`, blockToJson(b));
  expect(r.status, r.text).toBe(202);
  return b;
}

/** The fields of a sibling to `send` at its position: twice the amount, to `to`. */
function doubleSend(send: Block, to: string): Omit<Block, 'account' | 'timestamp'> {
  return {
    previous: send.previous,
    type: 'send',
    asset: 'XE',
    destination: to,
    amount: 2n * XE,
    balance: send.balance - XE,
  };
}

describe('conflicts', () => {
  let t: TestNode | undefined;
  afterAll(async () => {
    await t?.stop();
  });

  /** A fresh node with finality stalled (see stallFinality); `rep` holds the 71 %. */
  const stalledNode = async (opts: Partial<NodeOptions> = {}, rep?: string) => {
    await t?.stop();
    t = await startTestNode(opts);
    const kit = await kitOf(t);
    const treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    const x = await stallFinality(kit, treasury, rep);
    return { kit, treasury, x };
  };

  it('keeps the conflict and its staged candidate, and the candidate still wins afterwards', async () => {
    const { kit, treasury, x } = await stalledNode();
    const port = Number(new URL(kit.url).port);
    const dataDir = t!.dataDir;
    const y = new Account(kit);
    const toY = await treasury.send(y.address, XE);
    const yOpen = await y.receive(toY);

    // A claim at y's opening position, with a lower hash than the receive there.
    const sibling = rival(
      kit,
      y,
      { previous: ZERO_HASH, type: 'claim', asset: 'XE', amount: 2n * XE, balance: 2n * XE },
      (h) => h < yOpen.hash!,
    );
    const staged = await http(kit.url, 'POST', '/blocks/claim', blockToJson(sibling));
    expect(staged.status).toBe(202);
    const before = await http(kit.url, 'GET', `/conflicts/${y.address}`);
    expect(before.status).toBe(200);

    await t!.stop({ keepData: true });
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
    // Settled, it stays listed a while as resolved, naming the winner (issue #14).
    const settled = await waitFor(
      async () => {
        const r = (await http(kit.url, 'GET', `/conflicts/${y.address}`)).body as Json[];
        return r.every((c) => c.status === 'resolved') ? r : undefined;
      },
      10_000,
      'the conflict to settle',
    );
    expect(settled).toHaveLength(1);
    expect(settled![0]).toMatchObject({ status: 'resolved', winner: sibling.hash, account: y.address });
    // With the votes that decided it: the winner's weight is what settled it, not 0.
    const winnerRow = (settled![0]!.blocks as Json[]).find((b) => b.hash === sibling.hash)!;
    expect(Number(winnerRow.votes)).toBeGreaterThan(0);
    expect(BigInt(winnerRow.weight as string)).toBeGreaterThan(0n);
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

  it('undoes a block that named no representative without walking the chain back for one', async () => {
    const { kit, treasury, x } = await stalledNode({ consensusTiming: { stabilityMs: 50 } });
    const rep = new Account(kit).address;
    const a = new Account(kit);
    // The open names the representative; the sends after it do not (it is sticky).
    await a.commit(
      a.build({ type: 'claim', asset: 'XE', amount: 10n * XE, balance: 10n * XE, representative: rep }),
    );
    for (let i = 0; i < 12; i++) await a.send(treasury.address, 1n);
    const last = await a.send(treasury.address, 1n);
    const sibling = await stageRival(
      kit,
      a,
      {
        previous: last.previous,
        type: 'send',
        asset: 'XE',
        destination: treasury.address,
        amount: 2n,
        balance: last.balance - 1n,
      },
      (h) => h < last.hash!,
    );
    const ledger = t!.node.ledger as unknown as { representativeAt(a: string, h: number): unknown };
    const representativeAt = ledger.representativeAt.bind(ledger);
    let walks = 0;
    ledger.representativeAt = (acc: string, h: number) => {
      walks += 1;
      return representativeAt(acc, h);
    };

    await restoreFinality(kit, x, treasury.address);
    await waitFor(async () => (await openConflicts(kit)).length === 0, 10_000, 'the conflict to settle');
    await waitFinal(kit, a.address, 10_000);
    const acct = t!.node.ledger.getAccount(a.address)!;
    expect(acct.frontier).toBe(sibling.hash);
    expect(walks).toBe(0);
    // The representative and its weight are as if the undone send had never been.
    expect(acct.representative).toBe(rep);
    expect(t!.node.ledger.repWeights().get(rep)).toBe(sibling.balance);
  });

  it('drops a conflict whose position a cascade rollback undid, so the account is not wedged (C-14)', async () => {
    const { kit, treasury, x } = await stalledNode({ consensusTiming: { stabilityMs: 50 } });
    const a = new Account(kit);
    const b = new Account(kit);
    await a.claim(10n * XE);
    const s1 = await a.send(b.address, 3n * XE);
    const r1 = await b.receive(s1);

    // b's opening position: the receive (kept lower, so it is b's preference) and a staged claim.
    const claimB = await stageRival(
      kit,
      b,
      { previous: ZERO_HASH, type: 'claim', asset: 'XE', amount: XE, balance: XE },
      (h) => h > r1.hash!,
    );
    // a's send position: a sibling with a lower hash, which wins and takes s1 (and r1) with it.
    const aSibling = await stageRival(
      kit,
      a,
      {
        previous: s1.previous,
        type: 'send',
        asset: 'XE',
        destination: treasury.address,
        amount: 2n * XE,
        balance: 8n * XE,
      },
      (h) => h < s1.hash!,
    );
    expect(await openConflicts(kit)).toHaveLength(2);

    await restoreFinality(kit, x, treasury.address);
    // What the node holds, for a failure message that says how the elections went.
    const state = async () =>
      stringifyJson({
        s1: s1.hash,
        aSibling: aSibling.hash,
        a: (await http(kit.url, 'GET', `/accounts/${a.address}/chain`)).body,
        conflicts: (await http(kit.url, 'GET', '/conflicts')).body,
      });
    await waitFor(
      async () => (await openConflicts(kit)).length === 0,
      10_000,
      'every conflict to settle',
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}: ${await state()}`);
    });
    const won = await http(kit.url, 'GET', `/blocks/${aSibling.hash}`);
    expect(won.status, await state()).toBe(200);
    expect((await http(kit.url, 'GET', `/blocks/${r1.hash}`)).status).toBe(404);
    expect(await openConflicts(kit, b.address)).toEqual([]);
    // b's record went with its opening receive, and its address with it from the account index.
    const store = t!.node.store;
    const indexed = async () => {
      await store.durable();
      expect((store.accountIndex.getStats() as { entryCount: number }).entryCount).toBe(
        t!.node.ledger.counters.current.accounts,
      );
      return [...store.accountIndex.getKeys()].map((k) => bytesToHex(k));
    };
    expect(await indexed()).not.toContain(b.address);
    expect(await indexed()).toContain(a.address);
    // b is free again: its claim, submitted anew, is accepted as an ordinary opening block.
    expect((await http(kit.url, 'POST', '/blocks/claim', blockToJson(claimB))).status).toBe(201);
    await waitFinal(kit, b.address, 10_000);
    expect(await indexed()).toContain(b.address);
  });

  it('stages a sibling only when the full rules of its type pass at the parent (C-16)', async () => {
    const { kit, treasury } = await stalledNode();
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

  it("the node's final vote is write-once and on disk before it goes out (commit-lock)", async () => {
    const repSeed = randomSeed();
    const r = keyPairFromSeed(repSeed); // the 71 % representative, voting as the test says
    const { kit, treasury } = await stalledNode({ consensusTiming: { stabilityMs: 400 } }, r.address);
    let node = t!.node;
    const emitted: { vote: SignedVote; lockedTo: string | undefined }[] = [];
    const listen = () =>
      node.consensus.setSink({
        broadcast: (vote) =>
          emitted.push({ vote, lockedTo: node.store.voteLocks.get(`${vote.account}:${vote.previous}`) }),
      });
    listen();
    const rVote = (hash: string, previous: string, final: boolean) =>
      signVote(
        {
          rep_pub_key: r.pub_key,
          block_hash: hash,
          account: treasury.address,
          previous,
          timestamp: node.now(),
          final,
        },
        repSeed,
      );

    // r's converge vote brings converge weight to 100 %: the node casts its final vote for the send.
    const y = new Account(kit);
    const send = await treasury.send(y.address, XE);
    const position = `${treasury.address}:${send.previous}`;
    expect(node.consensus.onVote(rVote(send.hash!, send.previous, false))).toBe('accept');
    await waitFor(() => emitted.some((e) => e.vote.final), 5000, 'the final vote');
    const finals = () => emitted.filter((e) => e.vote.final);
    expect(finals().map((e) => [e.vote.block_hash, e.lockedTo])).toEqual([[send.hash, send.hash]]);
    expect(node.ledger.voteLocks().get(position)).toBe(send.hash);

    // The lock outlives a restart.
    const dataDir = t!.dataDir;
    await t!.stop({ keepData: true });
    t = await startTestNode({
      dataDir,
      apiPort: Number(new URL(kit.url).port),
      consensusTiming: { stabilityMs: 400 },
    });
    node = t.node;
    listen();
    await waitFor(() =>
      http(kit.url, 'GET', '/health').then(
        (r) => r.status === 200,
        () => false,
      ),
    );
    expect(node.ledger.voteLocks().get(position)).toBe(send.hash);

    // A sibling with a lower hash becomes every representative's preference, but this node's vote
    // is locked: it votes for it neither converge nor final, however long it waits.
    const sibling = await stageRival(
      kit,
      treasury,
      doubleSend(send, y.address),
      (h) => h < send.hash!,
      send.timestamp + 1n,
    );
    expect(node.consensus.onVote(rVote(sibling.hash!, send.previous, false))).toBe('accept');
    await new Promise((res) => setTimeout(res, 1200));
    expect(emitted.filter((e) => e.vote.block_hash === sibling.hash)).toEqual([]);
    expect(finals()).toHaveLength(1);

    // r's final vote (71 %) decides for the sibling without this node: it is swapped in and final,
    // and the lock, no longer needed, is gone.
    expect(node.consensus.onVote(rVote(sibling.hash!, send.previous, true))).toBe('accept');
    await waitFor(
      async () => (await http(kit.url, 'GET', `/blocks/${sibling.hash}`)).status === 200,
      5000,
      'the sibling to be swapped in',
    );
    await waitFor(
      async () =>
        ((await http(kit.url, 'GET', `/blocks/${sibling.hash}`)).body as { finalized: boolean }).finalized,
      5000,
      'the sibling to finalize',
    );
    expect((await http(kit.url, 'GET', `/blocks/${send.hash}`)).status).toBe(404);
    expect(node.ledger.voteLocks().has(position)).toBe(false);
    expect(finals()).toHaveLength(1);
  });

  it('moves its converge vote with its preference, and final-votes a contested position only after the stability window', async () => {
    const repSeed = randomSeed();
    const r = keyPairFromSeed(repSeed);
    const { kit, treasury } = await stalledNode({ consensusTiming: { stabilityMs: 600 } }, r.address);
    const node = t!.node;
    const emitted: { vote: SignedVote; at: number }[] = [];
    node.consensus.setSink({ broadcast: (vote) => emitted.push({ vote, at: performance.now() }) });

    const y = new Account(kit);
    const send = await treasury.send(y.address, XE);
    await waitFor(() => emitted.some((e) => e.vote.block_hash === send.hash), 5000, 'a converge vote');
    const sibling = rival(
      kit,
      treasury,
      doubleSend(send, y.address),
      (h) => h < send.hash!,
      send.timestamp + 1n,
    );
    const stagedAt = performance.now();
    expect((await http(kit.url, 'POST', '/blocks/send', blockToJson(sibling))).status).toBe(202);
    // r joins the node's preference: converge weight is 100 % at once, yet the final vote waits.
    const vote = signVote(
      {
        rep_pub_key: r.pub_key,
        block_hash: sibling.hash!,
        account: treasury.address,
        previous: send.previous,
        timestamp: node.now(),
        final: false,
      },
      repSeed,
    );
    expect(node.consensus.onVote(vote)).toBe('accept');
    await waitFor(
      () => emitted.some((e) => e.vote.final && e.vote.block_hash === sibling.hash),
      5000,
      'the final vote for the sibling',
    );
    const mine = emitted.map((e) => [e.vote.block_hash, e.vote.final]);
    expect(mine).toEqual([
      [send.hash, false],
      [sibling.hash, false],
      [sibling.hash, true],
    ]);
    expect(emitted[2]!.at - stagedAt).toBeGreaterThanOrEqual(600);
  });

  it('final-votes without a converge copy first when its vote completes the quorum (issue #18)', async () => {
    const repSeed = randomSeed();
    const r = keyPairFromSeed(repSeed); // 71 %: the node's own representative holds the rest
    const { kit, treasury } = await stalledNode({}, r.address);
    const node = t!.node;
    const emitted: SignedVote[] = [];
    node.consensus.setSink({ broadcast: (vote) => emitted.push(vote) });
    const y = new Account(kit);
    const send = treasury.sendBlock(y.address, XE);
    // r's converge vote comes ahead of the block (as gossip may bring it): once the block is here,
    // the node's vote makes converge weight 100 %, and its final vote is the only one it sends.
    const ahead = signVote(
      {
        rep_pub_key: r.pub_key,
        block_hash: send.hash!,
        account: treasury.address,
        previous: send.previous,
        timestamp: node.now(),
        final: false,
      },
      repSeed,
    );
    expect(node.consensus.onVote(ahead)).toBe('accept');
    await treasury.commit(send);
    await waitFor(() => emitted.some((v) => v.final), 5000, 'the final vote');
    await new Promise((res) => setTimeout(res, 100));
    expect(emitted.map((v) => [v.block_hash, v.final])).toEqual([[send.hash, true]]);
    expect(node.ledger.voteLocks().get(`${treasury.address}:${send.previous}`)).toBe(send.hash);
  });

  it('a staged receive waits for its source, and leaves the race when a rollback removes that source', async () => {
    const { kit, treasury, x } = await stalledNode({ consensusTiming: { stabilityMs: 50 } });
    const a = new Account(kit);
    const b = new Account(kit);
    await a.claim(10n * XE);
    const s1 = await a.send(b.address, 3n * XE);
    const cB = await b.claim(XE);
    // At b's opening position, a receive of s1 with a lower hash than b's claim: b's preference,
    // but only once s1 is final.
    const rS = await stageRival(
      kit,
      b,
      { previous: ZERO_HASH, type: 'receive', asset: 'XE', source: s1.hash!, balance: 3n * XE },
      (h) => h < cB.hash!,
    );
    // At a's send position, a sibling that wins and takes s1 away.
    const aS = await stageRival(
      kit,
      a,
      {
        previous: s1.previous,
        type: 'send',
        asset: 'XE',
        destination: treasury.address,
        amount: 4n * XE,
        balance: 6n * XE,
      },
      (h) => h < s1.hash!,
    );

    await restoreFinality(kit, x, treasury.address);
    await waitFinal(kit, a.address, 10_000);
    await waitFinal(kit, b.address, 10_000);
    expect((await finalFlags(kit, b.address)).length).toBe(1);
    expect((await http(kit.url, 'GET', `/blocks/${cB.hash}`)).body).toMatchObject({ finalized: true });
    expect((await http(kit.url, 'GET', `/blocks/${aS.hash}`)).body).toMatchObject({ finalized: true });
    for (const gone of [s1.hash, rS.hash])
      expect((await http(kit.url, 'GET', `/blocks/${gone}`)).status, gone).toBe(404);
    expect(await openConflicts(kit)).toEqual([]);
  });

  it('a winner by final votes that can no longer be promoted gives way to the block on chain (2.3 point 5, C-12)', async () => {
    const repSeed = randomSeed();
    const r = keyPairFromSeed(repSeed);
    const { kit } = await stalledNode({ consensusTiming: { stabilityMs: 50 } }, r.address);
    const node = t!.node;
    const minter = new Account(kit, seedOf(t!.keys.minter.seed_hex));
    const onChain = await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: 5n * XE, balance: 5n * XE }),
    );
    const sibling = await stageRival(
      kit,
      minter,
      { previous: ZERO_HASH, type: 'mint', asset: 'XUSD', amount: 7n * XE, balance: 7n * XE },
      (h) => h < onChain.hash!,
    );

    // The DAO takes the minter role away: the staged mint can no longer be applied anywhere.
    const tip = (await http(kit.url, 'GET', '/statechain/tip')).body as { index: number; hash: string };
    let change: StateBlock = {
      index: BigInt(tip.index) + 1n,
      prev_hash: tip.hash,
      ops: [{ type: 'set', key: 'sys.minter', value: stringifyJson({ keys: [new Account(kit).address] }) }],
      signatures: [],
      timestamp: nowNs(),
    };
    for (const d of t!.keys.dao.slice(0, 2)) change = signStateBlock(change, seedOf(d.seed_hex));
    const posted = await http(kit.url, 'POST', '/statechain/blocks', stringifyJson(stateBlockToJson(change)));
    expect(posted.status, posted.text).toBe(201);

    // The 71 % representative's final vote decides for the sibling, which then fails promotion.
    const final = signVote(
      {
        rep_pub_key: r.pub_key,
        block_hash: sibling.hash!,
        account: minter.address,
        previous: '0',
        timestamp: node.now(),
        final: true,
      },
      repSeed,
    );
    expect(node.consensus.onVote(final)).toBe('accept');
    await waitFinal(kit, minter.address, 10_000);
    expect((await http(kit.url, 'GET', `/blocks/${onChain.hash}`)).body).toMatchObject({ finalized: true });
    expect((await http(kit.url, 'GET', `/blocks/${sibling.hash}`)).status).toBe(404);
    expect(await openConflicts(kit)).toEqual([]);
    expect((await http(kit.url, 'GET', `/conflicts/${minter.address}`)).body).toMatchObject([
      { status: 'resolved', winner: onChain.hash },
    ]);
  });
});
