/**
 * A process that stores chat messages one by one and reports each id once `put` resolved (the
 * durable acknowledgement); the crash test kills it with SIGKILL partway. argv: data dir, count.
 * Each is stored as a message for another node is, with its outbox entry.
 */
import { join } from 'node:path';
import { ChatStore } from '../../node-core/chat/chat-store.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { signChatEnvelope } from '../../node-core/protocol/payloads.ts';
import { Store } from '../../node-core/store/store.ts';

const [dir, count] = process.argv.slice(2);
const store = Store.open({ path: join(dir!, 'store.lmdb') });
const chat = new ChatStore({
  messages: store.chatMessages,
  index: store.chatIndex,
  deliveries: store.chatDelivery,
  transaction: (fn) => store.transaction(fn),
});
const a = generateKeyPair();
const b = generateKeyPair();
for (let i = 0; i < Number(count); i++) {
  const env = signChatEnvelope(
    { from: a.pub_key, to: b.pub_key, message: `m${i}`, timestamp: 1_790_000_000_000_000_000n + BigInt(i) },
    hexToBytes(a.seed_hex),
  );
  const now = BigInt(Date.now()) * 1_000_000n;
  const stored = await chat.put(env, now, { state: 'pending', attempts: 0, updated_at: now });
  if (stored) process.send?.({ id: stored.id });
}
await store.close();
