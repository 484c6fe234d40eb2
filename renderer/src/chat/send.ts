import { addressFromPublicKey } from '../../../node-core/protocol/keys.ts';
import { chatEnvelopeId, chatEnvelopeIdBytes } from '../../../node-core/protocol/payloads.ts';
import { isPowAbortedError } from '../../../node-core/protocol/pow.ts';
import { api } from '../api.ts';
import { desktopBridge } from '../bridge.ts';
import { short } from '../components/common.tsx';
import { keystore } from '../keystore/index.ts';
import { runPow } from '../pow/activity.ts';
import { powEngine } from '../pow/engine.ts';
import { chatApi, chatError, nowNs, prover } from './api.ts';
import { answerApplies, sendStatus, type UiMessage } from './conversations.ts';
import { chatState } from './state.ts';

/**
 * Sending a chat message from one of the wallet's accounts: the envelope, its proof of work in the
 * app's proof-of-work engine (a worker in a browser, the utility process in the desktop app; shown
 * in the progress panel, cancellable there), the keystore's signature, the node's answer; and
 * trying a failed one again. Each step's outcome shows on the message in the chat state.
 */

/** Sends a message from one of the accounts to a public key; its progress shows in the chat state. */
export async function sendMessage(address: string, to: string, text: string): Promise<void> {
  const from = keystore().publicKeyOf(address);
  const env = { from, to, message: text, timestamp: nowNs() };
  const base: UiMessage = {
    id: chatEnvelopeId(env),
    from,
    to,
    message: text,
    timestamp: env.timestamp,
    status: 'sending',
    stored: false,
  };
  const state = chatState();
  state.local(from, { ...base, phase: 'work' });
  try {
    const difficulty = (await api().node()).chat_pow_difficulty;
    const pow_nonce =
      difficulty === 0n
        ? undefined
        : await runPow(
            powEngine(desktopBridge()),
            `chat message to ${short(addressFromPublicKey(to))}`,
            chatEnvelopeIdBytes(env),
            difficulty,
          );
    state.local(from, { ...base, phase: 'post' });
    const signed = keystore().signChat(address, env);
    const answer = await chatApi().send({ ...signed, ...(pow_nonce !== undefined ? { pow_nonce } : {}) });
    const status = sendStatus(answer.delivery);
    // A later event (delivered, failed) may already have moved it on: never go back.
    if (!answerApplies(state.message(from, base.id)?.status, status)) return;
    state.local(from, {
      ...base,
      stored: true,
      status,
      ...(answer.error !== undefined && status !== 'delivered' ? { error: answer.error } : {}),
    });
  } catch (e) {
    state.local(from, { ...base, status: 'failed', error: sendFailure(e) });
  }
}

/** A cancelled proof of work says so; anything else is the node's refusal or its absence. */
function sendFailure(e: unknown): string {
  if (isPowAbortedError(e)) return 'Cancelled: nothing was sent.';
  return chatError(e);
}

/** Tries a failed message again: the node's outbox when it holds it, else a new send. */
export async function retryMessage(address: string, m: UiMessage): Promise<void> {
  const state = chatState();
  if (!m.stored) {
    // The node never took it: a new envelope, with a new time (the node refuses one 5 minutes old).
    // The new message replaces the old one, which would otherwise stay as "not sent".
    state.remove(m.from, m.id);
    await sendMessage(address, m.to, m.message);
    return;
  }
  state.local(m.from, { ...m, status: 'sending', phase: 'post' });
  try {
    const a = await chatApi().retry(m.id, prover(address));
    const next: UiMessage = { ...m, status: sendStatus(a.delivery) };
    delete next.error;
    delete next.phase;
    if (a.error !== undefined && next.status !== 'delivered') next.error = a.error;
    state.local(m.from, next);
  } catch (e) {
    state.local(m.from, { ...m, status: 'failed', error: chatError(e) });
  }
}
