import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JsonValue, parseJson } from '../../node-core/protocol/json.ts';
import { generateKeyPair, type KeyPair } from '../../node-core/protocol/keys.ts';
import { chatEnvelope, chatProof, registerAccount } from '../helpers/chat-kit.ts';
import { http, nowNs } from '../helpers/ledger-kit.ts';
import { startTestNode, tempDir, type TestNode, waitFor } from '../helpers/node.ts';
import { listenAddr, P2P, peerCount } from '../helpers/p2p.ts';

/**
 * Chat between nodes (issue #13; reference-behavior.md 7.1): a message to an account registered on
 * another node goes there over libp2p (`account_chat`) and is acknowledged; the sender's node keeps
 * its copy with the delivery's state. Unlike the reference (no retry, no store-and-forward), a
 * message sent while the recipient's node is down waits in a persistent outbox and arrives when
 * that node is back, across a restart of the sender's node too. The libp2p door checks an envelope
 * as the HTTP door does (H-03).
 */

type Json = Record<string, JsonValue>;

interface Frame {
  id?: string;
  event: string;
  data: Json;
}

/** A chat event stream read with fetch: frames as they arrive, until closed. */
async function openEvents(url: string, query: string) {
  const ctl = new AbortController();
  const res = await fetch(`${url}/chat/events?${query}`, { signal: ctl.signal });
  expect(res.status).toBe(200);
  const frames: Frame[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const f: Partial<Frame> & { data?: Json } = { event: 'message' };
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) f.id = line.slice(4);
            else if (line.startsWith('event: ')) f.event = line.slice(7);
            else if (line.startsWith('data: ')) f.data = parseJson(line.slice(6)) as Json;
          }
          if (f.data) frames.push(f as Frame);
        }
      }
    } catch {
      // closed by the test
    }
  })();
  return { frames, close: () => ctl.abort() };
}

