import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import type { Attestation, Block } from '../../node-core/protocol/block.ts';
import { verifyAttestation } from '../../node-core/protocol/payloads.ts';
import { acceptBlock, certify, fundedAccount, leaseBlock } from '../helpers/lease-kit.ts';
import { Account, http, type Kit, kitOf, XE } from '../helpers/ledger-kit.ts';
import { seedOf, type TestNode } from '../helpers/node.ts';
import { twoNodes } from '../helpers/p2p.ts';

/**
 * Timekeeper attestations over the messenger (reference-behavior.md 4.6, LS-10) between two real
 * nodes on loopback: A created the development network, so its key is the one listed in
 * `sys.timekeepers`; B joined it and is no timekeeper. Leases live on A.
 */
describe('attest_timestamp between peers', () => {
  let a: TestNode;
  let b: TestNode;
  let kit: Kit;
  let c: Account;
  let p: Account;
  let cert: Awaited<ReturnType<typeof certify>>;

  const ask = (from: TestNode, to: TestNode, subject: string) =>
    from.node.p2p!.request<Attestation>(to.node.p2p!.peerId, 'attest_timestamp', { lease_hash: subject });
  const newLease = () => c.commit(leaseBlock(c, p, cert));

  beforeAll(async () => {
    [a, b] = await twoNodes();
    kit = await kitOf(a);
    const minter = new Account(kit, seedOf(a.keys.minter.seed_hex));
    await minter.sync();
    c = await fundedAccount(kit, minter);
    p = new Account(kit);
    await p.claim(XE);
    cert = await certify(a, kit, p);
  }, 30_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('the timekeeper answers once per peer and lease within 30 s; another lease is answered', async () => {
    const l1 = await newLease();
    const l2 = await newLease();
    const got = await ask(b, a, l1.hash!);
    expect(got.public_key).toBe(a.keys.timekeepers[0]!.pub_key);
    expect(verifyAttestation(l1.hash!, got, verifyBytesNode)).toBe(true);
    await expect(ask(b, a, l1.hash!)).rejects.toThrow(
      /rate limited: one attestation per peer per identifier/,
    );
    expect(verifyAttestation(l2.hash!, await ask(b, a, l2.hash!), verifyBytesNode)).toBe(true);
    // The same subject over HTTP is not rate-limited (reference-behavior.md 1.8).
    const http1 = await http(kit.url, 'POST', '/attestation/request', { lease_hash: l1.hash });
    expect(http1.status).toBe(200);
  });

  it('an invalid request does not use up the slot (LS-10)', async () => {
    const l3: Block = leaseBlock(c, p, cert); // signed, not submitted yet: A does not know it
    await expect(ask(b, a, l3.hash!)).rejects.toThrow(/attest_timestamp: lease not found/);
    await expect(ask(b, a, 'xyz')).rejects.toThrow(/invalid attestation identifier length: 3/);
    await c.commit(l3);
    expect(verifyAttestation(l3.hash!, await ask(b, a, l3.hash!), verifyBytesNode)).toBe(true);
  });

  it('a node whose key is not a timekeeper refuses', async () => {
    const own = (await b.client.node()).address; // a subject B would attest (its own address)
    await expect(ask(a, b, own)).rejects.toThrow(/this node is not a listed timekeeper/);
  });

  it('POST /attestation/request attests the same subjects, refusals with their status', async () => {
    const post = (body: unknown) => http(kit.url, 'POST', '/attestation/request', body);
    const l = await newLease();
    const ok = await post({ lease_hash: l.hash });
    expect(ok.status).toBe(200);
    expect(verifyAttestation(l.hash!, ok.body as unknown as Attestation, verifyBytesNode)).toBe(true);
    const own = (await a.client.node()).address;
    expect((await post({ lease_hash: own })).status).toBe(200);
    expect(await post({})).toMatchObject({ status: 400, body: { error: 'lease_hash required' } });
    expect(await post({ lease_hash: 'ab' })).toMatchObject({
      status: 400,
      body: { error: 'invalid attestation identifier length: 2' },
    });
    expect(await post({ lease_hash: '34'.repeat(32) })).toMatchObject({
      status: 404,
      body: { error: 'lease not found' },
    });
    await c.commit(
      c.build({ type: 'lease_cancel', asset: 'XUSD', source: l.hash!, balance: c.bal('XUSD') + 517n }),
    );
    expect(await post({ lease_hash: l.hash })).toMatchObject({
      status: 400,
      body: { error: `lease ${l.hash} is cancelled: no attestation-gated transitions remain` },
    });
  });

  it('gatherAttestations: the timekeeper peer answers a non-timekeeper; a timekeeper signs itself', async () => {
    const l4 = await newLease();
    const fromB = await b.node.attestations!.gatherAttestations(l4.hash!);
    expect(fromB.map((x) => x.public_key)).toEqual([a.keys.timekeepers[0]!.pub_key]);
    // A asks B too (who refuses) and counts its own signature.
    const fromA = await a.node.attestations!.gatherAttestations(l4.hash!);
    expect(fromA.map((x) => x.public_key)).toEqual([a.keys.timekeepers[0]!.pub_key]);
    // What B gathered is what an accept needs.
    await p.commit(acceptBlock(a, p, l4, 0n, { attestations: fromB }));
    expect((await http(kit.url, 'GET', `/leases/${l4.hash}`)).body).toMatchObject({
      state: 'accepted',
      start_time: fromB[0]!.timestamp,
    });
  });
});
