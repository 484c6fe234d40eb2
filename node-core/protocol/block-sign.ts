import { type Block, blockHashBytes, isOpening, MULTISIG_KEYSET_TYPES } from './block.ts';
import { ProtocolError } from './errors.ts';
import { bytesToHex, equalBytes, hexToBytes, isHex } from './hex.ts';
import { publicKeyFromSeed, signBytes, type Verifier, verifyBytes } from './keys.ts';

export type SignedBlock = Block & { hash: string };

/**
 * Signs a single-key block (protocol.md sections 2 and 3.6): an opening block declares the signer's
 * public key in `pub_key`, a later block carries none; the signature covers the 32 raw hash bytes.
 * Returns a new block with `hash` and `signature`; `pow_nonce` is left for the proof-of-work step.
 */
export function signBlock(block: Block, seed: Uint8Array, networkId: string): SignedBlock {
  const out: Block = { ...block };
  delete out.signatures;
  delete out.hash;
  delete out.signature;
  if (isOpening(block) && !MULTISIG_KEYSET_TYPES.has(block.type)) {
    out.pub_key = bytesToHex(publicKeyFromSeed(seed));
  } else delete out.pub_key;
  const hash = blockHashBytes(out, networkId);
  return { ...out, hash: bytesToHex(hash), signature: bytesToHex(signBytes(hash, seed)) };
}

/**
 * Signs a multisig block with several keyset members: every signer signs the same hash; the block
 * carries `signatures` (sorted by key, for a stable form) and never `pub_key` or `signature`.
 */
export function signBlockMultisig(block: Block, seeds: Uint8Array[], networkId: string): SignedBlock {
  const out: Block = { ...block };
  delete out.pub_key;
  delete out.signature;
  delete out.hash;
  const hash = blockHashBytes(out, networkId);
  const signatures = seeds
    .map((seed) => ({
      public_key: bytesToHex(publicKeyFromSeed(seed)),
      signature: bytesToHex(signBytes(hash, seed)),
    }))
    .sort((a, b) => (a.public_key < b.public_key ? -1 : 1));
  return { ...out, signatures, hash: bytesToHex(hash) };
}

/** Recomputes the hash and checks it against the block's `hash` field (when present). */
export function checkBlockHash(block: Block, networkId: string): Uint8Array {
  const hash = blockHashBytes(block, networkId);
  if (block.hash !== undefined && !equalBytes(hash, hexToBytes(block.hash, 32, 'hash'))) {
    throw new ProtocolError('ERR_FIELD_RANGE', 'does not match the block contents', 'hash');
  }
  return hash;
}

/** Verifies a hex signature over hash bytes by a hex public key; malformed input is simply invalid. */
export function verifyHashSignature(
  hash: Uint8Array,
  signatureHex: string,
  publicKeyHex: string,
  verify: Verifier = verifyBytes,
): boolean {
  if (!isHex(signatureHex, 64) || !isHex(publicKeyHex, 32)) return false;
  return verify(hexToBytes(signatureHex), hash, hexToBytes(publicKeyHex));
}

/** Verifies a single-key block's signature against `publicKeyHex` (its own `pub_key` when opening). */
export function verifyBlockSignature(
  block: Block,
  networkId: string,
  publicKeyHex: string,
  verify: Verifier = verifyBytes,
): boolean {
  if (block.signature === undefined) return false;
  let hash: Uint8Array;
  try {
    hash = checkBlockHash(block, networkId);
  } catch {
    return false;
  }
  return verifyHashSignature(hash, block.signature, publicKeyHex, verify);
}
