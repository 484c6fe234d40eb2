import { ProtocolError } from './errors.ts';
import { sha256 } from './hash.ts';
import { bytesToHex, concatBytes, hexToBytes, utf8 } from './hex.ts';
import { u32BE, u64BE } from './int.ts';
import { signBytes, type Verifier, verifyBytes } from './keys.ts';

/**
 * Signed payloads other than blocks: chat envelopes and their read-auth proof (decisions D15 and the
 * contract's Chat part), directory registrations (D15) and timekeeper attestations (protocol.md 8.4).
 */

// ---- chat envelope -------------------------------------------------------------------------------

export const MAX_CHAT_MESSAGE_BYTES = 8192;

export interface ChatEnvelope {
  /** Sender public key, 64 hex. */
  from: string;
  /** Recipient public key, 64 hex. */
  to: string;
  message: string;
  timestamp: bigint;
  signature?: string;
  /** Optional proof of work over the id, at the chat difficulty. */
  pow_nonce?: bigint;
}

/** F(x): 4-byte big-endian length, then the UTF-8 bytes of the string. */
function f4(s: string): Uint8Array {
  const b = utf8(s);
  return concatBytes(u32BE(b.length), b);
}

/** Canonical bytes: F(from) || F(to) || F(message) || timestamp (8 bytes BE); keys as 64 hex chars. */
export function chatCanonical(env: Pick<ChatEnvelope, 'from' | 'to' | 'message' | 'timestamp'>): Uint8Array {
  return concatBytes(f4(env.from), f4(env.to), f4(env.message), u64BE(env.timestamp));
}

/** id = SHA-256(canonical); the signature and the proof of work are over these 32 bytes. */
export function chatEnvelopeIdBytes(
  env: Pick<ChatEnvelope, 'from' | 'to' | 'message' | 'timestamp'>,
): Uint8Array {
  if (utf8(env.message).length > MAX_CHAT_MESSAGE_BYTES) {
    throw new ProtocolError(
      'ERR_FIELD_RANGE',
      `message larger than ${MAX_CHAT_MESSAGE_BYTES} bytes`,
      'message',
    );
  }
  return sha256(chatCanonical(env));
}

export function chatEnvelopeId(env: Pick<ChatEnvelope, 'from' | 'to' | 'message' | 'timestamp'>): string {
  return bytesToHex(chatEnvelopeIdBytes(env));
}

export function signChatEnvelope(env: ChatEnvelope, seed: Uint8Array): ChatEnvelope & { signature: string } {
  return { ...env, signature: bytesToHex(signBytes(chatEnvelopeIdBytes(env), seed)) };
}

/** Verifies the sender's signature (the key in `from`) over the envelope id. */
export function verifyChatEnvelope(env: ChatEnvelope, verify: Verifier = verifyBytes): boolean {
  try {
    if (!env.signature) return false;
    return verify(hexToBytes(env.signature, 64), chatEnvelopeIdBytes(env), hexToBytes(env.from, 32));
  } catch {
    return false;
  }
}

// ---- chat read-auth proof ------------------------------------------------------------------------

const READ_AUTH_TAG = utf8('xe/chat-read-auth/v1\0');
export const CHAT_CHALLENGE_BYTES = 56;

/** The proof message: SHA-256("xe/chat-read-auth/v1" || 0x00 || the 56 challenge bytes). */
export function chatReadAuthMessage(challengeHex: string): Uint8Array {
  return sha256(concatBytes(READ_AUTH_TAG, hexToBytes(challengeHex, CHAT_CHALLENGE_BYTES, 'challenge')));
}

export function signChatReadAuth(challengeHex: string, seed: Uint8Array): string {
  return bytesToHex(signBytes(chatReadAuthMessage(challengeHex), seed));
}

export function verifyChatReadAuth(
  challengeHex: string,
  sigHex: string,
  pubKeyHex: string,
  verify: Verifier = verifyBytes,
): boolean {
  try {
    return verify(hexToBytes(sigHex, 64), chatReadAuthMessage(challengeHex), hexToBytes(pubKeyHex, 32));
  } catch {
    return false;
  }
}

