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
import type { ChatStore, StoredMessage } from './chat-store.ts';

/**
 * `POST /chat/send` (contract Chat, decisions D2, D15, protocol.md 8.1): checks an envelope, cheapest
 * first, and stores it on this node when its recipient is registered here. Delivery to a recipient
 * registered on another node (libp2p, with an outbox) is the next step of issue #13: such a send is
 * refused as retryable, never acknowledged without delivery.
 */

/** |now − timestamp| allowed, ns (5 minutes). */
export const CHAT_CLOCK_WINDOW_NS = 300_000_000_000n;

export type ChatSendErrorCode =
  | 'invalid_envelope' // 400
  | 'duplicate' // 400
  | 'recipient_unknown' // 404
  | 'remote_delivery'; // 503, retryable

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
}

const HEX64 = /^[0-9a-f]{64}$/;

/** A 64-bit field as D3 allows it (digits, bare or quoted), else a 400 naming the field. */
function int(v: unknown, kind: 'i64' | 'u64', field: string): bigint {
  try {
    return toBigIntField(v, kind, field);
  } catch (e) {
    if (e instanceof ProtocolError)
      throw new ChatSendError('invalid_envelope', `invalid envelope: ${field}: ${e.message}`);
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

  /** Checks and stores an envelope; resolves with the stored message once durable. */
  async send(body: unknown): Promise<StoredMessage> {
    const env = parseEnvelope(body);
    const now = this.d.now();
    const skew = env.timestamp > now ? env.timestamp - now : now - env.timestamp;
    if (skew > CHAT_CLOCK_WINDOW_NS)
      throw new ChatSendError(
        'invalid_envelope',
        'invalid envelope: timestamp is more than 5 minutes from the node clock',
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
    if (this.d.store.has(id)) throw new ChatSendError('duplicate', 'duplicate envelope');
    const where = this.d.recipient(env.to);
    if (where === 'unknown') throw new ChatSendError('recipient_unknown', 'recipient not found in directory');
    if (where === 'elsewhere')
      throw new ChatSendError(
        'remote_delivery',
        'the recipient is registered on another node; delivery between nodes is not available yet',
      );
    const { id: _given, ...envelope } = env;
    const stored = await this.d.store.put(envelope, now);
    if (stored === false) throw new ChatSendError('duplicate', 'duplicate envelope');
    this.d.onStored?.(stored);
    return stored;
  }
}
