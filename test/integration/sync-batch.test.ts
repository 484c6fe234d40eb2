import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockHashBytesNode } from '../../node-core/fastpath/block-hash.ts';
import { signBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { LedgerError } from '../../node-core/ledger/errors.ts';
import type { CommittedBlock, Ledger, SubmitResult } from '../../node-core/ledger/ledger.ts';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { Syncer } from '../../node-core/net/sync.ts';
import { CHAINS_ANSWER_MAX, CHAINS_PAGE } from '../../node-core/net/sync-pull.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { turnsDuring } from '../helpers/event-loop.ts';

/**
 * Ledger.submitBatch, the way sync applies a page (issue #18), on a real node (LMDB, the worker
 * verify pool): a page commits as one group, with every check a single submission gets; a block
 * that fails is refused alone, and what was built on it cannot pass.
 */

let t: TestNode;
let networkId: string;
let t0: bigint;

beforeAll(async () => {
  t = await startTestNode({ powDifficulty: 0n, verifyThreads: 1 });
  networkId = t.node.statechain.networkId;
  t0 = t.node.now();
});
afterAll(async () => {
  await t?.stop();
});

interface Acct {
  seed: Uint8Array;
  address: string;
  pub: string;
}

function account(): Acct {
  const seed = new Uint8Array(randomBytes(32));
  const kp = keyPairFromSeed(seed);
  return { seed, address: kp.address, pub: kp.pub_key };
}

function seal(b: Block, seed: Uint8Array): Block {
  const hash = blockHashBytesNode(b, networkId);
  return { ...b, hash: bytesToHex(hash), signature: bytesToHex(signBytesNode(hash, seed)) };
}

/** A claim then `sends` sends of 1 micro-unit; `signer` signs the sends (the account's own key by default). */
function chain(a: Acct, sends: number, signer: Uint8Array = a.seed): Block[] {
  let balance = 1_000_000n;
  const out = [
    seal(
      {
        type: 'claim',
        account: a.address,
        previous: ZERO_HASH,
        balance,
        timestamp: t0,
        asset: 'XE',
        amount: balance,
        pub_key: a.pub,
      },
      a.seed,
    ),
  ];
  for (let i = 1; i <= sends; i++) {
    balance -= 1n;
    out.push(
      seal(
        {
          type: 'send',
          account: a.address,
          previous: out.at(-1)!.hash!,
          balance,
          timestamp: t0 + BigInt(i),
          asset: 'XE',
          destination: bytesToHex(randomBytes(32)),
          amount: 1n,
        },
        signer,
      ),
    );
  }
  return out;
}

const codeOf = (o: SubmitResult | LedgerError) => (o instanceof LedgerError ? o.code : o.status);

describe('Ledger.submitBatch', () => {
  it('applies a page of several new accounts in one commit, at their heights', async () => {
    const [a, b] = [account(), account()];
    const page = [...chain(a, 20), ...chain(b, 20)];
    const groups: CommittedBlock[][] = [];
    t.node.ledger.onCommitted((c) => groups.push(c));
    const out = await t.node.ledger.submitBatch(page, { live: false });
    expect(out.map(codeOf)).toEqual(page.map(() => 'accepted'));
    expect(out.map((o) => (o as SubmitResult).height)).toEqual([
      ...Array.from({ length: 21 }, (_, i) => i + 1),
      ...Array.from({ length: 21 }, (_, i) => i + 1),
    ]);
    // One group: one transaction and one flush for the whole page.
    const mine = groups.filter((g) =>
      g.some((c) => c.block.account === a.address || c.block.account === b.address),
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]).toHaveLength(42);
    expect(t.node.ledger.getAccount(a.address)?.height).toBe(21);
    expect(t.node.ledger.getAccount(b.address)?.frontier).toBe(page.at(-1)!.hash);
  });

  it('commits at most maxGroup blocks at a time, in order, when asked to', async () => {
    const [a, b] = [account(), account()];
    const page = [...chain(a, 20), ...chain(b, 20)];
    const groups: CommittedBlock[][] = [];
    t.node.ledger.onCommitted((c) => groups.push(c));
    const out = await t.node.ledger.submitBatch(page, { live: false, maxGroup: 10 });
    expect(out.map(codeOf)).toEqual(page.map(() => 'accepted'));
    const mine = groups
      .map((g) => g.filter((c) => c.block.account === a.address || c.block.account === b.address))
      .filter((g) => g.length > 0);
    expect(mine.map((g) => g.length)).toEqual([10, 10, 10, 10, 2]);
    expect(mine.flat().map((c) => c.block.hash)).toEqual(page.map((x) => x.hash));
  });

  it('refuses a forged block alone; what was built on it cannot pass; other chains are applied', async () => {
    const [a, b] = [account(), account()];
    const ca = chain(a, 5);
    // The third block's signature is another key's: the hash is right, the signature is not.
    ca[3] = {
      ...ca[3]!,
      signature: bytesToHex(signBytesNode(Buffer.from(ca[3]!.hash!, 'hex'), account().seed)),
    };
    const cb = chain(b, 5);
    const out = await t.node.ledger.submitBatch([...ca, ...cb], { live: false });
    expect(out.map(codeOf)).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'invalid_signature',
      'previous_not_found',
      'previous_not_found',
      ...cb.map(() => 'accepted'),
    ]);
    expect(t.node.ledger.getAccount(a.address)?.height).toBe(3);
    expect(t.node.ledger.getAccount(b.address)?.height).toBe(6);
  });

  it('checks successors against the key the opening block declares, not the key they bring', async () => {
    const a = account();
    const intruder = account();
    const out = await t.node.ledger.submitBatch(chain(a, 2, intruder.seed), { live: false });
    expect(out.map(codeOf)).toEqual(['accepted', 'invalid_signature', 'invalid_signature']);
    expect(t.node.ledger.getAccount(a.address)?.height).toBe(1);
  });

  it('answers blocks it holds as duplicates, and a receive whose send is missing as retryable', async () => {
    const a = account();
    const blocks = chain(a, 2);
    await t.node.ledger.submitBatch(blocks, { live: false });
    const receiver = account();
    const receive = seal(
      {
        type: 'receive',
        account: receiver.address,
        previous: ZERO_HASH,
        balance: 1n,
        timestamp: t0,
        asset: 'XE',
        source: bytesToHex(randomBytes(32)),
        amount: 1n,
        pub_key: receiver.pub,
      } as Block,
      receiver.seed,
    );
    const out = await t.node.ledger.submitBatch([...blocks, receive], { live: false });
    expect(out.slice(0, 3).map(codeOf)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    const refusal = out[3] as LedgerError;
    expect(refusal).toBeInstanceOf(LedgerError);
    expect(refusal.retryable).toBe(true);
    expect(t.node.ledger.getAccount(receiver.address)).toBeUndefined();
  });
});

