import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { type Registration, signRegistration } from '../../node-core/protocol/registration.ts';
import { http } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { twoNodes } from '../helpers/p2p.ts';

/**
 * The contract's Directory table over HTTP (reference-behavior.md 1.9): registration, listing and
 * lookup, every refusal, the 30-minute life of an entry, and propagation to peers by gossip.
 */
const PEER_A = '12D3KooWLwh6bjD9ZBCV3Zzta5SLhCyqrtMuFL5Yk7Lv9K4Gx6JQ';
const PEER_B = '12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo';
const MINUTE = 60_000_000_000n;

interface Registrant {
  seed: Uint8Array;
  pub_key: string;
  address: string;
  /** The wire form of a registration signed by this key. */
  body(timestamp: bigint, nodePeer?: string): Record<string, unknown>;
}

function registrant(): Registrant {
  const seed = randomSeed();
  const k = keyPairFromSeed(seed);
  return {
    seed,
    pub_key: k.pub_key,
    address: k.address,
    body(timestamp, nodePeer = PEER_A) {
      const r: Registration = signRegistration({ account: k.pub_key, node_peer: nodePeer, timestamp }, seed);
      return { ...r, pub_key: r.account };
    },
  };
}

describe('HTTP API: directory', () => {
  let t: TestNode;
  /** The node's clock, moved by the tests (registrations live 30 minutes after their timestamp). */
  let clock = 1_790_000_000_000_000_000n;

  beforeAll(async () => {
    t = await startTestNode({ now: () => clock });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const register = (body: unknown) => http(t.node.url, 'POST', '/directory/register', body);
  const list = async () =>
    (await http(t.node.url, 'GET', '/directory?limit=1000')).body as Record<string, unknown>[];
  const entry = (account: string) => http(t.node.url, 'GET', `/directory/${account}`);

  it('registers an account, lists it and finds it by public key and by address', async () => {
    const alice = registrant();
    const body = alice.body(clock);
    const r = await register(body);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true });

    const listed = (await list()).find((e) => e.account === alice.pub_key);
    expect(listed).toEqual(body);
    expect(Object.keys(listed!).sort()).toEqual([
      'account',
      'node_peer',
      'pub_key',
      'signature',
      'timestamp',
    ]);
    // The timestamp is an exact JSON integer (19 digits, beyond 2^53).
    const raw = await http(t.node.url, 'GET', `/directory/${alice.pub_key}`);
    expect(raw.text).toContain(`"timestamp":${clock}`);
    for (const id of [alice.pub_key, alice.address, alice.address.toUpperCase()]) {
      const found = await entry(id);
      expect(found.status, id).toBe(200);
      expect(found.body).toEqual(body);
    }
  });

  it('answers 404 for an account that is not registered', async () => {
    const r = await entry(registrant().address);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'account not found in directory' });
    expect((await entry('xyz')).status).toBe(400);
  });

  it('refuses missing and malformed fields with a 400 naming the field, storing nothing', async () => {
    const bob = registrant();
    const good = bob.body(clock);
    const cases: [Record<string, unknown> | unknown, string][] = [
      ...['account', 'node_peer', 'timestamp', 'signature'].map((f): [Record<string, unknown>, string] => [
        { ...good, [f]: undefined },
        `missing ${f}`,
      ]),
      [{ ...good, account: 'ab'.repeat(31) }, 'invalid account: expected a 64-hex public key'],
      [{ ...good, pub_key: registrant().pub_key }, 'pub_key must equal account'],
      [{ ...good, node_peer: 'not a peer id!' }, 'invalid node_peer: expected a libp2p peer id'],
      [{ ...good, node_peer: 42 }, 'invalid node_peer'],
      [{ ...good, signature: 'ab'.repeat(63) }, 'invalid signature: expected 128 hex characters'],
      [{ ...good, timestamp: 1.5 }, 'invalid timestamp'],
      [{ ...good, timestamp: '12x' }, 'invalid timestamp'],
      [{ ...good, timestamp: '9223372036854775808' }, 'invalid timestamp'],
      [[good], 'invalid request body'],
    ];
    for (const [body, message] of cases) {
      const r = await register(body);
      expect(r.status, message).toBe(400);
      expect((r.body as { error: string }).error, message).toContain(message);
    }
    const notJson = await register('{"account":');
    expect(notJson.status).toBe(400);
    expect((await entry(bob.pub_key)).status).toBe(404);
  });

  it('refuses a wrong signature, an expired and a far-future timestamp, storing nothing', async () => {
    const carol = registrant();
    const forged = { ...carol.body(clock), signature: registrant().body(clock).signature };
    const refusals: [Record<string, unknown>, string][] = [
      [forged, 'invalid signature'],
      [carol.body(clock - 31n * MINUTE), 'registration expired: timestamp is more than 30 minutes old'],
      [carol.body(clock + 6n * MINUTE), 'timestamp is more than 5 minutes ahead of the node clock'],
    ];
    for (const [body, error] of refusals) {
      const r = await register(body);
      expect(r.status, error).toBe(400);
      expect(r.body).toEqual({ error });
    }
    expect((await entry(carol.pub_key)).status).toBe(404);
    // A clock a little behind the registrant's is fine.
    expect((await register(carol.body(clock + 2n * MINUTE))).status).toBe(200);
    expect((await entry(carol.pub_key)).status).toBe(200);
  });

  it('ignores a registration not newer than the stored one (200) and replaces it with a newer one', async () => {
    const dave = registrant();
    const first = dave.body(clock, PEER_A);
    expect((await register(first)).status).toBe(200);
    const older = await register(dave.body(clock - MINUTE, PEER_B));
    expect(older.status).toBe(200);
    expect(older.body).toEqual({ ok: true });
    expect((await entry(dave.pub_key)).body).toEqual(first);
    const newer = dave.body(clock + 1n, PEER_B);
    expect((await register(newer)).status).toBe(200);
    expect((await entry(dave.address)).body).toEqual(newer);
  });

  it('lists entries sorted by account, paged by offset and limit', async () => {
    for (let i = 0; i < 3; i++) expect((await register(registrant().body(clock))).status).toBe(200);
    const all = await list();
    const accounts = all.map((e) => e.account as string);
    expect(accounts.length).toBeGreaterThanOrEqual(3);
    expect(accounts).toEqual([...accounts].sort());
    const page = await http(t.node.url, 'GET', '/directory?offset=1&limit=2');
    expect(page.body).toEqual(all.slice(1, 3));
    expect((await http(t.node.url, 'GET', `/directory?offset=${all.length}`)).body).toEqual([]);
  });

  it('drops an entry 30 minutes after its timestamp; registering again makes it discoverable', async () => {
    const erin = registrant();
    expect((await register(erin.body(clock))).status).toBe(200);
    clock += 29n * MINUTE;
    expect((await entry(erin.pub_key)).status).toBe(200);
    clock += 1n * MINUTE;
    expect((await entry(erin.pub_key)).status).toBe(404);
    expect((await list()).some((e) => e.account === erin.pub_key)).toBe(false);
    const again = erin.body(clock);
    expect((await register(again)).status).toBe(200);
    expect((await entry(erin.address)).body).toEqual(again);
  });
});

describe('HTTP API: directory across nodes', () => {
  let a: TestNode;
  let b: TestNode;

  beforeAll(async () => {
    [a, b] = await twoNodes();
  }, 30_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('a registration posted to one node reaches its peer by gossip', async () => {
    // Gossip flows once the peers have exchanged their topics: the first node's own registration
    // (sent when a peer connects) arriving at the second shows that it does.
    await waitFor(
      async () =>
        ((await http(b.node.url, 'GET', '/directory')).body as { node_peer: string }[]).some(
          (e) => e.node_peer === a.node.nodeId,
        ),
      10_000,
      "the first node's own registration at the peer",
    );
    const frank = registrant();
    const body = frank.body(BigInt(Date.now()) * 1_000_000n);
    expect((await http(a.node.url, 'POST', '/directory/register', body)).status).toBe(200);
    const seen = await waitFor(
      async () => {
        const r = await http(b.node.url, 'GET', `/directory/${frank.address}`);
        return r.status === 200 ? r.body : undefined;
      },
      10_000,
      'the registration at the peer',
    );
    expect(seen).toEqual(body);
  });
});
