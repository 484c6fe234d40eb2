import { ChatApi, type ChatEvent } from '../../../node-core/client/chat.ts';
import { chatEnvelopeIdBytes, chatEnvelopeId } from '../../../node-core/protocol/payloads.ts';
import { api, errorMessage, isNodeError } from '../api.ts';
import { desktopBridge } from '../bridge.ts';
import { keystore } from '../keystore/index.ts';
import { powEngine } from '../pow/engine.ts';
import { chatState, type UiMessage } from './state.ts';

/**
 * Chat for the window's accounts: sending (envelope, proof of work, signature), retrying, the
 * ownership proofs the reads need, the event stream of each account, and the directory
 * registration that makes an account reachable (renewed before its 30-minute TTL runs out).
 */

let chatApiInstance: ChatApi | undefined;
export function chatApi(): ChatApi {
  chatApiInstance ??= new ChatApi(api());
  return chatApiInstance;
}

/** The ownership proof's query for one of the keystore's accounts. */
export function prover(address: string) {
  const key = keystore().publicKeyOf(address);
  return (challenge: string) =>
    `account=${key}&pub_key=${key}&challenge=${challenge}&sig=${keystore().signChatReadAuth(address, challenge)}`;
}

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** What to show for a send the node refused or could not take. */
export function sendError(e: unknown): string {
  if (isNodeError(e) && e.status === 404)
    return 'Not reachable: that account is not registered with any node. They must open their app.';
  return errorMessage(e);
}

/** Sends a message from one of the accounts to a public key; its progress shows in the chat state. */
export async function sendMessage(address: string, to: string, text: string): Promise<void> {
  const from = keystore().publicKeyOf(address);
  const env = { from, to, message: text, timestamp: nowNs() };
  const id = chatEnvelopeId(env);
  const state = chatState();
  const base: UiMessage = {
    id,
    from,
    to,
    message: text,
    timestamp: env.timestamp,
    status: 'sending',
    stored: false,
  };
  state.local(from, base);
  try {
    const difficulty = (await api().node()).chat_pow_difficulty;
    const pow_nonce =
      difficulty === 0n
        ? undefined
        : await powEngine(desktopBridge()).solve(chatEnvelopeIdBytes(env), difficulty);
    const signed = keystore().signChat(address, env);
    const answer = await chatApi().send({ ...signed, ...(pow_nonce !== undefined ? { pow_nonce } : {}) });
    state.local(from, {
      ...base,
      stored: true,
      status:
        answer.delivery === 'delivered'
          ? 'delivered'
          : answer.delivery === 'queued'
            ? 'queued'
            : answer.delivery === 'failed'
              ? 'failed'
              : 'sent',
      ...(answer.error !== undefined && answer.delivery !== 'delivered' ? { error: answer.error } : {}),
    });
  } catch (e) {
    state.local(from, { ...base, status: 'failed', error: sendError(e) });
  }
}

/** Tries a failed message again: the node's outbox when it holds it, else a new send. */
export async function retryMessage(address: string, m: UiMessage): Promise<void> {
  const state = chatState();
  if (!m.stored) {
    state.local(m.from, { ...m, status: 'sending' });
    // Re-signed with a new time: the node refuses a timestamp more than 5 minutes old.
    await sendMessage(address, m.to, m.message);
    return;
  }
  state.local(m.from, { ...m, status: 'sending' });
  try {
    const a = await chatApi().retry(m.id, prover(address));
    state.local(m.from, {
      ...m,
      status: a.delivery === 'delivered' ? 'delivered' : a.delivery === 'failed' ? 'failed' : 'queued',
      ...(a.error !== undefined ? { error: a.error } : {}),
    });
  } catch (e) {
    state.local(m.from, { ...m, status: 'failed', error: errorMessage(e) });
  }
}

/** Registers each account with the node this window talks to (so others can reach it). */
export async function registerAccounts(addresses: readonly string[]): Promise<void> {
  const nodePeer = (await api().node()).id;
  for (const address of addresses) {
    const reg = keystore().signRegistration(address, nodePeer, nowNs());
    await chatApi().register({ ...reg, signature: reg.signature });
  }
}

/**
 * Follows one account's event stream until `signal` aborts: the whole stored history first (resume
 * from 0), then live; reconnects with backoff and a fresh proof, resuming after the last id seen,
 * so nothing is missed or shown twice. `onIncoming` hears each new message to the account.
 */
export async function followAccount(
  address: string,
  signal: AbortSignal,
  onIncoming: (m: UiMessage) => void,
): Promise<void> {
  const key = keystore().publicKeyOf(address);
  const state = chatState();
  // Messages sent before the window followed the account are history, not news to notify.
  const news = nowNs() - 2_000_000_000n;
  let last = '0';
  let delay = 1_000;
  while (!signal.aborted) {
    const connectedAt = Date.now();
    try {
      const onEvent = (e: ChatEvent) => {
        if (e.kind === 'message') {
          const fresh = !state.has(key, e.message.id);
          state.put(key, e.message);
          if (fresh && e.message.to === key && e.message.from !== key && e.message.timestamp > news) {
            const held = state.message(key, e.message.id);
            if (held) onIncoming(held);
          }
        } else if (e.kind === 'delivery') {
          state.delivery(key, e.id, e.delivery);
        }
      };
      // The delivery states of recent messages (the replay carries the messages, not their states).
      void chatApi()
        .messages(prover(address), { limit: 200 })
        .then((page) => page.messages.forEach((m) => m.delivery && state.delivery(key, m.id, m.delivery)))
        .catch(() => {});
      const resumeFrom = last;
      const ended = await chatApi().stream(
        prover(address),
        (e) => {
          onEvent(e);
          if (e.kind === 'message') last = e.id;
        },
        { lastEventId: resumeFrom, signal },
      );
      if (ended !== undefined) last = ended;
    } catch {
      if (signal.aborted) return;
    }
    // A stream that lived a while reconnects at once; one that failed fast backs off.
    delay = Date.now() - connectedAt > 10_000 ? 1_000 : Math.min(delay * 2, 30_000);
    await new Promise((r) => setTimeout(r, delay));
  }
}
