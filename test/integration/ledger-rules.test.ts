import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { bytesToHex, hexToBytes } from '../../node-core/protocol/hex.ts';
import { type JsonValue, stringifyJson } from '../../node-core/protocol/json.ts';
import { randomSeed } from '../../node-core/protocol/keys.ts';
import { powHash } from '../../node-core/protocol/pow.ts';
import { U64_MAX } from '../../node-core/protocol/int.ts';
import {
  Account,
  expectRejected,
  freshSupply,
  HOUR_NS,
  http,
  type Kit,
  kitOf,
  nowNs,
  sealed,
  sealedRaw,
  snapshot,
  submit,
  waitFinal,
  XE,
} from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/**
 * Every rejection reason of the single-key ledger rules (reference-behavior.md section 3), each
 * through the real HTTP API: status, retryable flag, and proof that nothing changed.
 */
describe('ledger rules: single-key accounts', () => {
  let t: TestNode;
  let kit: Kit;
  let treasury: Account;
  const randomHash = () => bytesToHex(randomSeed());

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
  });
  afterAll(async () => {
    await t?.stop();
  });

  async function funded(amount = 100n * XE): Promise<Account> {
    const a = new Account(kit);
    await a.claim(amount);
    return a;
  }

  it('L-16/L-10: genesis is final at height 1, delegates to an address, and its balance is spendable at once', async () => {
    const chain = await http(kit.url, 'GET', `/accounts/${treasury.address}/chain`);
    expect(chain.status).toBe(200);
    expect(chain.headers.get('x-total-count')).toBe('1');
    const [genesis] = chain.body as Record<string, unknown>[];
    expect(genesis).toMatchObject({ type: 'genesis', balance: '42000000000000', finalized: true });
    expect(treasury.bal()).toBe(42_000_000n * XE);

    const node = (await http(kit.url, 'GET', '/node')).body as Record<string, string>;
    const listed = ((await http(kit.url, 'GET', '/accounts')).body as Record<string, unknown>[]).find(
      (a) => a.address === treasury.address,
    );
    expect(listed!.representative).toBe(node.address);
    expect(listed!.representative).not.toBe(node.public_key);
    expect(genesis!.representative).toBe(node.address);

    const a = new Account(kit);
    const send = await treasury.send(a.address, 1000n * XE);
    await a.receive(send);
    expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '1000000000' });
    await waitFinal(kit, treasury.address);
    await waitFinal(kit, a.address);
  });

  it('N-11: a duplicate submission is idempotent (201 again, nothing changes)', async () => {
    const a = new Account(kit);
    const claim = a.claimBlock(7n * XE);
    const first = await submit(kit, claim);
    expect(first.status).toBe(201);
    a.advance(claim);
    const before = await snapshot(kit);
    const again = await submit(kit, claim);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(await snapshot(kit)).toEqual(before);
    expect((await http(kit.url, 'GET', `/accounts/${a.address}/chain`)).headers.get('x-total-count')).toBe(
      '1',
    );
  });

  it('#15.2: a replay with a forged signature is refused, after or during the genuine one; a replay answers the stored block', async () => {
    const forge = (b: Block): Block => {
      const sig = b.signature!;
      return { ...b, signature: (sig[0] === '0' ? '1' : '0') + sig.slice(1) };
    };
    const a = new Account(kit);
    const claim = a.claimBlock(9n * XE);
    // Concurrently: the forged copy must not share the genuine submission's outcome.
    const [genuine, forgedDuring] = await Promise.all([submit(kit, claim), submit(kit, forge(claim))]);
    expect(genuine.status).toBe(201);
    expect(forgedDuring.status, forgedDuring.text).toBe(400);
    expect(forgedDuring.body).toEqual({ error: 'block rejected: invalid signature', retryable: false });
    a.advance(claim);
    const stored = await http(kit.url, 'GET', `/blocks/${claim.hash}`);
    const storedText = () => {
      const o = { ...(stored.body as Record<string, JsonValue>) };
      delete o.finalized;
      return stringifyJson(o);
    };
    expect(genuine.text).toBe(storedText());

    // After: the hash is stored, yet the forged copy is checked in full and changes nothing.
    const before = await snapshot(kit);
    const forgedAfter = await submit(kit, forge(claim));
    expect(forgedAfter.status).toBe(400);
    expect(forgedAfter.body).toEqual({ error: 'block rejected: invalid signature', retryable: false });
    // A replay with another valid proof-of-work nonce is the same signed block: 201 with the stored
    // block (its nonce), never what the client sent.
    let nonce = (claim.pow_nonce ?? 0n) + 1n;
    while (powHash(hexToBytes(claim.hash!), nonce) < kit.difficulty) nonce++;
    const replay = await submit(kit, { ...claim, pow_nonce: nonce });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(storedText());
    expect(await snapshot(kit)).toEqual(before);
    expect((await http(kit.url, 'GET', `/blocks/${claim.hash}`)).text).toBe(stored.text);
  });

  it('rejects a missing hash and a hash that does not match the contents (400)', async () => {
    const a = new Account(kit);
    const claim = a.claimBlock(10n * XE);
    const noHash: Block = { ...claim };
    delete noHash.hash;
    await expectRejected(kit, noHash, { status: 400, reason: 'hash is required' });
    await expectRejected(
      kit,
      { ...claim, amount: 11n * XE, balance: 11n * XE },
      { status: 400, reason: 'hash mismatch' },
    );
    // Signed for another network: the hash covers the network id.
    const foreign = sealed(
      a.draft({ type: 'claim', asset: 'XE', amount: 10n * XE, balance: 10n * XE }),
      a.seed,
      {
        ...kit,
        networkId: 'some-other-net',
      },
    );
    await expectRejected(kit, foreign, { status: 400, reason: 'hash mismatch' });
    await a.commit(claim); // the genuine block still goes through
  });

  it('rejects a missing signature, a garbage one and one by another key (400)', async () => {
    const a = new Account(kit);
    const other = new Account(kit);
    const claim = a.claimBlock(10n * XE);
    const unsigned: Block = { ...claim };
    delete unsigned.signature;
    await expectRejected(kit, unsigned, { status: 400, reason: 'signature is required' });
    await expectRejected(
      kit,
      { ...claim, signature: 'ab'.repeat(64) },
      { status: 400, reason: 'invalid signature' },
    );
    // Opening block declaring a's key but signed by another key.
    const forged = sealedRaw(
      a.draft({ type: 'claim', asset: 'XE', amount: 10n * XE, balance: 10n * XE, pub_key: a.key.pub_key }),
      other.seed,
      kit,
    );
    await expectRejected(kit, forged, { status: 400, reason: 'invalid signature' });
    await a.commit(claim);
    // A later block is checked against the stored opening key.
    const stolen = sealed(
      a.draft({ type: 'claim', asset: 'XE', amount: 1n, balance: a.bal() + 1n }),
      other.seed,
      kit,
    );
    await expectRejected(kit, stolen, { status: 400, reason: 'invalid signature' });
  });

  it('rejects timestamps more than 1 hour from the node clock, and earlier than the previous block (400)', async () => {
    const a = new Account(kit);
    const at = (timestamp: bigint) =>
      sealed({ ...a.draft({ type: 'claim', asset: 'XE', amount: XE, balance: XE }), timestamp }, a.seed, kit);
    const window = 'timestamp is more than 1 hour away from the node clock';
    await expectRejected(kit, at(nowNs() + HOUR_NS + 60_000_000_000n), { status: 400, reason: window });
    await expectRejected(kit, at(nowNs() - HOUR_NS - 60_000_000_000n), { status: 400, reason: window });
    await expectRejected(kit, at(-1n), { status: 400, reason: window });
    await a.claim(XE);
    const earlier = sealed(
      {
        ...a.draft({ type: 'claim', asset: 'XE', amount: XE, balance: 2n * XE }),
        timestamp: a.lastTimestamp - 1n,
      },
      a.seed,
      kit,
    );
    await expectRejected(kit, earlier, {
      status: 400,
      reason: "timestamp is earlier than the previous block's",
    });
    // Equal to the previous timestamp is fine.
    await a.commit(
      sealed(
        {
          ...a.draft({ type: 'claim', asset: 'XE', amount: XE, balance: 2n * XE }),
          timestamp: a.lastTimestamp,
        },
        a.seed,
        kit,
      ),
    );
  });

  it('enforces the pub_key declaration rules (400)', async () => {
    const a = new Account(kit);
    const other = new Account(kit);
    const fields = { type: 'claim', asset: 'XE', amount: XE, balance: XE } as const;
    await expectRejected(kit, sealedRaw(a.draft(fields), a.seed, kit), {
      status: 400,
      reason: 'open block must declare pub_key',
    });
    await expectRejected(
      kit,
      sealedRaw(a.draft({ ...fields, pub_key: other.key.pub_key }), other.seed, kit),
      {
        status: 400,
        reason: `pub_key does not derive account address ${a.address}`,
      },
    );
    await a.claim(XE);
    const declaring = sealedRaw(
      a.draft({ type: 'claim', asset: 'XE', amount: XE, balance: 2n * XE, pub_key: a.key.pub_key }),
      a.seed,
      kit,
    );
    await expectRejected(kit, declaring, { status: 400, reason: 'non-open block must not declare pub_key' });
  });

  it('rejects unknown assets and the wrong asset for claim, burn and mint (400)', async () => {
    const a = await funded();
    const b = new Account(kit);
    await expectRejected(
      kit,
      a.build({ type: 'send', asset: 'GOLD', destination: b.address, amount: 1n, balance: 0n }),
      {
        status: 400,
        reason: 'unknown asset "GOLD": XE or XUSD',
      },
    );
    await expectRejected(kit, a.build({ type: 'claim', asset: 'XUSD', amount: XE, balance: XE }), {
      status: 400,
      reason: 'claim is XE only',
    });
    await expectRejected(kit, a.build({ type: 'burn', asset: 'XUSD', amount: 1n, balance: 0n }), {
      status: 400,
      reason: 'burn is XE only',
    });
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    await expectRejected(
      kit,
      minter.build({ type: 'mint', asset: 'XE', amount: XE, balance: minter.bal('XE') + XE }),
      {
        status: 400,
        reason: 'mint is XUSD only',
      },
    );
  });

  it('L-23: an unknown previous and an unopened account are retryable (503)', async () => {
    const a = await funded();
    const missing = randomHash();
    await expectRejected(
      kit,
      sealed(
        { ...a.draft({ type: 'claim', asset: 'XE', amount: XE, balance: a.bal() + XE }), previous: missing },
        a.seed,
        kit,
      ),
      { status: 503, reason: `previous block not found: ${missing}` },
    );
    const b = new Account(kit);
    await expectRejected(
      kit,
      sealed(
        {
          ...b.draft({ type: 'send', asset: 'XE', destination: a.address, amount: 1n, balance: 0n }),
          previous: missing,
        },
        b.seed,
        kit,
      ),
      { status: 503, reason: `unopened account ${b.address}` },
    );
  });

  it('rejects a fork of a finalized block outright (400)', async () => {
    const a = new Account(kit);
    const first = await a.claim(10n * XE);
    const second = await a.claim(10n * XE);
    await waitFinal(kit, a.address);
    const sibling = sealed(
      {
        account: a.address,
        previous: first.hash!,
        timestamp: nowNs(),
        type: 'claim',
        asset: 'XE',
        amount: 5n * XE,
        balance: 15n * XE,
      },
      a.seed,
      kit,
    );
    await expectRejected(kit, sibling, {
      status: 400,
      reason: `block conflicts with finalized block ${second.hash}`,
    });
    const reopen = sealed(
      {
        account: a.address,
        previous: ZERO_HASH,
        timestamp: nowNs(),
        type: 'claim',
        asset: 'XE',
        amount: 3n * XE,
        balance: 3n * XE,
      },
      a.seed,
      kit,
    );
    await expectRejected(kit, reopen, {
      status: 400,
      reason: `block conflicts with finalized block ${first.hash}`,
    });
  });

  it('L-06: rejects a balance mismatch, an overdraft, a zero amount and a send to self (400)', async () => {
    const a = await funded(100n * XE);
    const b = new Account(kit);
    await expectRejected(kit, a.claimBlock(XE, a.bal() + 2n * XE), {
      status: 400,
      reason: 'balance must be 101000000 after this claim, not 102000000',
    });
    await expectRejected(kit, a.sendBlock(b.address, 40n * XE, 'XE', 61n * XE), {
      status: 400,
      reason: 'balance must be 60000000 after this send, not 61000000',
    });
    await expectRejected(
      kit,
      a.build({ type: 'send', asset: 'XE', destination: b.address, amount: 100n * XE + 1n, balance: 0n }),
      {
        status: 400,
        reason: 'insufficient balance: 100000000 XE available',
      },
    );
    await expectRejected(kit, a.sendBlock(b.address, 0n), {
      status: 400,
      reason: 'amount must be greater than 0',
    });
    await expectRejected(kit, a.claimBlock(0n), { status: 400, reason: 'amount must be greater than 0' });
    await expectRejected(kit, a.sendBlock(a.address, XE), {
      status: 400,
      reason: 'destination must differ from the account',
    });
    // The whole balance can be sent.
    const all = await a.send(b.address, 100n * XE);
    await b.receive(all);
    expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({});
  });

  it('receive: unknown source (503), already received, wrong asset, not addressed to the account (400)', async () => {
    const a = await funded(50n * XE);
    const b = new Account(kit);
    const c = new Account(kit);
    const send = await a.send(b.address, 10n * XE);
    const unknown = randomHash();
    await expectRejected(kit, b.receiveBlock(unknown, 10n * XE), {
      status: 503,
      reason: 'source send not pending',
    });
    await expectRejected(kit, b.receiveBlock(send.hash!, 10n * XE, 'XUSD'), {
      status: 400,
      reason: 'the pending send is in XE',
    });
    await expectRejected(kit, c.receiveBlock(send.hash!, 10n * XE), {
      status: 400,
      reason: 'source is not a send to this account',
    });
    // The claim that opened a is a stored block, but not a send.
    const claimHash = (
      (await http(kit.url, 'GET', `/accounts/${a.address}/chain?limit=1`)).body as { hash: string }[]
    )[0]!.hash;
    await expectRejected(kit, b.receiveBlock(claimHash, 50n * XE), {
      status: 400,
      reason: 'source is not a send to this account',
    });
    await b.receive(send);
    await expectRejected(kit, b.receiveBlock(send.hash!, 10n * XE), {
      status: 400,
      reason: 'source send already received',
    });
    expect((await http(kit.url, 'GET', `/pending/${b.address}`)).body).toEqual([]);
  });

  it('claims: 600 + 400 XE inside the 24 h window, then one micro-unit more is refused', async () => {
    const a = new Account(kit);
    await a.claim(600n * XE);
    await a.claim(400n * XE);
    await expectRejected(kit, a.claimBlock(1n), {
      status: 400,
      reason: 'claim limit exceeded: 1000000000 per 86400000000000 ns, 0 left',
    });
    const b = new Account(kit);
    await expectRejected(kit, b.claimBlock(1000n * XE + 1n), {
      status: 400,
      reason: 'claim limit exceeded: 1000000000 per 86400000000000 ns, 1000000000 left',
    });
    expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({ XE: '1000000000' });
  });

  it('mint: the devnet minter mints XUSD, a non-minter cannot, u64 overflow is refused', async () => {
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    const mint = (acct: Account, amount: bigint, balance = acct.bal('XUSD') + amount) =>
      acct.build({ type: 'mint', asset: 'XUSD', amount, balance });
    await minter.commit(mint(minter, 500n * XE));
    expect((await http(kit.url, 'GET', `/accounts/${minter.address}/balance`)).body).toEqual({
      XUSD: '500000000',
    });

    const a = await funded(XE);
    await expectRejected(kit, mint(a, XE), { status: 400, reason: 'account is not a minter (sys.minter)' });
    const fresh = new Account(kit);
    await expectRejected(kit, mint(fresh, XE), {
      status: 400,
      reason: 'account is not a minter (sys.minter)',
    });
    await expectRejected(kit, mint(minter, 0n), { status: 400, reason: 'amount must be greater than 0' });
    await expectRejected(kit, mint(minter, U64_MAX - 500n * XE + 1n, U64_MAX), {
      status: 400,
      reason: 'balance would exceed 2^64-1',
    });

    // XUSD moves like XE, next to the receiver's XE.
    const send = await minter.send(a.address, 200n * XE, 'XUSD');
    await a.receive(send);
    expect((await http(kit.url, 'GET', `/accounts/${a.address}/balance`)).body).toEqual({
      XE: '1000000',
      XUSD: '200000000',
    });
    const supply = await freshSupply(kit);
    const xusd = (supply.assets as Record<string, Record<string, unknown>>).XUSD!;
    expect(xusd).toMatchObject({
      minted: '500000000',
      created: '500000000',
      balances: '500000000',
      conserved: true,
    });
    expect(supply.conserved).toBe(true);
  });

  it('L-18: supply stays conserved through claims, sends, receives, burns and mints', async () => {
    const before = await freshSupply(kit);
    const a = await funded(300n * XE);
    const b = new Account(kit);
    const s1 = await a.send(b.address, 120n * XE);
    const s2 = await a.send(b.address, 30n * XE);
    await b.receive(s1);
    await a.commit(
      a.build({ type: 'burn', asset: 'XE', amount: 50n * XE, balance: a.bal() - 50n * XE, memo: 'burnt' }),
    );
    const pendingOnly = await treasury.send(b.address, 5n * XE);
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    await minter.commit(
      minter.build({ type: 'mint', asset: 'XUSD', amount: 10n * XE, balance: minter.bal('XUSD') + 10n * XE }),
    );
    await b.receive(await minter.send(b.address, 4n * XE, 'XUSD'));
    const after = await freshSupply(kit);
    const xe = (s: Record<string, unknown>) => (s.assets as Record<string, Record<string, string>>).XE!;
    const xusd = (s: Record<string, unknown>) => (s.assets as Record<string, Record<string, string>>).XUSD!;
    expect(after.conserved).toBe(true);
    expect(xe(after)).toMatchObject({ conserved: true, discrepancy: '0' });
    expect(xusd(after)).toMatchObject({ conserved: true, discrepancy: '0' });
    expect(BigInt(xusd(after).minted!) - BigInt(xusd(before).minted!)).toBe(10n * XE);
    expect(BigInt(xe(after).faucet!) - BigInt(xe(before).faucet!)).toBe(300n * XE);
    expect(BigInt(xe(after).burned!) - BigInt(xe(before).burned!)).toBe(50n * XE);
    expect(BigInt(xe(after).in_flight!) - BigInt(xe(before).in_flight!)).toBe(
      s2.amount! + pendingOnly.amount!,
    );
    expect(BigInt(xe(after).created!)).toBe(BigInt(xe(after).accounted!));
    expect(after.genesis_supply).toBe('42000000000000');
  });
});

