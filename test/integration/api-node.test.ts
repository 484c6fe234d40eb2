import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import { Account, freshSupply, http, type Kit, kitOf, XE } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { signDirectoryRegistration } from '../../node-core/protocol/payloads.ts';

/** The node-and-network, accounts, pending, delegation and conflicts endpoints, read through HTTP. */
describe('HTTP API: node, network, accounts and pending', () => {
  let t: TestNode;
  let kit: Kit;
  let treasury: Account;
  let a: Account;
  let b: Account;
  let pendingSend: Block;
  let genesisHash: string;

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    treasury = new Account(kit, seedOf(t.keys.treasury.seed_hex));
    await treasury.sync();
    genesisHash = treasury.frontier;
    a = new Account(kit);
    b = new Account(kit);
    await a.claim(50n * XE);
    pendingSend = await a.send(b.address, 20n * XE, 'XE');
  });
  afterAll(async () => {
    await t?.stop();
  });

  const EXPECTED_ROUTES = [
    'GET /node',
    'GET /network/activations',
    'GET /network/readiness',
    'GET /health',
    'GET /ready',
    'GET /accounts',
    'GET /accounts/{address}/balance',
    'GET /accounts/{address}/chain',
    'GET /accounts/{address}/keyset',
    'GET /accounts/{address}/reputation',
    'GET /reputation',
    'GET /frontiers',
    'GET /supply',
    'GET /pending',
    'GET /pending/{address}',
    'GET /blocks/recent',
    'GET /blocks/{hash}',
    ...[
      'claim',
      'send',
      'receive',
      'lease',
      'lease_accept',
      'lease_renew',
      'lease_settle',
      'lease_cancel',
      'lease_force_settle',
      'multisig_open',
      'multisig_update',
      'burn',
      'mint',
    ].map((type) => `POST /blocks/${type}`),
    'GET /conflicts',
    'GET /delegation',
    'GET /conflicts/{account}',
    'GET /statechain/tip',
    'GET /statechain/blocks',
    'GET /statechain/blocks/{index}',
    'GET /statechain/kv',
    'GET /statechain/kv/{key}',
    'GET /statechain/keyset',
    'POST /statechain/blocks',
    'GET /directory',
    'GET /directory/{account}',
    'POST /directory/register',
    'GET /agent/audit',
    'POST /agent/checkpoints',
    'GET /agent/checkpoints',
    'GET /agent/checkpoints/{id}/diff',
    'POST /agent/rollbacks',
  ];

  it('GET / lists every route with its method and a description, pretty-printed', async () => {
    const r = await http(kit.url, 'GET', '/');
    expect(r.status).toBe(200);
    expect(r.text).toContain('\n  "endpoints": [\n');
    const m = r.body as {
      name: string;
      network_id: string;
      address: string;
      endpoints: Record<string, string>[];
    };
    expect(m.network_id).toBe(t.keys.network_id);
    expect(m.address).toBe(kit.nodeAddress);
    const listed = m.endpoints.map((e) => `${e.method} ${e.path}`);
    expect(listed).toEqual(expect.arrayContaining(EXPECTED_ROUTES));
    expect(new Set(listed).size).toBe(listed.length);
    for (const e of m.endpoints) {
      // Mutating routes say they take an Idempotency-Key (api/idempotency.ts); the tunnel streams.
      const keyed = e.method === 'POST' && e.path !== '/tunnel/{lease}/tcp';
      expect(Object.keys(e).sort()).toEqual(
        keyed ? ['description', 'idempotency_key', 'method', 'path'] : ['description', 'method', 'path'],
      );
      expect(e.description!.trim().length).toBeGreaterThan(5);
    }
    // The node makes its own performance certificate shortly after start (reference 4.7).
    await waitFor(
      async () => (await http(kit.url, 'GET', '/certificate')).status === 200,
      20_000,
      'the own certificate',
    );
    // Every listed GET without parameters really answers (no 404/405).
    for (const e of m.endpoints.filter((x) => x.method === 'GET' && !x.path!.includes('{'))) {
      const res = await http(kit.url, 'GET', e.path!);
      // Chat reads need an account and its ownership proof (or the admin token): 400 or 401 bare;
      // the agent audit log, checkpoints, the window's app store and the node's log need the admin token.
      const needsProof = [
        '/chat/messages',
        '/chat/contacts',
        '/chat/events',
        '/agent/audit',
        '/agent/checkpoints',
        '/app/store',
        '/node/log',
        '/node/log/events',
      ].includes(e.path!);
      expect(needsProof ? [400, 401] : [200, 503], `${e.path} ${res.status}`).toContain(res.status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  it('GET /openapi.json is an OpenAPI 3.1 document with exactly the manifest routes', async () => {
    const r = await http(kit.url, 'GET', '/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.body as {
      openapi: string;
      info: { title: string };
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    const manifest = (
      (await http(kit.url, 'GET', '/')).body as { endpoints: { method: string; path: string }[] }
    ).endpoints;
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    // The manifest leaves out the two built-ins, GET / and GET /openapi.json.
    expect(documented.sort()).toEqual(
      ['GET /', 'GET /openapi.json', ...manifest.map((e) => `${e.method} ${e.path}`)].sort(),
    );
    const op = doc.paths['/accounts/{address}/balance']!.get as {
      parameters: { name: string; in: string }[];
    };
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'address', in: 'path' }));
  });

  it('GET /node describes the network, its difficulty and the ledger size', async () => {
    const r = await http(kit.url, 'GET', '/node');
    expect(r.status).toBe(200);
    const n = r.body as Record<string, unknown>;
    expect(n).toMatchObject({
      network_id: t.keys.network_id,
      address: kit.nodeAddress,
      pow_difficulty: '0000000000000002',
      genesis_hash: genesisHash,
      peers: [],
      peer_count: 0,
      accounts: 2, // treasury and a (b has only a pending send)
      block_count: 3,
      total_delegated_weight: '42000000000000',
      representatives: 1,
      statechain_height: 1,
    });
    expect(n.version).toMatch(/^xe\//);
    expect(n.chat_pow_difficulty).toMatch(/^[0-9a-f]{16}$/);
    expect(n.lease_timing).toMatchObject({ min_duration_secs: 60 });
    // a's 50 XE claim is delegated to nobody; the pending 20 XE counts for nobody.
    expect(BigInt(n.total_delegated_weight as string)).toBe(42_000_000n * XE);
    // Genesis says timestamp 0; the node tells when this development network was created (#16).
    const started = BigInt(n.network_started_at as number | bigint);
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    expect(started).toBeGreaterThan(nowNs - 600_000_000_000n);
    expect(started).toBeLessThanOrEqual(nowNs);
  });

  it('GET /node names a peer id with peer-to-peer networking off, and a registration naming it is taken (#14)', async () => {
    const n = (await http(kit.url, 'GET', '/node')).body as { id: string };
    // An Ed25519 libp2p peer id, the one the node has once networking is on (p2p.key).
    expect(n.id).toMatch(/^12D3KooW[1-9A-HJ-NP-Za-km-z]{44}$/);
    const k = keyPairFromSeed(randomSeed());
    const reg = signDirectoryRegistration(
      { account: k.pub_key, node_peer: n.id, timestamp: t.node.now() },
      hexToBytes(k.seed_hex),
    );
    const r = await http(kit.url, 'POST', '/directory/register', reg);
    expect(r.status, r.text).toBe(200);
    expect((await http(kit.url, 'GET', `/directory/${k.pub_key}`)).body).toMatchObject({ node_peer: n.id });
  });

  it('a block answers with pow_nonce always, 0 included (#14)', async () => {
    // The genesis block has no proof of work: its nonce is 0 and still written.
    const g = await http(kit.url, 'GET', `/blocks/${genesisHash}`);
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({ pow_nonce: 0 });
    expect(g.text).toMatch(/"pow_nonce":0[,}]/);
    const chain = (await http(kit.url, 'GET', `/accounts/${treasury.address}/chain`)).body as Record<
      string,
      unknown
    >[];
    for (const b of chain) expect(b).toHaveProperty('pow_nonce');
  });

  it('GET /health answers 200 pretty-printed and uncached; GET /ready answers 200 when ready', async () => {
    const h = await http(kit.url, 'GET', '/health');
    expect(h.status).toBe(200);
    expect(h.text).toContain('\n  "status": "ok",\n');
    expect(h.headers.get('cache-control')).toBe('no-store');
    expect(h.body).toMatchObject({ status: 'ok', ok: true, network_id: t.keys.network_id });
    const r = await http(kit.url, 'GET', '/ready');
    expect(r.status).toBe(200);
    expect(r.text).toContain('\n  "ready": true,\n');
    const body = r.body as { status: string; checks: { name: string; ok: boolean }[] };
    expect(body.status).toBe('ready');
    expect(body.checks.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'live',
        'store_readable',
        'delegated_weight',
        'quorum_reachable',
        'finality_advancing',
      ]),
    );
    expect(body.checks.every((c) => c.ok)).toBe(true);
  });

  it('GET /supply reports conserved supply with amounts as strings', async () => {
    const s = await freshSupply(kit);
    expect(s).toMatchObject({ genesis_supply: '42000000000000', conserved: true, accounts: 2, pending: 1 });
    expect((s.assets as Record<string, unknown>).XE).toMatchObject({
      genesis: '42000000000000',
      faucet: '50000000',
      in_flight: '20000000',
      balances: '42000030000000',
      created: '42000050000000',
      accounted: '42000050000000',
      conserved: true,
    });
    expect((s.assets as Record<string, unknown>).XUSD).toMatchObject({ created: '0', conserved: true });
  });

  it('GET /network/activations and /network/readiness', async () => {
    const act = await http(kit.url, 'GET', '/network/activations');
    expect(act.status).toBe(200);
    expect(act.body).toMatchObject({
      tip_index: 0,
      features: [],
      known_features: ['noop'],
      protocol_version: '1.0.0',
    });
    const rd = await http(kit.url, 'GET', '/network/readiness');
    expect(rd.status).toBe(200);
    expect(rd.body).toMatchObject({
      total_weight: '42000000000000',
      unknown_weight: '0',
      resolved_reps: 1,
      total_reps: 1,
      feature_ready_milli: { noop: 1000 },
    });
  });

  it('GET /pending and /pending/{address} list pending sends with string amounts', async () => {
    // The contract's fields, plus source and destination, which clients of the protocol read (#14).
    const entry = {
      hash: pendingSend.hash,
      from: a.address,
      amount: '20000000',
      asset: 'XE',
      timestamp: pendingSend.timestamp,
      source: pendingSend.hash,
      destination: b.address,
    };
    const all = await http(kit.url, 'GET', '/pending');
    expect(all.body).toEqual([{ ...entry, to: b.address }]);
    const mine = await http(kit.url, 'GET', `/pending/${b.address}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([entry]);
    expect(mine.text).toMatch(/"timestamp":\d+,/); // a bare integer
    expect((await http(kit.url, 'GET', `/pending/${a.address}`)).body).toEqual([]);
    expect((await http(kit.url, 'GET', '/pending/nothex')).status).toBe(400);
  });

  it('GET /frontiers maps each address to its frontier hash', async () => {
    const f = await http(kit.url, 'GET', '/frontiers');
    expect(f.body).toEqual({ [treasury.address]: genesisHash, [a.address]: a.frontier });
    expect(Object.keys(f.body as object)).toEqual([treasury.address, a.address].sort());
  });

  it('GET /delegation, /conflicts, /conflicts/{account}, /reputation', async () => {
    const d = await http(kit.url, 'GET', '/delegation');
    expect(d.body).toMatchObject({
      weights: { [kit.nodeAddress]: '42000000000000' },
      total_weight: '42000000000000',
      eligibility_restricted: false,
    });
    expect((await http(kit.url, 'GET', '/conflicts')).body).toEqual([]);
    const c = await http(kit.url, 'GET', `/conflicts/${a.address}`);
    expect(c.status).toBe(404);
    expect(Object.keys(c.body as object)).toEqual(['error']);
    expect((await http(kit.url, 'GET', '/reputation')).body).toEqual({});
    const rep = await http(kit.url, 'GET', `/accounts/${a.address}/reputation`);
    expect(rep.status).toBe(404);
    expect(rep.body).toEqual({ error: expect.any(String) });
  });

  it('GET /accounts/{address}/balance, /chain and /keyset, with 404 for unknown accounts', async () => {
    const bal = await http(kit.url, 'GET', `/accounts/${a.address}/balance`);
    expect(bal.status).toBe(200);
    expect(bal.body).toEqual({ XE: '30000000' });
    expect((await http(kit.url, 'GET', `/accounts/${a.address.toUpperCase()}/balance`)).body).toEqual({
      XE: '30000000',
    });

    const chain = await http(kit.url, 'GET', `/accounts/${a.address}/chain`);
    expect(chain.status).toBe(200);
    expect(chain.headers.get('x-total-count')).toBe('2');
    const blocks = chain.body as Record<string, unknown>[];
    expect(blocks.map((x) => x.type)).toEqual(['claim', 'send']);
    expect(blocks[1]).toMatchObject({ balance: '30000000', amount: '20000000', destination: b.address });
    expect(typeof blocks[1]!.finalized).toBe('boolean');
    const page2 = await http(kit.url, 'GET', `/accounts/${a.address}/chain?offset=1&limit=1`);
    expect(page2.headers.get('x-total-count')).toBe('2');
    expect((page2.body as { hash: string }[]).map((x) => x.hash)).toEqual([pendingSend.hash]);

    for (const path of ['balance', 'chain']) {
      const r = await http(kit.url, 'GET', `/accounts/${b.address}/${path}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'account not found' });
    }
    for (const who of [a.address, b.address]) {
      const r = await http(kit.url, 'GET', `/accounts/${who}/keyset`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'not a multisig account' });
    }
    const bad = await http(kit.url, 'GET', '/accounts/xyz/balance');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: expect.stringContaining('address') });
  });

  it('answers unknown routes 404 and wrong methods 405, in JSON', async () => {
    const nf = await http(kit.url, 'GET', '/no/such/route');
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ error: 'not found' });
    const wrong = await http(kit.url, 'POST', '/node', {});
    expect(wrong.status).toBe(405);
    expect(wrong.body).toEqual({ error: 'method not allowed' });
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    const del = await http(kit.url, 'DELETE', '/supply');
    expect(del.status).toBe(405);
    expect(del.headers.get('content-type')).toMatch(/^application\/json/);
    const get = await http(kit.url, 'GET', '/blocks/claim');
    expect(get.status).toBe(400); // GET /blocks/{hash} with a hash that is not 64 hex
  });
});
