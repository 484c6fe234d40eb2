import type { Verifier } from '../protocol/keys.ts';
import { hexToBytes } from '../protocol/hex.ts';
import {
  type ChatEnvelope,
  chatEnvelopeId,
  MAX_CHAT_MESSAGE_BYTES,
  verifyChatEnvelope,
} from '../protocol/payloads.ts';
import { powValid } from '../protocol/pow.ts';
import { ProtocolError } from '../protocol/errors.ts';
import { toBigIntField } from '../protocol/int.ts';
import type { ChatOutbox } from './chat-outbox.ts';
import type { ChatStore, Delivery, StoredMessage } from './chat-store.ts';

/**
 * Chat's two doors (contract Chat, decisions D2, D15, protocol.md 8.1; reference-behavior.md 7.1):
 * `POST /chat/send` and the libp2p `account_chat` request check an envelope the same way, cheapest
 * first (H-03: the same verification at both doors). A message to a recipient registered on this
 * node is stored; one to a recipient registered on another node is stored as the sender's copy and
 * put in the outbox in the same transaction (chat-outbox.ts), which hands it to that node.
 *
 * The clock window differs between the doors for one reason: a message waits in an outbox while
 * the recipient's node is offline, so it may reach that node long after it was sent. The libp2p
 * door takes timestamps up to the outbox's lifetime in the past (never more than 5 minutes ahead);
 * a replay of an old message is still refused while it is stored (its id), and one older than the
 * lifetime always.
 */

/** |now − timestamp| allowed, ns (5 minutes). */
export const CHAT_CLOCK_WINDOW_NS = 300_000_000_000n;

export type ChatSendErrorCode =
  | 'invalid_envelope' // 400
  | 'duplicate' // 400
  | 'recipient_unknown' // 404
  | 'not_here'; // the libp2p door: the directory names another node for the recipient

export class ChatSendError extends Error {
  readonly code: ChatSendErrorCode;
  constructor(code: ChatSendErrorCode, message: string) {
    super(message);
    this.name = 'ChatSendError';
    this.code = code;
  }
}

export interface ChatServiceDeps {
  store: ChatStore;
  now: () => bigint;
  verify?: Verifier;
  /** The network's chat proof-of-work difficulty (0: none). */
  powDifficulty: () => bigint;
  /** Where the recipient (a public key) is registered: here, elsewhere, or nowhere (directory). */
  recipient: (key: string) => 'here' | 'elsewhere' | 'unknown';
  /** Called with each newly stored message (the event streams). */
  onStored?: (m: StoredMessage) => void;
  /** Hands messages to other nodes; without it, a recipient registered elsewhere is refused. */
  outbox?: ChatOutbox;
  /** How far in the past the libp2p door takes a timestamp, ns (the outbox's lifetime). */
  relayWindowNs?: bigint;
  /** How long a send waits for the first delivery attempt before answering `queued`, ms (default 3 s). */
  firstAttemptWaitMs?: number;
}

/** What a send did: stored for a recipient here, or handed on (or queued) for another node. */
export type SendDelivery = 'local' | 'delivered' | 'queued' | 'failed';

export interface SendResult {
  message: StoredMessage;
  delivery: SendDelivery;
  /** The delivery record, for a message handed to another node. */
  record?: Delivery;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** A 64-bit field as D3 allows it (digits, bare or quoted), else a 400 naming the field. */
function int(v: unknown, kind: 'i64' | 'u64', field: string): bigint {
  try {
    return toBigIntField(v, kind, field);
  } catch (e) {
    // The protocol's message names the field already ("timestamp: expected an integer ...").
    if (e instanceof ProtocolError)
      throw new ChatSendError(
        'invalid_envelope',
        `invalid envelope: ${e.message.startsWith(`${field}:`) ? e.message : `${field}: ${e.message}`}`,
      );
    throw e;
  }
}

/** The envelope in a request body, or ChatSendError('invalid_envelope') naming what is wrong. */
export function parseEnvelope(body: unknown): ChatEnvelope & { signature: string; id?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ChatSendError('invalid_envelope', 'invalid envelope: the body must be a JSON object');
  const o = body as Record<string, unknown>;
  if (o.to === undefined || o.to === '') throw new ChatSendError('invalid_envelope', "missing 'to' field");
  if (!o.from || !o.signature)
    throw new ChatSendError('invalid_envelope', 'chat send requires a signed envelope (from + signature)');
  for (const f of ['from', 'to'] as const) {
    if (typeof o[f] !== 'string' || !HEX64.test(o[f]))
      throw new ChatSendError(
        'invalid_envelope',
        `invalid envelope: ${f} must be a public key, 64 lowercase hex`,
      );
  }
  if (typeof o.message !== 'string' || o.message === '')
    throw new ChatSendError('invalid_envelope', 'invalid envelope: message must be a non-empty string');
  if (new TextEncoder().encode(o.message).length > MAX_CHAT_MESSAGE_BYTES)
    throw new ChatSendError(
      'invalid_envelope',
      `message exceeds maximum length of ${MAX_CHAT_MESSAGE_BYTES} bytes`,
    );
  const ts = int(o.timestamp, 'i64', 'timestamp');
  if (ts <= 0n) throw new ChatSendError('invalid_envelope', 'invalid envelope: timestamp must be positive');
  if (typeof o.signature !== 'string' || !/^[0-9a-f]{128}$/.test(o.signature))
    throw new ChatSendError('invalid_envelope', 'invalid envelope: signature must be 128 lowercase hex');
  const nonce = o.pow_nonce === undefined ? undefined : int(o.pow_nonce, 'u64', 'pow_nonce');
  if (o.id !== undefined && (typeof o.id !== 'string' || !HEX64.test(o.id)))
    throw new ChatSendError('invalid_envelope', 'invalid envelope: id must be 64 lowercase hex');
  return {
    from: o.from as string,
    to: o.to as string,
    message: o.message,
    timestamp: ts,
    signature: o.signature,
    ...(nonce !== undefined ? { pow_nonce: nonce } : {}),
    ...(o.id !== undefined ? { id: o.id as string } : {}),
  };
}

export class ChatService {
  private readonly d: ChatServiceDeps;