describe('chat between two nodes', () => {
  const dirA = tempDir('chat-net-a-');
  const dirB = tempDir('chat-net-b-');
  let a: TestNode;
  let b: TestNode | undefined;
  const [alice, bob] = [generateKeyPair(), generateKeyPair()];
  /** Where each account is registered. */
  const home = new Map<KeyPair, () => TestNode>([
    [alice, () => a],
    [bob, () => b!],
  ]);

  async function startA(): Promise<void> {
    a = await startTestNode({
      ...P2P,
      dataDir: dirA,
      chat: { outbox: { backoffMs: 200, maxBackoffMs: 1_000 } },
    });
  }

  async function startB(): Promise<void> {
    b = await startTestNode({
      ...P2P,
      dataDir: dirB,
      genesisDir: join(dirA, 'genesis'),
      dial: [await listenAddr(a)],
      chat: { outbox: { backoffMs: 200, maxBackoffMs: 1_000 } },
    });
    await waitFor(async () => (await peerCount(a)) >= 1, 15_000, 'B connected to A');
  }

  /** Registers `k` on its home node; waits until both nodes' directories know it. */
  async function register(k: KeyPair): Promise<void> {
    const node = home.get(k)!();
    expect((await registerAccount(node.node.url, k, node.node.nodeId)).status).toBe(200);
    // Gossip has no pull: a registration published before the mesh formed is lost, and the owner
    // renews it (the window every 20 minutes; here every 2 s) until the other node has it.
    const started = Date.now();
    let renewed = Date.now();
    for (;;) {
      if ([a, b!].every((t) => t.node.directory.lookup(k.pub_key)?.node_peer === node.node.nodeId)) return;
      if (Date.now() - started > 20_000) throw new Error('timed out waiting for the registration gossip');
      if (Date.now() - renewed > 2_000) {
        renewed = Date.now();
        await registerAccount(node.node.url, k, node.node.nodeId);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const envelope = (from: KeyPair, to: KeyPair, message: string, timestamp = nowNs()) =>
    chatEnvelope(from, to, message, { timestamp, difficulty: a.node.statechain.pow.chat });

  const proof = (t: TestNode, k: KeyPair) => chatProof(t.node.url, k);

  async function messages(t: TestNode, k: KeyPair): Promise<Json[]> {
    const r = await http(t.node.url, 'GET', `/chat/messages?${await proof(t, k)}`);
    expect(r.status).toBe(200);
    return r.body as Json[];
  }

  const send = (t: TestNode, body: unknown) => http(t.node.url, 'POST', '/chat/send', body);

  beforeAll(async () => {
    await startA();
    await startB();
    await register(alice);
    await register(bob);
  }, 90_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('delivers both ways through the directory, acknowledged, and keeps the sender a copy', async () => {
    const bobEvents = await openEvents(b!.node.url, await proof(b!, bob));
    try {
      const toBob = envelope(alice, bob, 'hello bob, from node A');
      const r = await send(a, toBob);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ ok: true, delivery: 'delivered' });
      const id = (r.body as Json).id as string;
      // On B: stored, readable by Bob, streamed live.
      expect(b!.node.chatStore.has(id)).toBe(true);
      await waitFor(() => bobEvents.frames.some((f) => f.data.id === id), 5_000, "the event on B's stream");
      expect((await messages(b!, bob)).map((m) => m.message)).toEqual(['hello bob, from node A']);
      // On A: Alice's copy, delivered.
      const mine = await messages(a, alice);
      expect(mine[0]).toMatchObject({ id, delivery: { state: 'delivered', attempts: 1 } });
      // And back.
      const back = await send(b!, envelope(bob, alice, 'hi alice, from node B'));
      expect(back.body).toMatchObject({ ok: true, delivery: 'delivered' });
      expect((await messages(a, alice)).map((m) => m.message)).toEqual([
        'hi alice, from node B',
        'hello bob, from node A',
      ]);
      // A repeat of the same envelope is a duplicate at the sender; B still holds one copy.
      expect((await send(a, toBob)).body).toMatchObject({ error: 'duplicate envelope' });
      expect(b!.node.chatStore.list(bob.pub_key).total).toBe(2);
    } finally {
      bobEvents.close();
    }
  });

  it('refuses at the libp2p door what the HTTP door refuses, storing nothing', async () => {
    const peerB = b!.node.nodeId;
    const good = envelope(alice, bob, 'checked at both doors');
    const before = b!.node.chatStore.list(bob.pub_key).total;
    const bad: [string, unknown, RegExp][] = [
      ['forged signature', { ...good, signature: 'ab'.repeat(64) }, /signature does not verify/],
      ['wrong id', { ...good, id: 'cd'.repeat(32) }, /id does not match/],
      ['no proof of work', { ...good, pow_nonce: undefined }, /proof of work|signature/],
      ['too big', { ...good, message: 'x'.repeat(8193) }, /exceeds maximum length/],
      ['from the future', envelope(alice, bob, 'later', nowNs() + 600_000_000_000n), /delivery window/],
    ];
    for (const [what, payload, msg] of bad) {
      if (what === 'no proof of work' && a.node.statechain.pow.chat === 0n) continue;
      await expect(a.node.p2p!.request(peerB, 'account_chat', payload), what).rejects.toThrow(msg);
    }
    // A recipient the directory places on another node is not taken here.
    await expect(
      a.node.p2p!.request(peerB, 'account_chat', envelope(bob, alice, 'wrong node')),
    ).rejects.toThrow(/not registered on this node/);
    expect(b!.node.chatStore.list(bob.pub_key).total).toBe(before);
    // A message that waited in an outbox (an hour old) is taken: the window reaches back for it.
    const late = envelope(alice, bob, 'waited an hour', nowNs() - 3_600_000_000_000n);
    await expect(a.node.p2p!.request(peerB, 'account_chat', late)).resolves.toEqual({ ok: true });
    // The same again is acknowledged (the sender may have lost the first answer), stored once.
    await expect(a.node.p2p!.request(peerB, 'account_chat', late)).resolves.toEqual({
      ok: true,
      duplicate: true,
    });
    expect(b!.node.chatStore.list(bob.pub_key).total).toBe(before + 1);
  });

  it('keeps a message for an offline node in the outbox, across a restart of both, until it arrives', async () => {
    await b!.stop({ keepData: true });
    b = undefined;
    await waitFor(async () => (await peerCount(a)) === 0, 10_000, 'B gone');
    const aliceEvents = await openEvents(a.node.url, await proof(a, alice));
    const env = envelope(alice, bob, 'sent while your node was down');
    let id: string;
    try {
      const r = await send(a, env);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ ok: true, delivery: 'queued' });
      id = (r.body as Json).id as string;
      expect(a.node.chatOutbox.pending).toBe(1);
      // Retried with backoff, each attempt reported on the sender's stream.
      await waitFor(
        () => aliceEvents.frames.filter((f) => f.event === 'delivery' && f.data.id === id).length >= 2,
        10_000,
        'delivery events',
      );
      const mine = (await messages(a, alice)).find((m) => m.id === id)!;
      expect(mine.delivery).toMatchObject({ state: 'pending' });
      expect((mine.delivery as Json).error).toMatch(/not connected/);
    } finally {
      aliceEvents.close();
    }
    // The sender's node restarts too: the outbox is on disk.
    await a.stop({ keepData: true });
    await startA();
    expect(a.node.chatOutbox.pending).toBe(1);
    home.set(alice, () => a);
    await startB();
    // The directory is kept in memory: A learns Bob's node again from his next registration.
    await register(bob);
    await waitFor(() => b!.node.chatStore.has(id), 20_000, 'the message on B');
    await waitFor(() => a.node.chatStore.delivery(id)?.state === 'delivered', 5_000, 'delivered on A');
    expect(a.node.chatOutbox.pending).toBe(0);
    expect((await messages(b!, bob)).map((m) => m.message)).toContain('sent while your node was down');
    // A replay of the sender's stream tells where the message stands now.
    const replay = await openEvents(a.node.url, `${await proof(a, alice)}&last_event_id=0`);
    try {
      await waitFor(() => replay.frames.some((f) => f.data.id === id), 5_000, 'the replay');
      const frame = replay.frames.find((f) => f.event === 'message' && f.data.id === id)!;
      expect(frame.data.delivery).toMatchObject({ state: 'delivered' });
    } finally {
      replay.close();
    }
  }, 90_000);

  it('fails a message out of time, and a retry delivers it', async () => {
    await b!.stop({ keepData: true });
    b = undefined;
    await waitFor(async () => (await peerCount(a)) === 0, 10_000, 'B gone');
    // An outbox that gives up at once: the first attempt fails for good.
    a.node.chatOutbox.options.maxAgeNs = 0n;
    const r = await send(a, envelope(alice, bob, 'given up, then retried'));
    expect(r.body).toMatchObject({ ok: true, delivery: 'failed' });
    const id = (r.body as Json).id as string;
    expect(a.node.chatStore.delivery(id)).toMatchObject({ state: 'failed' });
    a.node.chatOutbox.options.maxAgeNs = 7n * 24n * 3_600_000_000_000n;
    // Only the sender may retry, only a failed message.
    const byBob = await http(a.node.url, 'POST', `/chat/messages/${id}/retry?${await proof(a, bob)}`);
    expect(byBob.status).toBe(404);
    await startB();
    await register(bob);
    const retry = await http(a.node.url, 'POST', `/chat/messages/${id}/retry?${await proof(a, alice)}`);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ ok: true, id, delivery: 'delivered' });
    expect(b!.node.chatStore.has(id)).toBe(true);
    const again = await http(a.node.url, 'POST', `/chat/messages/${id}/retry?${await proof(a, alice)}`);
    expect(again.status).toBe(409);
    expect((again.body as Json).error).toMatch(/delivered, not failed/);
  }, 60_000);
});