/**
 * Hardening (#15, item 1): supply counters are checked arithmetic. Before the fix, minting 2^64-1
 * XUSD, sending it away and minting again was accepted, the stored `minted` wrapped and `/supply`
 * reported `conserved: false` for ever. A node of its own, so no other test's mints shift the edge.
 */
describe('ledger rules: supply counters never wrap', () => {
  let t: TestNode;
  let kit: Kit;

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('mints to 2^64-1 in several steps, then refuses one more micro-unit (400, not retryable)', async () => {
    const minter = new Account(kit, seedOf(t.keys.minter.seed_hex));
    await minter.sync();
    const sink = new Account(kit).address;
    const minted = async () =>
      BigInt(((await freshSupply(kit)).assets as Record<string, Record<string, string>>).XUSD!.minted!);
    const mintAll = async (amount: bigint) => {
      await minter.commit(
        minter.build({ type: 'mint', asset: 'XUSD', amount, balance: minter.bal('XUSD') + amount }),
      );
      // Sent away, so the minter's own balance never stands in the way: only the counter can overflow.
      await minter.send(sink, amount, 'XUSD');
    };

    await mintAll(U64_MAX - 1000n - (await minted()));
    await mintAll(990n);
    await mintAll(10n);
    expect(await minted()).toBe(U64_MAX);

    for (const amount of [1n, U64_MAX]) {
      await expectRejected(kit, minter.build({ type: 'mint', asset: 'XUSD', amount, balance: amount }), {
        status: 400,
        reason: /^block rejected: XUSD supply would exceed 2\^64-1/,
      });
    }
    const supply = await freshSupply(kit);
    const xusd = (supply.assets as Record<string, Record<string, unknown>>).XUSD!;
    expect(xusd).toMatchObject({ minted: U64_MAX.toString(), created: U64_MAX.toString(), conserved: true });
    expect(supply.conserved).toBe(true);

    // The stored counters read back the same after a restart (before the fix they had wrapped).
    await t.stop({ keepData: true });
    t = await startTestNode({ dataDir: t.dataDir });
    kit = await kitOf(t);
    expect(await minted()).toBe(U64_MAX);
    expect((await freshSupply(kit)).conserved).toBe(true);
  });
});
