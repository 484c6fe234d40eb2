import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { addressFromPublicKey, type Verifier } from '../protocol/keys.ts';
import { CHAT_CHALLENGE_BYTES, verifyChatReadAuth } from '../protocol/payloads.ts';

/**
 * The chat ownership proof (contract "Authentication" 3, protocol.md 8.2): a challenge is the expiry
 * (8 bytes BE ns), 16 random bytes and an HMAC-SHA256 of those 24 bytes under a key this process
 * made at start, so only the issuing node accepts it and a restart voids it. It is valid for 120 s
 * and used once; the used set holds only unexpired challenges.
 */

export const CHALLENGE_TTL_NS = 120_000_000_000n;
/** Used challenges remembered at most (each lives 120 s); past it the oldest expired go first. */
const MAX_USED = 100_000;

export type ChatAuthErrorCode =
  | 'missing_account' // 400
  | 'missing_proof' // 401
  | 'malformed_challenge' // 403 from here on
  | 'foreign_challenge'
  | 'challenge_expired'
  | 'wrong_key'
  | 'bad_signature'
  | 'challenge_used';

export class ChatAuthError extends Error {
  readonly code: ChatAuthErrorCode;
  constructor(code: ChatAuthErrorCode, message: string) {
    super(message);
    this.name = 'ChatAuthError';
    this.code = code;
  }
}

export interface ProofParams {
  account?: string;
  pub_key?: string;
  challenge?: string;
  sig?: string;
}

export class ChatChallenges {
  private readonly key = randomBytes(32);
  private readonly used = new Map<string, bigint>();
  private readonly now: () => bigint;
  private readonly verify: Verifier | undefined;

  constructor(deps: { now: () => bigint; verify?: Verifier }) {
    this.now = deps.now;
    this.verify = deps.verify;
  }

  /** A new challenge: `{challenge: 112 hex, expires_at: ns}`. */
  issue(): { challenge: string; expires_at: bigint } {
    const expires = this.now() + CHALLENGE_TTL_NS;
    const head = Buffer.alloc(24);
    head.writeBigUInt64BE(expires, 0);
    randomBytes(16).copy(head, 8);
    const mac = createHmac('sha256', this.key).update(head).digest();
    return { challenge: Buffer.concat([head, mac]).toString('hex'), expires_at: expires };
  }

  /**
   * Checks an ownership proof for `account` (a public key or the address it derives, decisions D2)
   * and uses up its challenge; returns the account's public key. Throws ChatAuthError in the
   * reference's order (reference-behavior.md 1.10).
   */
  prove(p: ProofParams): string {
    if (!p.account) throw new ChatAuthError('missing_account', 'missing account parameter');
    if (!p.pub_key || !p.challenge || !p.sig)
      throw new ChatAuthError(
        'missing_proof',
        'chat read requires an ownership proof (pub_key + challenge + sig); GET /chat/auth/challenge first',
      );
    if (!/^[0-9a-fA-F]+$/.test(p.challenge) || p.challenge.length !== CHAT_CHALLENGE_BYTES * 2)
      throw new ChatAuthError('malformed_challenge', 'malformed challenge');
    const bytes = Buffer.from(p.challenge, 'hex');
    const mac = createHmac('sha256', this.key).update(bytes.subarray(0, 24)).digest();
    if (!timingSafeEqual(mac, bytes.subarray(24)))
      throw new ChatAuthError('foreign_challenge', 'challenge not issued by this node');
    const expires = bytes.readBigUInt64BE(0);
    const now = this.now();
    if (expires < now) throw new ChatAuthError('challenge_expired', 'challenge expired');
    const pub = p.pub_key.toLowerCase();
    const account = p.account.toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(pub) || (account !== pub && account !== addressFromPublicKey(pub)))
      throw new ChatAuthError(
        'wrong_key',
        `ownership proof key: public key does not derive account ${p.account}`,
      );
    if (!verifyChatReadAuth(p.challenge.toLowerCase(), p.sig, pub, this.verify))
      throw new ChatAuthError('bad_signature', 'ownership proof failed: signature does not verify');
    const id = p.challenge.toLowerCase();
    if (this.used.has(id)) throw new ChatAuthError('challenge_used', 'challenge already used');
    this.remember(id, expires, now);
    return pub;
  }

  private remember(id: string, expires: bigint, now: bigint): void {
    if (this.used.size >= MAX_USED) for (const [k, e] of this.used) if (e < now) this.used.delete(k);
    this.used.set(id, expires);
  }
}
