import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { chatEnvelopeId, signChatReadAuth } from '../../node-core/protocol/payloads.ts';
import { http, type HttpResult, nowNs } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { P2P } from '../helpers/p2p.ts';
import {
  type ChatEvents,
  chatEnvelope,
  chatProof,
  openChatEvents,
  registerAccount,
  type SignedChatEnvelope,
} from '../helpers/chat-kit.ts';

/**
 * Chat under the API's per-client rate limits (issue #13) on a node with the default limits (writes
 * 10/s burst 50, reads 200/s burst 1000): a flood of sends or of challenges from one client is cut
 * off with 429 and the node's error, and nothing a refused send carried is stored; an event stream
 * is one read when it opens, however many messages it then carries; the 8192-byte cap on a message
 * counts UTF-8 bytes, not characters (chat.test.ts covers a plain 8193-character refusal).
 *
 * Each test speaks as its own client through X-Forwarded-For (believed from loopback), so every
 * test starts with full buckets.
 */

const READ = { perSecond: 200, burst: 1000 };
const WRITE = { perSecond: 10, burst: 50 };
const LIMITED = { error: 'rate limit exceeded' };

describe('chat: rate limits and the message size cap', () => {
  let t: TestNode;
  let url: string;
  let difficulty: bigint;
  const [alice, bob] = [generateKeyPair(), generateKeyPair()];
  /** A fresh forwarded client per call: setup and controls never spend a test client's tokens. */
  let spare = 0;
  const other = () => ({ 'x-forwarded-for': `198.51.100.${++spare}` });

  /** Runs `one` up to `max` times, `concurrency` at a time, until 20 answers were 429. */
  async function flood(max: number, one: (i: number) => Promise<HttpResult>, concurrency: number) {
    const started = performance.now();
    const results: { i: number; r: HttpResult }[] = [];
    let sent = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < max && refused < 20) {
          const i = sent++;
          const r = await one(i);
          if (r.status === 429) refused++;
          results.push({ i, r });
        }
      }),
    );
    return { results, seconds: (performance.now() - started) / 1000 };
  }

  function expectLimited(limited: HttpResult[]): void {
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) {
      expect(r.body).toEqual(LIMITED);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  }

  /** The client's read tokens left, from the proxy form's RateLimit-Remaining (spends one read). */
  async function readsLeft(client: Record<string, string>): Promise<number> {
    const r = await http(url, 'GET', '/api/v1/chat/auth/challenge', undefined, client);
    expect(r.status).toBe(200);
    return Number(r.headers.get('ratelimit-remaining'));
  }

  beforeAll(async () => {
    t = await startTestNode({ ...P2P, rateLimit: true });
    url = t.node.url;
    difficulty = t.node.statechain.pow.chat;
    for (const k of [alice, bob])
      expect((await registerAccount(url, k, t.node.nodeId, other())).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('a flood of sends from one client: 429 after the write burst, and no refused envelope is stored', async () => {
    const client = { 'x-forwarded-for': '203.0.113.60' };
    const t0 = nowNs();
    const envs: SignedChatEnvelope[] = Array.from({ length: 300 }, (_, i) =>
      chatEnvelope(alice, bob, `flood ${i}`, { difficulty, timestamp: t0 + BigInt(i) }),
    );
    const before = t.node.chatStore.list(bob.pub_key).total;
    const { results, seconds } = await flood(
      envs.length,
      (i) => http(url, 'POST', '/chat/send', envs[i], client),
      16,
    );
    const limited = results.filter((x) => x.r.status === 429);
    const served = results.filter((x) => x.r.status !== 429);
    expectLimited(limited.map((x) => x.r));
    // Every request the limiter let through was a valid envelope, and was stored.
    for (const { r } of served)
      expect({ status: r.status, ok: (r.body as { ok?: boolean }).ok }).toEqual({ status: 200, ok: true });
    expect(served.length).toBeGreaterThanOrEqual(WRITE.burst);
    expect(served.length).toBeLessThanOrEqual(WRITE.burst + Math.ceil(WRITE.perSecond * seconds) + 1);
    for (const { i } of served) expect(t.node.chatStore.has(chatEnvelopeId(envs[i]!))).toBe(true);
    for (const { i } of limited)
      expect(t.node.chatStore.has(chatEnvelopeId(envs[i]!)), `refused #${i}`).toBe(false);
    expect(t.node.chatStore.list(bob.pub_key).total).toBe(before + served.length);
    // A refused envelope left no trace (not even as a duplicate): another client sends it as new.
    const again = envs[limited[0]!.i]!;
    const r = await http(url, 'POST', '/chat/send', again, other());
    expect(r.status).toBe(200);
    expect((r.body as { id: string }).id).toBe(chatEnvelopeId(again));
    // Reads are a class of their own: the flooding client still reads.
    expect((await http(url, 'GET', '/chat/auth/challenge', undefined, client)).status).toBe(200);
  });

  it('a flood of challenges from one client: 429 after the read burst; the ones served still prove', async () => {
    const client = { 'x-forwarded-for': '203.0.113.61' };
    const { results, seconds } = await flood(
      6000,
      () => http(url, 'GET', '/chat/auth/challenge', undefined, client),
      48,
    );
    const limited = results.filter((x) => x.r.status === 429).map((x) => x.r);
    const served = results.filter((x) => x.r.status !== 429).map((x) => x.r);
    expectLimited(limited);
    expect(served.length).toBeGreaterThanOrEqual(READ.burst);
    expect(served.length).toBeLessThanOrEqual(READ.burst + Math.ceil(READ.perSecond * seconds) + 1);
    for (const r of served) {
      expect(r.status).toBe(200);
      expect((r.body as { challenge: string }).challenge).toMatch(/^[0-9a-f]{112}$/);
    }
    // Every challenge served is distinct, and the last one served works (from another client).
    const challenges = served.map((r) => (r.body as { challenge: string }).challenge);
    expect(new Set(challenges).size).toBe(challenges.length);
    const last = challenges[challenges.length - 1]!;
    const sig = signChatReadAuth(last, hexToBytes(bob.seed_hex));
    const read = await http(
      url,
      'GET',
      `/chat/contacts?account=${bob.pub_key}&pub_key=${bob.pub_key}&challenge=${last}&sig=${sig}`,
      undefined,
      other(),
    );
    expect(read.status).toBe(200);
  });

  it('an event stream is one read when it opens, not one per message it carries', async () => {
    const client = { 'x-forwarded-for': '203.0.113.62' };
    const r0 = await readsLeft(client);
    expect(r0).toBe(READ.burst - 1);
    const opened = performance.now();
    const streams: ChatEvents[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await openChatEvents(url, await chatProof(url, bob, bob.pub_key, client), client);
      expect(s.status).toBe(200);
      streams.push(s);
    }
    try {
      // Three streams: a challenge and an open each, then the probe itself: 7 reads, plus refill.
      const r1 = await readsLeft(client);
      const refill1 = Math.ceil(READ.perSecond * ((performance.now() - opened) / 1000)) + 1;
      expect(r1).toBeLessThanOrEqual(r0 - 7 + refill1);
      expect(r1).toBeGreaterThanOrEqual(r0 - 7);
      // Many messages to bob, stored in-process (no HTTP client spends anything): each stream
      // carries all of them. Were each event a read, the client would lose more tokens than the
      // refill over the delivery gives back. In batches the streams drain between: a burst larger
      // than a stream's buffer (256 events) would close it with `event: overflow`, by design.
      const N = 600;
      const BATCH = 50;
      const base = streams[0]!.messages().length;
      const t0 = nowNs();
      const delivering = performance.now();
      for (let from = 0; from < N; from += BATCH) {
        await Promise.all(
          Array.from({ length: BATCH }, (_, j) =>
            t.node.chat.send(
              chatEnvelope(alice, bob, `event ${from + j}`, { difficulty, timestamp: t0 + BigInt(from + j) }),
            ),
          ),
        );
        for (const s of streams) await s.nthMessage(base + from + BATCH, 10_000);
      }
      const seconds = (performance.now() - delivering) / 1000;
      const r2 = await readsLeft(client);
      // The check means something only if per-event spending could not have been refilled meanwhile.
      expect(streams.length * N, `delivery took ${seconds.toFixed(2)} s`).toBeGreaterThan(
        Math.ceil(READ.perSecond * seconds) + 10,
      );
      expect(r2).toBeGreaterThanOrEqual(r1 - 1);
      for (const s of streams) {
        expect(s.ended()).toBe(false);
        expect(
          s
            .envelopes()
            .slice(base)
            .map((e) => e.message),
        ).toEqual(Array.from({ length: N }, (_, i) => `event ${i}`));
      }
    } finally {
      for (const s of streams) s.close();
    }
  });

  it('the 8192-byte cap counts UTF-8 bytes: 8192 bytes in two-byte characters pass, 8193 are refused', async () => {
    const before = t.node.chatStore.list(bob.pub_key).total;
    const fits = chatEnvelope(alice, bob, 'é'.repeat(4096), { difficulty }); // 4096 characters, 8192 bytes
    const ok = await http(url, 'POST', '/chat/send', fits, other());
    expect(ok.status).toBe(200);
    expect(t.node.chatStore.get(chatEnvelopeId(fits))?.message).toBe(fits.message);
    // 4097 characters, 8193 bytes; 2049 four-byte characters, 8196 bytes. An envelope over the cap
    // cannot be signed (its id is refused), so the text replaces that of a signed one: the size is
    // the first check, before the signature's.
    const signed = chatEnvelope(alice, bob, 'a signed text', { difficulty });
    for (const message of ['é'.repeat(4096) + 'x', '😀'.repeat(2049)]) {
      const r = await http(url, 'POST', '/chat/send', { ...signed, message }, other());
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'message exceeds maximum length of 8192 bytes' });
    }
    expect(t.node.chatStore.has(chatEnvelopeId(signed))).toBe(false);
    expect(t.node.chatStore.list(bob.pub_key).total).toBe(before + 1);
  });
});
