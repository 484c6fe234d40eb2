import type { ChatEvent } from '../../../node-core/client/chat.ts';
import { keystore } from '../keystore/index.ts';
import { chatApi, chatError, nowNs, prover } from './api.ts';
import type { UiMessage } from './conversations.ts';
import { setStreamStatus, type StreamStatus } from './link.ts';
import { chatState } from './state.ts';

/**
 * Following an account's event stream (`GET /chat/events`): each connect needs a fresh ownership
 * proof, so the stream is read with fetch and reconnected by hand, resuming after the last event id
 * seen (nothing missed, nothing twice): at once after an overflow (the node closed a stream read too
 * slowly; the backlog replays), after 1 s when a stream that lived a while ends, else with a backoff
 * doubling up to 30 s. The loop is pure (followStream); followAccount wires it to the window.
 */

export const RETRY_FIRST_MS = 1_000;
export const RETRY_MAX_MS = 30_000;
/** A stream that lived this long was healthy: its end starts the backoff afresh. */
export const STABLE_MS = 10_000;

/** The wait before the next connect. */
export function nextDelay(prevMs: number, livedMs: number, overflow: boolean): number {
  if (overflow) return 0;
  if (livedMs >= STABLE_MS) return RETRY_FIRST_MS;
  return Math.min(Math.max(prevMs * 2, RETRY_FIRST_MS), RETRY_MAX_MS);
}

export interface StreamDeps {
  /**
   * One connection after `lastEventId` ('0': from the start): calls `onOpen` once the node accepted
   * it, `onEvent` for each frame; resolves when the node ends the stream, rejects when it fails.
   */
  connect(
    lastEventId: string,
    onOpen: () => void,
    onEvent: (e: ChatEvent) => void,
    signal: AbortSignal,
  ): Promise<unknown>;
  onEvent(e: ChatEvent): void;
  onStatus(s: StreamStatus): void;
  /** The sentence for a failure. */
  describe(e: unknown): string;
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
  now?(): number;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Reads the stream, reconnecting, until `signal` aborts. */
export async function followStream(deps: StreamDeps, signal: AbortSignal): Promise<void> {
  const sleep = deps.sleep ?? abortableSleep;
  const now = deps.now ?? Date.now;
  let last = '0';
  let delay = 0;
  let failed: string | undefined;
  while (!signal.aborted) {
    deps.onStatus(failed === undefined ? { state: 'connecting' } : { state: 'connecting', error: failed });
    const started = now();
    let overflow = false;
    let error: string;
    try {
      await deps.connect(
        last,
        () => {
          failed = undefined;
          deps.onStatus({ state: 'live' });
        },
        (e) => {
          if (e.kind === 'message') last = e.id;
          else if (e.kind === 'overflow') overflow = true;
          deps.onEvent(e);
        },
        signal,
      );
      error = 'the node closed the event stream';
    } catch (e) {
      error = deps.describe(e);
    }
    if (signal.aborted) return;
    delay = nextDelay(delay, now() - started, overflow);
    if (delay > 0) {
      failed = error;
      deps.onStatus({ state: 'retrying', error, retryAt: now() + delay });
    }
    await sleep(delay, signal);
  }
}

/**
 * Follows one of the wallet's accounts until `signal` aborts: its whole stored history first, then
 * live, into the chat state; delivery states of recent messages are read on every connect (the
 * replay carries messages, not their states). `onIncoming` hears each new message to the account.
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
  const readDeliveries = () =>
    chatApi()
      .messages(prover(address), { limit: 200 })
      .then((page) => {
        for (const m of page.messages) if (m.delivery) state.delivery(key, m.id, m.delivery);
      })
      .catch(() => {});
  await followStream(
    {
      connect: (lastEventId, onOpen, onEvent, sig) =>
        chatApi().stream(prover(address), onEvent, {
          lastEventId,
          signal: sig,
          fetch: async (input, init) => {
            const res = await fetch(input, init);
            if (res.ok) {
              onOpen();
              void readDeliveries();
            }
            return res;
          },
        }),
      onEvent: (e) => {
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
      },
      onStatus: (s) => setStreamStatus(address, s),
      describe: chatError,
    },
    signal,
  );
}
