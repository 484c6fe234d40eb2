import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Block } from '../../node-core/protocol/block.ts';
import { blockToJson } from '../../node-core/protocol/block-json.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { parseJson, stringifyJson } from '../../node-core/protocol/json.ts';
import { powHash } from '../../node-core/protocol/pow.ts';
import { Account, http, type Kit, kitOf, snapshot, submit, XE } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

/** Block submission and lookup: POST /blocks/{type}, GET /blocks/{hash}, GET /blocks/recent. */
describe('HTTP API: blocks', () => {
  let t: TestNode;
  let kit: Kit;

  beforeAll(async () => {
    t = await startTestNode();
    kit = await kitOf(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers 201 with the block echoed: amounts as strings, timestamp and pow_nonce as bare integers', async () => {
    const a = new Account(kit);
    let claim = a.claimBlock(12n * XE);
    // A nonce above 2^53, to see it come back with every digit.
    const big = 0xfedcba9876543210n;
    expect(powHash(hexToBytes(claim.hash!), big) >= kit.difficulty).toBe(true);
    claim = { ...claim, pow_nonce: big };
    const r = await submit(kit, claim);
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.text).toContain('"balance":"12000000"');
    expect(r.text).toContain('"amount":"12000000"');
    expect(r.text).toContain(`"timestamp":${claim.timestamp},`);
    expect(r.text).toContain(`"pow_nonce":${big}`);
    expect(r.body).toEqual(parseJson(stringifyJson(blockToJson(claim, 'node'))));
    a.advance(claim);
    const stored = await http(kit.url, 'GET', `/blocks/${claim.hash}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      hash: claim.hash,
      type: 'claim',
      balance: '12000000',
      pow_nonce: big,
    });
  });

  it('accepts 64-bit fields as bare or quoted digits, and a body without "type" (the path names it)', async () => {
    const a = new Account(kit);
    const claim = a.claimBlock(3n * XE);
    const json = blockToJson(claim, 'node') as Record<string, unknown>;
    const body: Record<string, unknown> = {
      ...json,
      balance: claim.balance,
      amount: claim.amount,
      timestamp: String(claim.timestamp),
    };
    delete body.type;
    const r = await http(kit.url, 'POST', '/blocks/claim', body);
    expect(r.status, r.text).toBe(201);
    expect((r.body as { type: string }).type).toBe('claim');
  });

  it('answers every deterministic refusal of a block {error, retryable: false} with 400, whatever layer finds it (#14)', async () => {
    const a = new Account(kit);
    await a.claim(10n * XE);
    const b = new Account(kit);
    const before = await snapshot(kit);
    const send = a.sendBlock(b.address, XE);
    const json = (blk: Block) => blockToJson(blk, 'node') as Record<string, unknown>;
    const cases: [string, string, unknown][] = [
      ['memo over 64 bytes', 'send', { ...json(send), memo: 'm'.repeat(65) }],
      ['memo on a claim', 'claim', { ...json(a.claimBlock(XE)), memo: 'hello' }],
      ['type mismatch', 'send', json(a.claimBlock(XE))],
      ['schema: balance missing', 'send', { ...json(send), balance: undefined }],
      ['schema: wrong type', 'send', { ...json(send), destination: 42 }],
      ['not JSON', 'send', '{"type": "send",'],
      ['not an object', 'send', '[1, 2]'],
      ['bad signature', 'send', { ...json(send), signature: 'ab'.repeat(64) }],
    ];
    for (const [what, type, body] of cases) {
      const r = await http(kit.url, 'POST', `/blocks/${type}`, body);
      expect({ what, status: r.status }).toEqual({ what, status: 400 });
      expect(r.body, what).toEqual({ error: expect.any(String), retryable: false });
    }
    expect(await snapshot(kit)).toEqual(before);
  });

  it('refuses a body whose type differs from the path (400 "block type mismatch")', async () => {
    const a = new Account(kit);
    const claim = a.claimBlock(XE);
    const before = await snapshot(kit);
    const r = await submit(kit, claim, 'send');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'block type mismatch', retryable: false });
    expect(await snapshot(kit)).toEqual(before);
  });

  it('refuses 64-bit fields not written as plain digits, bare or quoted: 400, retryable false, nothing stored', async () => {
    const a = new Account(kit);
    const claim = a.claimBlock(1000n);
    const text = stringifyJson(blockToJson(claim, 'node'));
    // Each form is swapped into the otherwise valid body's text, as a client would send it.
    const forms = ['1.0', '1e3', '1E+3', '-0', '1000.0', '"1000.0"', '"1e3"', '"-0"', '"+1000"', '"01000"'];
    // field, the text it replaces, its replacement (the node form always writes pow_nonce).
    const fields: [string, string, (form: string) => string][] = [
      ['amount', '"amount":"1000"', (f) => `"amount":${f}`],
      ['balance', '"balance":"1000"', (f) => `"balance":${f}`],
      ['timestamp', `"timestamp":${claim.timestamp}`, (f) => `"timestamp":${f}`],
      ['pow_nonce', `"pow_nonce":${claim.pow_nonce ?? 0}`, (f) => `"pow_nonce":${f}`],
    ];
    const before = await snapshot(kit);
    for (const [field, original, replacement] of fields) {
      expect(text).toContain(original);
      for (const form of [...forms, '18446744073709551616', '"18446744073709551616"']) {
        const body = text.replace(original, replacement(form));
        const r = await http(kit.url, 'POST', '/blocks/claim', body);
        expect({ status: r.status, body: r.body }, body).toEqual({
          status: 400,
          body: {
            error: expect.stringMatching(new RegExp(`^invalid request body: ${field}: `)),
            retryable: false,
          },
        });
      }
    }
    expect(await snapshot(kit)).toEqual(before);
    expect((await http(kit.url, 'GET', `/blocks/${claim.hash}`)).status).toBe(404);
    // The same block written with plain digits is accepted.
    expect((await submit(kit, claim)).status).toBe(201);
  });

  it('refuses unreadable bodies with 400 JSON errors, retryable false', async () => {
    // Whatever layer finds it (the body parser included), a refused block is final (#14).
    const cases: [unknown, string | RegExp, boolean?][] = [
      ['{"type": "claim",', 'invalid request body', false],
      ['[1, 2]', 'invalid request body: a block must be a JSON object', false],
      ['"claim"', 'invalid request body: a block must be a JSON object', false],
      [{ type: 'claim' }, /^invalid request body: /, false],
      ['{"balance": 1e400}', 'invalid request body', false],
    ];
    for (const [body, error, retryable] of cases) {
      const r = await http(kit.url, 'POST', '/blocks/claim', body);
      expect(r.status, String(body)).toBe(400);
      expect((r.body as { retryable?: boolean }).retryable).toBe(retryable);
      if (typeof error === 'string') expect((r.body as { error: string }).error).toBe(error);
      else expect((r.body as { error: string }).error).toMatch(error);
    }
    const empty = await http(kit.url, 'POST', '/blocks/claim', '');
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ error: 'invalid request body', retryable: false });
  });

  it('GET /blocks/{hash}: 404 "block not found" for an unknown hash, 400 for a malformed one', async () => {
    const nf = await http(kit.url, 'GET', `/blocks/${'ab'.repeat(32)}`);
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ error: 'block not found' });
    const bad = await http(kit.url, 'GET', '/blocks/1234');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body as object)).toEqual(['error']);
  });

  it('GET /blocks/recent: newest first, limit, since (strictly later), a non-numeric since is 400', async () => {
    const a = new Account(kit);
    const made: Block[] = [];
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 2)); // distinct millisecond timestamps
      made.push(await a.claim(XE));
    }
    const recent = await http(kit.url, 'GET', '/blocks/recent?limit=3');
    expect(recent.status).toBe(200);
    expect((recent.body as { hash: string }[]).map((b) => b.hash)).toEqual(
      made
        .slice(1)
        .reverse()
        .map((b) => b.hash),
    );
    expect((recent.body as { finalized: unknown }[]).every((b) => typeof b.finalized === 'boolean')).toBe(
      true,
    );

    const since = await http(kit.url, 'GET', `/blocks/recent?since=${made[1]!.timestamp}`);
    expect((since.body as { hash: string }[]).map((b) => b.hash)).toEqual([made[3]!.hash, made[2]!.hash]);
    const all = (await http(kit.url, 'GET', '/blocks/recent')).body as { timestamp: bigint | number }[];
    expect(all.length).toBeGreaterThanOrEqual(6);
    const ts = all.map((b) => BigInt(b.timestamp));
    expect([...ts].sort((x, y) => (x < y ? 1 : x > y ? -1 : 0))).toEqual(ts);

    for (const q of ['since=abc', 'since=1.5', 'limit=0', 'limit=abc']) {
      const r = await http(kit.url, 'GET', `/blocks/recent?${q}`);
      expect(r.status, q).toBe(400);
      expect(Object.keys(r.body as object)).toEqual(['error']);
    }
    expect(((await http(kit.url, 'GET', '/blocks/recent?since=abc')).body as { error: string }).error).toBe(
      "invalid query parameter 'since': must be digits only",
    );
  });
});
