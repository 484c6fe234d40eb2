import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { generateKeyPair, type KeyPair } from '../../node-core/protocol/keys.ts';
import {
  type ChatEnvelope,
  chatEnvelopeIdBytes,
  signChatEnvelope,
  signDirectoryRegistration,
} from '../../node-core/protocol/payloads.ts';
import { powValid } from '../../node-core/protocol/pow.ts';
import { http, nowNs } from '../helpers/ledger-kit.ts';
import { startTestNode, type TestNode, waitFor } from '../helpers/node.ts';
import { P2P } from '../helpers/p2p.ts';

/**
 * Chat retention on a running node (issue #13): at most a count of messages per account, the
 * oldest going first as new ones arrive, and none older than the age, pruned by the node's timer.
 */
describe('chat retention on a node', () => {
  let t: TestNode;
  const [alice, bob] = [generateKeyPair(), generateKeyPair()];

  function envelope(from: KeyPair, to: KeyPair, message: string) {
    const env: ChatEnvelope = { from: from.pub_key, to: to.pub_key, message, timestamp: nowNs() };
    const id = chatEnvelopeIdBytes(env);
    let nonce = 0n;
    while (!powValid(id, nonce, t.node.statechain.pow.chat)) nonce += 1n;
    return { ...signChatEnvelope(env, hexToBytes(from.seed_hex)), pow_nonce: nonce };
  }

  beforeAll(async () => {
    t = await startTestNode({
      ...P2P,
      chat: { retention: { maxPerAccount: 3, maxAgeNs: 3_000_000_000n }, pruneEveryMs: 250 },
    });
    for (const k of [alice, bob]) {
      const reg = signDirectoryRegistration(
        { account: k.pub_key, node_peer: t.node.nodeId, timestamp: nowNs() },
        hexToBytes(k.seed_hex),
      );
      expect((await http(t.node.url, 'POST', '/directory/register', reg)).status).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('keeps the newest messages up to the count, then prunes them by age', async () => {
    for (let i = 1; i <= 5; i++)
      expect((await http(t.node.url, 'POST', '/chat/send', envelope(alice, bob, `m${i}`))).status).toBe(200);
    const page = t.node.chatStore.list(bob.pub_key);
    expect(page.total).toBe(3);
    expect(page.messages.map((m) => m.message)).toEqual(['m5', 'm4', 'm3']);
    await waitFor(() => t.node.chatStore.list(bob.pub_key).total === 0, 8_000, 'pruning by age');
    expect(t.node.chatStore.accounts()).toEqual([]);
  });
});
