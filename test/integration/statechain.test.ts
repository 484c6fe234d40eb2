import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JsonValue, stringifyJson } from '../../node-core/protocol/json.ts';
import { keyPairFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import {
  signStateBlock,
  type StateBlock,
  stateBlockHash,
  type StateOp,
  stateBlockToJson,
} from '../../node-core/protocol/statechain.ts';
import { Account, http, type Kit, kitOf, nowNs, submit, XE } from '../helpers/ledger-kit.ts';
import { seedOf, startTestNode, type TestNode } from '../helpers/node.ts';

/** The state chain over HTTP (reference-behavior.md section 6): reads, DAO-signed writes, refusals. */
describe('HTTP API: state chain', () => {
  let t: TestNode;
  let kit: Kit;
  let dao: Uint8Array[];
  const ZERO = '0'.repeat(64);

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
    dao = t.keys.dao.map((k) => seedOf(k.seed_hex));
  });
  afterAll(async () => {
    await t?.stop();
  });

  type Tip = { index: number; hash: string; timestamp: number | bigint };
  const tip = async () => (await http(kit.url, 'GET', '/statechain/tip')).body as Tip;
  const kv = async () =>
    (await http(kit.url, 'GET', '/statechain/kv?limit=1000')).body as { key: string; value: JsonValue }[];

  /** A block on top of the tip, signed by `signers` (default: two DAO keys, the threshold). */
  async function next(
    ops: StateOp[],
    signers: Uint8Array[] = dao.slice(0, 2),
    change: Partial<StateBlock> = {},
  ) {
    const cur = await tip();
    let b: StateBlock = {
      index: BigInt(cur.index) + 1n,
      prev_hash: cur.hash,
      ops,
      signatures: [],
      timestamp: nowNs(),
      ...change,
    };
    for (const s of signers) b = signStateBlock(b, s);
    return b;
  }
  const post = (b: StateBlock | string) =>
    http(
      kit.url,
      'POST',
      '/statechain/blocks',
      typeof b === 'string' ? b : stringifyJson(stateBlockToJson(b)),
    );

  /** Must be refused with 400 `block rejected: <reason>`, leaving tip and key/values untouched. */
  async function expectRefused(b: StateBlock, reason: string | RegExp) {
    const [tipBefore, kvBefore] = [await tip(), await kv()];
    const r = await post(b);
    expect(r.status, r.text).toBe(400);
    expect(Object.keys(r.body as object)).toEqual(['error']);
    const error = (r.body as { error: string }).error;
    if (typeof reason === 'string') expect(error).toBe(`block rejected: ${reason}`);
    else expect(error).toMatch(reason);
    expect(await tip()).toEqual(tipBefore);
    expect(await kv()).toEqual(kvBefore);
  }

  const set = (key: string, value: string): StateOp => ({ type: 'set', key, value });

  it('reads the genesis: tip, blocks, block by index, DAO keyset', async () => {
    const g = await tip();
    expect(g).toMatchObject({ index: 0, prev_hash: ZERO, timestamp: 0 });
    expect(g.hash).toMatch(/^[0-9a-f]{64}$/);
    const list = await http(kit.url, 'GET', '/statechain/blocks');
    expect(list.body).toEqual([g]);
    expect((await http(kit.url, 'GET', '/statechain/blocks/0')).body).toEqual(g);
    expect((await http(kit.url, 'GET', '/statechain/blocks?start=1')).body).toEqual([]);
    const nf = await http(kit.url, 'GET', '/statechain/blocks/1');
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ error: 'block not found' });
    for (const bad of ['abc', '-1', '01', '1.5', '99999999999999999999']) {
      const r = await http(kit.url, 'GET', `/statechain/blocks/${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body).toEqual({ error: 'invalid index' });
    }
    const ks = await http(kit.url, 'GET', '/statechain/keyset');
    expect(ks.status).toBe(200);
    expect(ks.body).toEqual({ keys: expect.arrayContaining(t.keys.dao.map((k) => k.pub_key)), threshold: 2 });
  });

  it('GET /statechain/kv lists key/values sorted, values as the stored JSON; /kv/{key} reads one', async () => {
    const all = await kv();
    const keys = all.map((e) => e.key);
    expect(keys).toEqual([...keys].sort());
    expect(keys).toEqual(
      expect.arrayContaining([
        'sys.network_id',
        'sys.dao_keyset',
        'sys.minter',
        'sys.faucet',
        'sys.pow',
        'sys.phase',
      ]),
    );
    // Values are JSON values, not strings of JSON text: an object stays an object (D14, issue #14).
    const byKey = Object.fromEntries(all.map((e) => [e.key, e.value]));
    expect(typeof byKey['sys.faucet']).toBe('object');
    expect(byKey['sys.network_id']).toBe(t.keys.network_id);
    // L-10: the minter list holds addresses, not public keys.
    expect(byKey['sys.minter']).toEqual({ keys: [t.keys.minter.address] });
    expect(byKey['sys.faucet']).toEqual({ amount: '1000000000', period_ns: '86400000000000' });

    const prefixed = (await http(kit.url, 'GET', '/statechain/kv?prefix=sys.p')).body as { key: string }[];
    expect(prefixed.map((e) => e.key)).toEqual(['sys.phase', 'sys.pow']);
    const page = (await http(kit.url, 'GET', '/statechain/kv?offset=1&limit=2')).body as { key: string }[];
    expect(page.map((e) => e.key)).toEqual(keys.slice(1, 3));

    const one = await http(kit.url, 'GET', '/statechain/kv/sys.network_id');
    expect(one.body).toEqual({ key: 'sys.network_id', value: t.keys.network_id });
    const nf = await http(kit.url, 'GET', '/statechain/kv/app/none');
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ error: 'key not found' });
  });

  it('POST /statechain/blocks applies a DAO-signed block: 201 {hash, index}, values kept byte for byte', async () => {
    const text = '{"text":  "hello", "n": [1, 2.50, 18446744073709551616]}';
    const b = await next([set('app/config/motd', text), set('app.flag', 'true')]);
    const r = await post(b);
    expect(r.status, r.text).toBe(201);
    expect(r.body).toEqual({ hash: stateBlockHash(b), index: 1 });
    expect((await tip()).index).toBe(1);
    // The value is spliced in byte for byte: spacing, 2.50 and the 20-digit integer as submitted.
    expect((await http(kit.url, 'GET', '/statechain/kv/app/config/motd')).text).toBe(
      `{"key":"app/config/motd","value":${text}}`,
    );
    expect((await http(kit.url, 'GET', '/statechain/kv?prefix=app/config/')).text).toBe(
      `[{"key":"app/config/motd","value":${text}}]`,
    );
    expect((await http(kit.url, 'GET', '/statechain/kv/app.flag')).body).toEqual({
      key: 'app.flag',
      value: true,
    });
    const stored = (await http(kit.url, 'GET', '/statechain/blocks/1')).text;
    expect(stored).toContain(text);
    // A duplicate is idempotent.
    const again = await post(b);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(r.body);
    expect((await tip()).index).toBe(1);
    expect(
      ((await http(kit.url, 'GET', '/node')).body as { statechain_height: number }).statechain_height,
    ).toBe(2);
  });

  it('refuses wrong positions: index, taken index, prev_hash, hash, timestamp, no ops', async () => {
    const cur = await tip();
    const ok = [set('app/x', '1')];
    await expectRefused(
      await next(ok, undefined, { index: BigInt(cur.index) + 2n }),
      `wrong index: ${cur.index + 2} does not follow the tip ${cur.index}`,
    );
    await expectRefused(
      await next(ok, undefined, { index: BigInt(cur.index), prev_hash: ZERO }),
      `fork: index ${cur.index} is already taken by another block`,
    );
    await expectRefused(
      await next(ok, undefined, { prev_hash: 'ab'.repeat(32) }),
      'prev_hash does not match the tip',
    );
    await expectRefused({ ...(await next(ok)), hash: 'cd'.repeat(32) }, 'hash mismatch');
    await expectRefused(
      await next(ok, undefined, { timestamp: BigInt(cur.timestamp) - 1n }),
      'timestamp earlier than the tip',
    );
    await expectRefused(await next([]), 'a state block needs at least one op');
  });

  it('refuses missing, duplicate, unknown and invalid signatures', async () => {
    const ok = [set('app/y', '"y"')];
    const pub = (s: Uint8Array) => keyPairFromSeed(s).pub_key;
    await expectRefused(await next(ok, []), 'insufficient signatures: 0 of 2 required');
    await expectRefused(await next(ok, [dao[1]!]), 'insufficient signatures: 1 of 2 required');
    await expectRefused(await next(ok, [dao[0]!, dao[0]!]), `duplicate signer ${pub(dao[0]!)}`);
    const outsider = randomSeed();
    await expectRefused(await next(ok, [dao[0]!, outsider]), `signer ${pub(outsider)} is not in the keyset`);
    const good = await next(ok, [dao[0]!, dao[2]!]);
    const forged = {
      ...good,
      signatures: good.signatures.map((s, i) =>
        i === 1 ? { ...s, signature: good.signatures[0]!.signature } : s,
      ),
    };
    await expectRefused(forged, `invalid signature by ${pub(dao[2]!)}`);
  });

  it('refuses invalid sys.* values, deleting sys.* keys and changing the network id', async () => {
    await expectRefused(
      await next([set('sys.faucet', '{"amount": "0", "period_ns": "1"}')]),
      'sys.faucet: amount and period_ns must be positive',
    );
    await expectRefused(
      await next([set('sys.pow', '{"block": "xyz", "chat": "00"}')]),
      /^block rejected: sys\.pow: /,
    );
    await expectRefused(
      await next([
        set('sys.dao_keyset', stringifyJson({ keys: t.keys.dao.map((k) => k.pub_key), threshold: 1 })),
      ]),
      'sys.dao_keyset: threshold must be an integer from 2 to 3',
    );
    await expectRefused(
      await next([set('sys.minter', '{"keys": ["not-an-address"]}')]),
      /^block rejected: sys\.minter: /,
    );
    await expectRefused(await next([set('sys.phase', '0')]), 'sys.phase: must be 1 or 2');
    await expectRefused(
      await next([{ type: 'delete', key: 'sys.minter' }]),
      'sys.minter: sys.* keys can never be deleted',
    );
    await expectRefused(
      await next([set('sys.network_id', '"another-net"')]),
      'sys.network_id: the network id cannot change',
    );
    // One bad op spoils the whole block.
    await expectRefused(
      await next([set('app/z', '1'), { type: 'delete', key: 'sys.faucet' }]),
      'sys.faucet: sys.* keys can never be deleted',
    );
    const unreadable = await post('{"index": 2, "prev_hash": "00"');
    expect(unreadable.status).toBe(400);
    expect(unreadable.body).toEqual({ error: expect.stringMatching(/^invalid request body/) });
  });

  it('state changes take effect: a new minter mints; a deleted key is gone', async () => {
    const newMinter = new Account(kit);
    const mint = () => newMinter.build({ type: 'mint', asset: 'XUSD', amount: 9n * XE, balance: 9n * XE });
    const refused = await submit(kit, mint());
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: 'block rejected: account is not a minter (sys.minter)',
      retryable: false,
    });
    const r = await post(
      await next([
        set('sys.minter', stringifyJson({ keys: [t.keys.minter.address, newMinter.address] })),
        { type: 'delete', key: 'app/config/motd' },
      ]),
    );
    expect(r.status, r.text).toBe(201);
    await newMinter.commit(mint());
    expect((await http(kit.url, 'GET', `/accounts/${newMinter.address}/balance`)).body).toEqual({
      XUSD: '9000000',
    });
    expect((await http(kit.url, 'GET', '/statechain/kv/app/config/motd')).status).toBe(404);
  });

  const rotated = [randomSeed(), randomSeed()];

  it('rotates the DAO keyset: the rotating block is signed by the old keyset, the next by the new', async () => {
    const keys = rotated.map((s) => keyPairFromSeed(s).pub_key);
    const rotate = await next([set('sys.dao_keyset', stringifyJson({ keys, threshold: 2 }))]);
    expect((await post(rotate)).status).toBe(201);
    expect((await http(kit.url, 'GET', '/statechain/keyset')).body).toEqual({ keys, threshold: 2 });
    await expectRefused(
      await next([set('app/after', '1')]),
      /^block rejected: signer [0-9a-f]{64} is not in the keyset$/,
    );
    const r = await post(await next([set('app/after', '1')], rotated));
    expect(r.status, r.text).toBe(201);
    expect((await tip()).index).toBe(4);
  });

  it('pages blocks: 20 by default, start and limit', async () => {
    for (let i = 0; i < 20; i++)
      expect((await post(await next([set('app/count', String(i))], rotated))).status).toBe(201);
    const indexes = async (q: string) =>
      ((await http(kit.url, 'GET', `/statechain/blocks${q}`)).body as { index: number }[]).map(
        (b) => b.index,
      );
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
    expect(await indexes('')).toEqual(range(0, 20));
    expect(await indexes('?start=20')).toEqual(range(20, 25));
    expect(await indexes('?start=3&limit=2')).toEqual([3, 4]);
    expect((await http(kit.url, 'GET', '/statechain/blocks?limit=0')).status).toBe(400);
    expect((await http(kit.url, 'GET', '/statechain/kv/app/count')).text).toBe(
      '{"key":"app/count","value":19}',
    );
  });
});
