import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import type { JsonValue } from '../../node-core/protocol/json.ts';
import { generateKeyPair, type KeyPair } from '../../node-core/protocol/keys.ts';
import {
  type ChatEnvelope,
  chatEnvelopeIdBytes,
  signChatEnvelope,
  signChatReadAuth,
  signDirectoryRegistration,
} from '../../node-core/protocol/payloads.ts';
import { powValid } from '../../node-core/protocol/pow.ts';
import { http, nowNs } from '../helpers/ledger-kit.ts';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.ts';
import { P2P } from '../helpers/p2p.ts';

/**
 * Chat on one node (issue #13, first step; contract Chat and Authentication 3; D2, D15): a message
 * to a recipient registered on this node is checked and kept on disk; every malformed or forged one
 * is refused with a clear error and stores nothing; the reads need the ownership proof, whose
 * challenge is single-use, expires and belongs to the account it proves.
 */

type Json = Record<string, JsonValue>;
const SECOND = 1_000_000_000n;

describe('chat on one node', () => {
  const dataDir = tempDir('chat-');
  const clock = { offset: 0n };
  let t: TestNode;
  let url: string;
  const [alice, bob, carol] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];

  async function start(): Promise<void> {
    t = await startTestNode({ ...P2P, dataDir, now: () => nowNs() + clock.offset });
    url = t.node.url;
  }

  async function register(k: KeyPair): Promise<void> {
    const reg = signDirectoryRegistration(
      { account: k.pub_key, node_peer: t.node.nodeId, timestamp: nowNs() },
      hexToBytes(k.seed_hex),
    );
    expect((await http(url, 'POST', '/directory/register', reg)).status).toBe(200);
  }

  /** A signed envelope with its proof of work at the network's chat difficulty. */
  function envelope(from: KeyPair, to: KeyPair, message: string, timestamp = nowNs()) {
    const env: ChatEnvelope = { from: from.pub_key, to: to.pub_key, message, timestamp };
    const id = chatEnvelopeIdBytes(env);
    let nonce = 0n;
    while (!powValid(id, nonce, t.node.statechain.pow.chat)) nonce += 1n;
    return { ...signChatEnvelope(env, hexToBytes(from.seed_hex)), pow_nonce: nonce };
  }

  const send = (body: unknown) => http(url, 'POST', '/chat/send', body);

  async function proof(k: KeyPair, account = k.pub_key) {
    const { challenge } = (await http(url, 'GET', '/chat/auth/challenge')).body as { challenge: string };
    const sig = signChatReadAuth(challenge, hexToBytes(k.seed_hex));
    return `account=${account}&pub_key=${k.pub_key}&challenge=${challenge}&sig=${sig}`;
  }

  beforeAll(async () => {
    await start();
    await register(bob);
    await register(alice);
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('keeps a signed message for a recipient registered here, once', async () => {
    const env = envelope(alice, bob, 'hello bob');
    const r = await send(env);
    expect(r.status).toBe(200);
    expect((r.body as Json).ok).toBe(true);
    const id = (r.body as Json).id as string;
    expect(t.node.chatStore.has(id)).toBe(true);
    const again = await send(env);
    expect(again.status).toBe(400);
    expect((again.body as Json).error).toBe('duplicate envelope');
    expect(t.node.chatStore.list(bob.pub_key).total).toBe(1);
  });

  it('refuses malformed, forged and out-of-window envelopes, storing nothing', async () => {
    const before = t.node.chatStore.list(bob.pub_key).total;
    const good = envelope(alice, bob, 'a valid one');
    const cases: [string, unknown, number, RegExp][] = [
      ['no to', { ...good, to: undefined }, 400, /missing 'to'/],
      ['no signature', { ...good, signature: undefined }, 400, /signed envelope/],
      ['forged signature', { ...good, signature: 'ab'.repeat(64) }, 400, /signature does not verify/],
      ['changed text', { ...good, message: 'tampered' }, 400, /signature does not verify|proof of work/],
      ['wrong id', { ...good, id: 'cd'.repeat(32) }, 400, /id does not match/],
      ['too big', { ...good, message: 'x'.repeat(8193) }, 400, /exceeds maximum length of 8192 bytes/],
      ['stale', envelope(alice, bob, 'old', nowNs() - 400n * SECOND), 400, /5 minutes/],
      ['number timestamp', { ...good, timestamp: 1.5 }, 400, /^invalid envelope: timestamp: (?!timestamp)/],
      [
        'unregistered recipient',
        envelope(alice, carol, 'to nobody'),
        404,
        /recipient not found in directory/,
      ],
    ];
    for (const [what, body, status, msg] of cases) {
      const r = await send(body);
      expect({ what, status: r.status }).toEqual({ what, status });
      expect((r.body as Json).error, what).toMatch(msg);
    }
    expect(t.node.chatStore.list(bob.pub_key).total).toBe(before);
    expect(t.node.chatStore.list(carol.pub_key).total).toBe(0);
  });

  it('reads need the ownership proof: single use, bound to the account, expiring', async () => {
    await send(envelope(bob, alice, 'hi alice'));
    const q = await proof(bob);
    const r = await http(url, 'GET', `/chat/messages?${q}`);
    expect(r.status).toBe(200);
    const msgs = r.body as Json[];
    expect(msgs.map((m) => m.message)).toEqual(['hi alice', 'hello bob']); // newest first, both ways
    expect(msgs[0]).toMatchObject({ from: bob.pub_key, to: alice.pub_key });
    // The challenge is used up.
    const replay = await http(url, 'GET', `/chat/messages?${q}`);
    expect(replay.status).toBe(403);
    expect((replay.body as Json).error).toBe('challenge already used');
    // Alice's proof does not open Bob's messages; the address form of an account works (D2).
    expect((await http(url, 'GET', `/chat/messages?${await proof(alice, bob.pub_key)}`)).status).toBe(403);
    const byAddress = await http(url, 'GET', `/chat/messages?${await proof(bob, bob.address)}`);
    expect((byAddress.body as Json[]).length).toBe(2);
    expect((await http(url, 'GET', `/chat/messages?account=${bob.pub_key}`)).status).toBe(401);
    expect((await http(url, 'GET', '/chat/messages')).status).toBe(400);
    // since: only newer messages.
    const since = (msgs[1]!.timestamp as bigint).toString();
    const newer = await http(url, 'GET', `/chat/messages?${await proof(bob)}&since=${since}`);
    expect((newer.body as Json[]).map((m) => m.message)).toEqual(['hi alice']);
    // An expired challenge.
    const stale = await proof(bob);
    clock.offset = 121n * SECOND;
    try {
      const late = await http(url, 'GET', `/chat/messages?${stale}`);
      expect(late.status).toBe(403);
      expect((late.body as Json).error).toBe('challenge expired');
    } finally {
      clock.offset = 0n;
    }
  });

  it('contacts: per account with the proof, all accounts with the admin token', async () => {
    const mine = await http(url, 'GET', `/chat/contacts?${await proof(bob)}`);
    expect(mine.body).toEqual([alice.pub_key]);
    expect((await http(url, 'GET', '/chat/contacts')).status).toBe(401);
    const all = await http(url, 'GET', '/chat/contacts', undefined, {
      authorization: `Bearer ${t.node.adminToken}`,
    });
    expect(all.body).toEqual([alice.pub_key, bob.pub_key].sort());
  });

  it('keeps messages across a restart; challenges of the old process are void', async () => {
    const old = await proof(bob);
    await t.stop({ keepData: true });
    await start();
    await register(bob);
    const refused = await http(url, 'GET', `/chat/messages?${old}`);
    expect(refused.status).toBe(403);
    expect((refused.body as Json).error).toBe('challenge not issued by this node');
    const r = await http(url, 'GET', `/chat/messages?${await proof(bob)}`);
    expect((r.body as Json[]).map((m) => m.message)).toEqual(['hi alice', 'hello bob']);
  }, 60_000);
});
