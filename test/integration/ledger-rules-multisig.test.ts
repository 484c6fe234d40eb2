import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Block, blockHashBytes, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import {
  keyPairFromSeed,
  type Keyset,
  multisigAddress,
  randomSeed,
  signBytes,
} from '../../node-core/protocol/keys.ts';
import {
  Account,
  expectRejected,
  http,
  type Kit,
  kitOf,
  nowNs,
  sealedMulti,
  sealedRaw,
  submit,
  waitFinal,
  withPow,
  XE,
} from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/** Multisig accounts (reference-behavior.md section 3.1 step 8 and 3.2), through the HTTP API. */
describe('ledger rules: multisig accounts', () => {
  let t: TestNode;
  let kit: Kit;
  let treasury: Account;
  const [s1, s2, s3] = [randomSeed(), randomSeed(), randomSeed()];
  const outsider = randomSeed();
  const pk = (seed: Uint8Array) => keyPairFromSeed(seed).pub_key;
  const keyset: Keyset = { keys: [pk(s1), pk(s2), pk(s3)], threshold: 2 };
  const ms = { address: multisigAddress(keyset), frontier: ZERO_HASH, balance: 0n };

  /** An unsigned block extending the multisig chain. */
  const draft = (fields: Omit<Block, 'account' | 'previous' | 'timestamp'>): Block => ({
    account: ms.address,
    previous: ms.frontier,
    timestamp: nowNs(),
    ...fields,
  });
  const commit = async (block: Block) => {
    const r = await submit(kit, block);
    expect(r.status, r.text).toBe(201);
    ms.frontier = block.hash!;
    ms.balance = block.balance;
  };
  const openBlock = (): Block => draft({ type: 'multisig_open', asset: 'XE', balance: 0n, keyset });

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('multisig_open needs the threshold of its own keyset, at the keyset address', async () => {
    await expectRejected(kit, sealedMulti(openBlock(), [s1], kit), {
      status: 400,
      reason: '1 valid signatures, 2 required for multisig_open',
    });
    await expectRejected(kit, sealedRaw(openBlock(), s1, kit), {
      status: 400,
      reason: 'multisig_open must carry signatures',
    });
    const elsewhere = { ...openBlock(), account: new Account(kit).address };
    await expectRejected(kit, sealedMulti(elsewhere, [s1, s2], kit), {
      status: 400,
      reason: 'account is not the address of the keyset',
    });
    await expectRejected(kit, sealedMulti(openBlock(), [s1, outsider], kit), {
      status: 400,
      reason: `signer ${pk(outsider)} is not in the keyset`,
    });
    await commit(sealedMulti(openBlock(), [s1, s3], kit));
    const ks = await http(kit.url, 'GET', `/accounts/${ms.address}/keyset`);
    expect(ks.status).toBe(200);
    expect(ks.body).toEqual({ keys: [...keyset.keys].sort(), threshold: 2 });
    expect((await http(kit.url, 'GET', `/accounts/${ms.address}/balance`)).body).toEqual({});
  });

  it('a receive needs one member signature; send and burn (L-09) need the threshold', async () => {
    const funding = await treasury.send(ms.address, 100n * XE);
    await commit(
      sealedMulti(
        draft({ type: 'receive', asset: 'XE', source: funding.hash!, balance: 100n * XE }),
        [s3],
        kit,
      ),
    );
    expect((await http(kit.url, 'GET', `/accounts/${ms.address}/balance`)).body).toEqual({ XE: '100000000' });

    const dest = new Account(kit);
    const send = () =>
      draft({ type: 'send', asset: 'XE', destination: dest.address, amount: 10n * XE, balance: 90n * XE });
    await expectRejected(kit, sealedMulti(send(), [s1], kit), {
      status: 400,
      reason: '1 valid signatures, 2 required for send',
    });
    const sent = sealedMulti(send(), [s1, s2], kit);
    await commit(sent);
    await dest.receive(sent);

    const burn = () => draft({ type: 'burn', asset: 'XE', amount: 5n * XE, balance: 85n * XE });
    await expectRejected(kit, sealedMulti(burn(), [s2], kit), {
      status: 400,
      reason: '1 valid signatures, 2 required for burn',
    });
    await commit(sealedMulti(burn(), [s2, s3], kit));
    expect((await http(kit.url, 'GET', `/accounts/${ms.address}/balance`)).body).toEqual({ XE: '85000000' });
    await waitFinal(kit, ms.address);
  });

  it('rejects duplicate, non-member and invalid signers, and pub_key or signature on a multisig block', async () => {
    const dest = new Account(kit).address;
    const send = () =>
      draft({ type: 'send', asset: 'XE', destination: dest, amount: XE, balance: ms.balance - XE });
    await expectRejected(kit, sealedMulti(send(), [s1, s1], kit), {
      status: 400,
      reason: `duplicate signer ${pk(s1)}`,
    });
    await expectRejected(kit, sealedMulti(send(), [s1, outsider], kit), {
      status: 400,
      reason: `signer ${pk(outsider)} is not in the keyset`,
    });
    // s2's entry carries s3's signature.
    const good = sealedMulti(send(), [s1, s2], kit);
    const s3sig = bytesToHex(
      signBytes(blockHashBytes({ ...good, signatures: undefined, hash: undefined }, kit.networkId), s3),
    );
    const forged = {
      ...good,
      signatures: good.signatures!.map((s) => (s.public_key === pk(s2) ? { ...s, signature: s3sig } : s)),
    };
    await expectRejected(kit, forged, { status: 400, reason: `invalid signature by ${pk(s2)}` });

    // pub_key is part of the hash: signed over, yet refused.
    const declaring: Block = { ...send(), pub_key: pk(s1) };
    const hash = blockHashBytes(declaring, kit.networkId);
    const withKey = withPow(
      {
        ...declaring,
        hash: bytesToHex(hash),
        signatures: [s1, s2].map((s) => ({ public_key: pk(s), signature: bytesToHex(signBytes(hash, s)) })),
      },
      kit,
    );
    await expectRejected(kit, withKey, { status: 400, reason: 'multisig block must not declare pub_key' });
    await expectRejected(
      kit,
      { ...good, signature: s3sig },
      {
        status: 400,
        reason: 'a multisig block carries signatures, not signature',
      },
    );
    // A single-key signature on the multisig account.
    await expectRejected(kit, sealedRaw(send(), s1, kit), {
      status: 400,
      reason: 'a multisig account needs signatures',
    });
  });

  it('rejects signatures on a single-key account, and (L-11) before the multisig_open is known (503)', async () => {
    const a = new Account(kit);
    await a.claim(10n * XE);
    const b = new Account(kit);
    await expectRejected(
      kit,
      sealedMulti(
        a.draft({ type: 'send', asset: 'XE', destination: b.address, amount: XE, balance: 9n * XE }),
        [a.seed],
        kit,
      ),
      {
        status: 400,
        reason: 'signatures on a single-key account',
      },
    );
    await expectRejected(
      kit,
      sealedMulti(
        a.draft({ type: 'multisig_update', asset: 'XE', balance: 10n * XE, keyset }),
        [a.seed],
        kit,
      ),
      {
        status: 400,
        reason: 'signatures on a single-key account',
      },
    );
    await expectRejected(
      kit,
      sealedRaw(a.draft({ type: 'multisig_update', asset: 'XE', balance: 10n * XE, keyset }), a.seed, kit),
      {
        status: 400,
        reason: 'multisig_update must carry signatures',
      },
    );
    const other: Keyset = { keys: [pk(randomSeed()), pk(randomSeed())], threshold: 1 };
    const unknown = multisigAddress(other);
    const source = bytesToHex(randomSeed());
    const early = {
      account: unknown,
      previous: ZERO_HASH,
      timestamp: nowNs(),
      type: 'receive',
      asset: 'XE',
      source,
      balance: XE,
    } as const;
    await expectRejected(kit, sealedMulti(early, [s1], kit), {
      status: 503,
      reason: 'multisig_open not yet synced',
    });
    await expectRejected(kit, sealedMulti({ ...early, previous: source }, [s1], kit), {
      status: 503,
      reason: `unopened account ${unknown}`,
    });
  });

  it('multisig_update replaces the keyset, signed by the threshold of the old keyset', async () => {
    const [n1, n2] = [randomSeed(), randomSeed()];
    const next: Keyset = { keys: [pk(n1), pk(n2)], threshold: 1 };
    const update = (balance = ms.balance) =>
      draft({ type: 'multisig_update', asset: 'XE', balance, keyset: next });
    await expectRejected(kit, sealedMulti(update(), [n1], kit), {
      status: 400,
      reason: `signer ${pk(n1)} is not in the keyset`,
    });
    await expectRejected(kit, sealedMulti(update(), [s1], kit), {
      status: 400,
      reason: '1 valid signatures, 2 required for multisig_update',
    });
    await expectRejected(kit, sealedMulti(update(ms.balance + 1n), [s1, s2], kit), {
      status: 400,
      reason: `balance must be ${ms.balance} after this multisig_update, not ${ms.balance + 1n}`,
    });
    await commit(sealedMulti(update(), [s1, s2], kit));
    expect((await http(kit.url, 'GET', `/accounts/${ms.address}/keyset`)).body).toEqual({
      keys: [...next.keys].sort(),
      threshold: 1,
    });

    const dest = new Account(kit).address;
    const send = () =>
      draft({ type: 'send', asset: 'XE', destination: dest, amount: XE, balance: ms.balance - XE });
    await expectRejected(kit, sealedMulti(send(), [s1, s2], kit), {
      status: 400,
      reason: /^block rejected: signer [0-9a-f]{64} is not in the keyset$/,
    });
    await commit(sealedMulti(send(), [n2], kit));
    expect((await http(kit.url, 'GET', `/pending/${dest}`)).body).toMatchObject([
      { from: ms.address, amount: '1000000' },
    ]);
    await waitFinal(kit, ms.address);
    const chain = await http(kit.url, 'GET', `/accounts/${ms.address}/chain`);
    expect((chain.body as { type: string }[]).map((b) => b.type)).toEqual([
      'multisig_open',
      'receive',
      'send',
      'burn',
      'multisig_update',
      'send',
    ]);
  });
});
