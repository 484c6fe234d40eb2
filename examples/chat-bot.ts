/**
 * A chat bot that answers: it registers its account with the node, follows the account's event
 * stream (reconnecting with a fresh ownership proof) and replies to each new message: "ping" gets
 * "pong", "time" the node-independent UTC time, anything else is echoed back.
 *
 *   LEDGER_SEED=<64 hex> node chat-bot.ts
 *
 * LEDGER_NODE_URL (default http://127.0.0.1:8080), LEDGER_SEED (the bot account's seed, hex),
 * MAX_REPLIES (stop after that many; default: until Ctrl-C).
 */
import { ChatApi, LedgerClient } from 'ledger-node-desktop/client';
import { createPowEngine } from 'ledger-node-desktop/pow';
import {
  chatEnvelopeIdBytes,
  hexToBytes,
  keyPairFromSeed,
  signChatEnvelope,
  signChatReadAuth,
  signDirectoryRegistration,
} from 'ledger-node-desktop/protocol';

const url = process.env.LEDGER_NODE_URL ?? 'http://127.0.0.1:8080';
const seed = hexToBytes(process.env.LEDGER_SEED ?? '', 32, 'LEDGER_SEED');
const max = Number(process.env.MAX_REPLIES ?? 0);
const me = keyPairFromSeed(seed);
const nowNs = () => BigInt(Date.now()) * 1_000_000n;

const client = new LedgerClient(url);
const chat = new ChatApi(client);
const pow = createPowEngine();
const info = await client.node();
// Registered accounts can be written to; a registration lasts 30 minutes, so renew it every 20.
const register = () =>
  chat.register(
    signDirectoryRegistration({ account: me.pub_key, node_peer: info.id, timestamp: nowNs() }, seed),
  );
await register();
const renew = setInterval(() => void register().catch(() => {}), 20 * 60_000);
const prove = (challenge: string) =>
  `account=${me.pub_key}&pub_key=${me.pub_key}&challenge=${challenge}&sig=${signChatReadAuth(challenge, seed)}`;

function answer(text: string): string {
  const t = text.trim().toLowerCase();
  if (t === 'ping') return 'pong';
  if (t === 'time') return new Date().toISOString();
  return `you said: ${text}`;
}

async function reply(to: string, text: string): Promise<void> {
  const env = signChatEnvelope({ from: me.pub_key, to, message: text, timestamp: nowNs() }, seed);
  const difficulty = info.chat_pow_difficulty;
  const nonce = difficulty === 0n ? 0n : await pow.solve(chatEnvelopeIdBytes(env), difficulty);
  const sent = await chat.send({ ...env, pow_nonce: nonce });
  console.log(`replied "${text}" to ${to.slice(0, 12)} (${sent.delivery})`);
}

const started = nowNs();
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
let replies = 0;
let last: string | undefined;
console.log(`chat bot ${me.pub_key} listening on ${url}`);
while (!stop.signal.aborted) {
  try {
    const queue: Promise<void>[] = [];
    last = await chat.stream(
      prove,
      (e) => {
        // Only messages to the bot that arrived after it started (the stream replays stored ones).
        if (e.kind !== 'message' || e.message.to !== me.pub_key || e.message.timestamp < started) return;
        console.log(`from ${e.message.from.slice(0, 12)}: ${e.message.message}`);
        queue.push(
          reply(e.message.from, answer(e.message.message)).then(() => {
            if (max !== 0 && ++replies >= max) stop.abort();
          }),
        );
      },
      { ...(last ? { lastEventId: last } : {}), signal: stop.signal },
    );
    await Promise.all(queue);
  } catch (e) {
    if (stop.signal.aborted) break;
    console.error(`stream ended (${(e as Error).message}); reconnecting in 1 s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
clearInterval(renew);
await pow.close();