// ---- directory registration ----------------------------------------------------------------------

export interface DirectoryRegistration {
  /** Public key of the registrant, 64 hex (decisions D2). */
  account: string;
  node_peer: string;
  timestamp: bigint;
  signature?: string;
}

/** Signed bytes (contract, D15): the 32 raw public-key bytes, then the timestamp as i64 BE. */
export function directoryMessage(accountPubKeyHex: string, timestamp: bigint): Uint8Array {
  return concatBytes(hexToBytes(accountPubKeyHex, 32, 'account'), u64BE(timestamp));
}

export function signDirectoryRegistration(
  reg: DirectoryRegistration,
  seed: Uint8Array,
): DirectoryRegistration & { signature: string } {
  return { ...reg, signature: bytesToHex(signBytes(directoryMessage(reg.account, reg.timestamp), seed)) };
}

export function verifyDirectoryRegistration(
  reg: DirectoryRegistration,
  verify: Verifier = verifyBytes,
): boolean {
  try {
    if (!reg.signature) return false;
    return verify(
      hexToBytes(reg.signature, 64),
      directoryMessage(reg.account, reg.timestamp),
      hexToBytes(reg.account, 32),
    );
  } catch {
    return false;
  }
}

// ---- timekeeper attestation ----------------------------------------------------------------------

/** payload = SHA-256(lease hash, 32 raw bytes || timestamp as i64 BE); the signature is over it. */
export function attestationPayload(leaseHashHex: string, timestamp: bigint): Uint8Array {
  return sha256(concatBytes(hexToBytes(leaseHashHex, 32, 'lease_hash'), u64BE(timestamp)));
}

export function signAttestation(
  leaseHashHex: string,
  timestamp: bigint,
  seed: Uint8Array,
  publicKeyHex: string,
): { public_key: string; timestamp: bigint; signature: string } {
  const sig = signBytes(attestationPayload(leaseHashHex, timestamp), seed);
  return { public_key: publicKeyHex, timestamp, signature: bytesToHex(sig) };
}

export function verifyAttestation(
  leaseHashHex: string,
  att: { public_key: string; timestamp: bigint; signature: string },
  verify: Verifier = verifyBytes,
): boolean {
  try {
    return verify(
      hexToBytes(att.signature, 64),
      attestationPayload(leaseHashHex, att.timestamp),
      hexToBytes(att.public_key, 32),
    );
  } catch {
    return false;
  }
}

// ---- lease signature (tunnel, exec, console) -----------------------------------------------------

/** How long a timestamped lease signature is valid either side of the node's clock (D12). */
export const LEASE_SIGNATURE_WINDOW_NS = 60_000_000_000n;

/**
 * What the lease's access key signs to open its tunnel or run a command in its VM (protocol.md 8.5,
 * decisions D12, D17): the 32 raw bytes of the lease hash (the reference's replayable form), or,
 * with `timestamp`, those bytes followed by the timestamp as 8 bytes big-endian (the replay-proof form).
 */
export function leaseSignatureMessage(leaseHashHex: string, timestamp?: bigint): Uint8Array {
  const hash = hexToBytes(leaseHashHex, 32, 'lease_hash');
  return timestamp === undefined ? hash : concatBytes(hash, u64BE(timestamp));
}

export function signLeaseAccess(leaseHashHex: string, seed: Uint8Array, timestamp?: bigint): string {
  return bytesToHex(signBytes(leaseSignatureMessage(leaseHashHex, timestamp), seed));
}

export function verifyLeaseAccess(
  leaseHashHex: string,
  accessPubKeyHex: string,
  signatureHex: string,
  timestamp?: bigint,
  verify: Verifier = verifyBytes,
): boolean {
  try {
    return verify(
      hexToBytes(signatureHex, 64),
      leaseSignatureMessage(leaseHashHex, timestamp),
      hexToBytes(accessPubKeyHex, 32),
    );
  } catch {
    return false;
  }
}
