import { bytesToHex, hexToBytes } from './hex.ts';
import { writeU64BE } from './int.ts';
import { signBytes, type Verifier, verifyBytes } from './keys.ts';

/**
 * Directory registrations (ledger-node-api.md "Directory", decisions D2 and D15): an account,
 * named by its public key, is served by the libp2p node `node_peer`. The signature is Ed25519 over
 * the 32 raw public-key bytes followed by the timestamp as an i64 big-endian (40 bytes).
 *
 * The contract's signed bytes do not cover `node_peer`: whoever relays a registration could pair its
 * key and timestamp with another peer id. Consumers treat the mapping as informational.
 */
export interface Registration {
  /** The registrant's public key (64 hex). */
  account: string;
  node_peer: string;
  /** Unix nanoseconds. */
  timestamp: bigint;
  signature: string;
}

export const REGISTRATION_BYTES = 40;

export function registrationMessage(r: Pick<Registration, 'account' | 'timestamp'>): Uint8Array {
  const out = new Uint8Array(REGISTRATION_BYTES);
  out.set(hexToBytes(r.account, 32, 'account'), 0);
  writeU64BE(out, 32, r.timestamp);
  return out;
}

export function signRegistration(
  r: Omit<Registration, 'signature'>,
  seed: Uint8Array,
  sign: (message: Uint8Array, seed: Uint8Array) => Uint8Array = signBytes,
): Registration {
  return { ...r, signature: bytesToHex(sign(registrationMessage(r), seed)) };
}

export function verifyRegistration(r: Registration, verify: Verifier = verifyBytes): boolean {
  try {
    return verify(hexToBytes(r.signature, 64), registrationMessage(r), hexToBytes(r.account, 32));
  } catch {
    return false;
  }
}