/** The test node's ledger, its walk of the accounts at least `usPerAccount` an account (busy). */
function slowWalkLedger(usPerAccount: number): Ledger {
  const ledger = t.node.ledger;
  return Object.assign(Object.create(ledger) as Ledger, {
    *allAccountHeads(after?: string) {
      for (const entry of ledger.allAccountHeads(after)) {
        const until = performance.now() + usPerAccount / 1000;
        while (performance.now() < until);
        yield entry;
      }
    },
  });
}

/**
 * A Syncer of the test node for its answers to peers, which read the ledger only (no host). With
 * `usPerAccount`, its walk of the accounts takes at least that long an account (busy), so that how
 * long a page takes does not depend on how fast the machine is.
 */
function answeringSyncer(usPerAccount = 0): Syncer {
  return new Syncer({
    ledger: usPerAccount > 0 ? slowWalkLedger(usPerAccount) : t.node.ledger,
    statechain: t.node.statechain,
    consensus: t.node.consensus,
    now: t.node.now,
    host: {} as never,
  });
}

describe('the account walk a frontiers answer makes', () => {
  it('lists every account with a record once, in order, after a given one, past chains and pending sends', async () => {
    // Accounts with chains, and sends to fresh addresses: those hold pending entries but no record.
    const accts = Array.from({ length: 6 }, () => account());
    for (const a of accts) await t.node.ledger.submitBatch(chain(a, 3), { live: false });
    const expected = t.node.ledger.listAccounts(0, 100_000).map((e) => e.address);
    for (const a of accts) expect(expected).toContain(a.address);
    const all = [...t.node.ledger.allAccounts()];
    expect(all.map(([addr]) => addr)).toEqual(expected);
    for (const [addr, rec] of all) expect(rec).toEqual(t.node.ledger.getAccount(addr));
    const after = expected[2]!;
    expect([...t.node.ledger.allAccounts(after)].map(([addr]) => addr)).toEqual(expected.slice(3));
    expect([...t.node.ledger.allAccounts(expected.at(-1)!)]).toEqual([]);
  });

  it('answers a page of frontiers in slices, other work running between them, with the same entries', async () => {
    // 1,000 accounts, each at least 20 µs of walk: 20 ms, past one slice (4 ms) on any machine. At
    // their own speed they took 4 ms on a fast one (CI, 2026-12-02), one slice.
    const accts = Array.from({ length: 1_100 }, () => account());
    const claims = accts.map((a) => chain(a, 0)[0]!);
    const outcomes = await t.node.ledger.submitBatch(claims, { live: false, maxGroup: 500 });
    expect(outcomes.map(codeOf).filter((c) => c !== 'accepted')).toEqual([]);
    const syncer = answeringSyncer(20);
    // Turns of the event loop that ran while the answer was being made.
    const started = performance.now();
    const { result, turns } = await turnsDuring(() => syncer.answer('frontiers', { limit: 1000 }));
    const took = performance.now() - started;
    const page = result as {
      entries: { account: string; height: number; frontier: string }[];
      next?: string;
    };
    const walk = [...t.node.ledger.allAccounts()].slice(0, 1000);
    expect(page.entries).toEqual(
      walk.map(([account, rec]) => ({ account, height: rec.height, frontier: rec.frontier })),
    );
    expect(page.next).toBe(walk.at(-1)![0]);
    expect(turns, `event-loop turns during a ${took.toFixed(0)} ms answer`).toBeGreaterThan(0);
    // The next page starts after the last entry, as before.
    const rest = (await syncer.answer('frontiers', { limit: 1000, after: page.next })) as typeof page;
    expect(rest.entries[0]?.account).toBe([...t.node.ledger.allAccounts(page.next)][0]![0]);
  });

  it('answers a chains request of an earlier version (250 blocks) whole, never more, though it asks for 100 itself', async () => {
    expect(CHAINS_PAGE).toBeLessThanOrEqual(CHAINS_ANSWER_MAX);
    // Three accounts of 120 blocks each (a claim and 119 sends): 360 blocks on offer.
    const accts = Array.from({ length: 3 }, () => account());
    const blocks = accts.flatMap((a) => chain(a, 119));
    const outcomes = await t.node.ledger.submitBatch(blocks, { live: false, maxGroup: 500 });
    expect(outcomes.map(codeOf).filter((c) => c !== 'accepted')).toEqual([]);
    const syncer = answeringSyncer();
    type Answer = { chains: { account: string; blocks: { hash: string }[] }[] };
    // What the version before asked for: up to 250 blocks, over the accounts in order.
    const old = (await syncer.answer('chains', {
      wants: [
        { account: accts[0]!.address, from: 1, limit: 120 },
        { account: accts[1]!.address, from: 1, limit: 120 },
        { account: accts[2]!.address, from: 1, limit: 10 },
      ],
    })) as Answer;
    expect(old.chains.map((c) => c.blocks.length)).toEqual([120, 120, 10]);
    expect(old.chains[1]!.blocks.map((b) => b.hash)).toEqual(blocks.slice(120, 240).map((b) => b.hash));
    // Asked for more than the cap, the answer stops at it.
    const greedy = (await syncer.answer('chains', {
      wants: accts.map((a) => ({ account: a.address, from: 1, limit: 120 })),
    })) as Answer;
    expect(greedy.chains.reduce((n, c) => n + c.blocks.length, 0)).toBe(CHAINS_ANSWER_MAX);
  });
});
