import { signBytesNode } from '../fastpath/ed25519.ts';
import type { Attestation } from '../protocol/block.ts';
import { bytesToHex } from '../protocol/hex.ts';
import { attestationPayload } from '../protocol/payloads.ts';

/**
 * This node's own timekeeper attestation (reference-behavior.md 4.6): its `node.key` signs
 * SHA-256(subject || timestamp). Only a key listed in `sys.timekeepers` makes one that counts; the
 * callers check that first.
 */
export function localAttestation(
  subject: string,
  timestamp: bigint,
  key: { seed: Uint8Array; pubKey: string },
): Attestation {
  const sig = signBytesNode(attestationPayload(subject, timestamp), key.seed);
  return { public_key: key.pubKey, timestamp, signature: bytesToHex(sig) };
}