  constructor(deps: ChatServiceDeps) {
    this.d = deps;
  }

  /**
   * `POST /chat/send`: checks an envelope and stores it (and for a recipient on another node, queues
   * it); resolves once durable, after a first delivery attempt of at most `firstAttemptWaitMs`.
   */
  async send(body: unknown): Promise<SendResult> {
    const now = this.d.now();
    const env = this.check(body, now, CHAT_CLOCK_WINDOW_NS);
    const where = this.d.recipient(env.to);
    if (where === 'unknown') throw new ChatSendError('recipient_unknown', 'recipient not found in directory');
    if (where === 'here') return { message: await this.store(env, now), delivery: 'local' };
    const outbox = this.d.outbox;
    if (!outbox)
      throw new ChatSendError(
        'recipient_unknown',
        'the recipient is registered on another node and this node has no peer-to-peer networking',
      );
    const message = await this.store(env, now, { state: 'pending', attempts: 0, updated_at: now });
    const record = await outbox.deliverNow(message, this.d.firstAttemptWaitMs ?? 3_000);
    const delivery = record.state === 'pending' ? 'queued' : record.state;
    return { message, delivery, record };
  }

  /**
   * The libp2p door (`account_chat` from another node's outbox): the same checks, a wider clock
   * window into the past (see the module comment). A duplicate is acknowledged, not refused: the
   * sender lost the first acknowledgement and retries, and must learn that the message arrived.
   */
  async receive(payload: unknown): Promise<{ ok: true; duplicate?: true }> {
    const now = this.d.now();
    const env = this.check(payload, now, this.d.relayWindowNs ?? CHAT_CLOCK_WINDOW_NS, true);
    // A node takes messages for its own accounts; one the directory places on another node goes
    // there (the sender's directory was stale: it follows the recipient on its next attempt).
    // Without a live entry the message is taken: a registration can lapse while a message waits.
    if (this.d.recipient(env.to) === 'elsewhere')
      throw new ChatSendError('not_here', 'the recipient is not registered on this node');
    const { id: _given, ...envelope } = env;
    const stored = await this.d.store.put(envelope, now);
    if (stored === false) return { ok: true, duplicate: true };
    this.d.onStored?.(stored);
    return { ok: true };
  }

  /** Every check of an envelope, cheapest first; throws ChatSendError naming the first that fails. */
  private check(body: unknown, now: bigint, pastWindowNs: bigint, duplicateOk = false) {
    const env = parseEnvelope(body);
    if (env.timestamp > now + CHAT_CLOCK_WINDOW_NS || env.timestamp < now - pastWindowNs)
      throw new ChatSendError(
        'invalid_envelope',
        pastWindowNs === CHAT_CLOCK_WINDOW_NS
          ? 'invalid envelope: timestamp is more than 5 minutes from the node clock'
          : 'invalid envelope: timestamp is out of the delivery window',
      );
    const id = chatEnvelopeId(env);
    if (env.id !== undefined && env.id !== id)
      throw new ChatSendError('invalid_envelope', 'invalid envelope: id does not match the envelope');
    const difficulty = this.d.powDifficulty();
    if (
      difficulty > 0n &&
      (env.pow_nonce === undefined || !powValid(hexToBytes(id), env.pow_nonce, difficulty))
    )
      throw new ChatSendError(
        'invalid_envelope',
        'invalid envelope: proof of work below the chat difficulty',
      );
    if (!verifyChatEnvelope(env, this.d.verify))
      throw new ChatSendError('invalid_envelope', 'invalid envelope: signature does not verify');
    if (!duplicateOk && this.d.store.has(id)) throw new ChatSendError('duplicate', 'duplicate envelope');
    return env;
  }

  private async store(
    env: ReturnType<typeof parseEnvelope>,
    now: bigint,
    delivery?: Delivery,
  ): Promise<StoredMessage> {
    const { id: _given, ...envelope } = env;
    const stored = await this.d.store.put(envelope, now, delivery);
    if (stored === false) throw new ChatSendError('duplicate', 'duplicate envelope');
    this.d.onStored?.(stored);
    return stored;
  }
}
