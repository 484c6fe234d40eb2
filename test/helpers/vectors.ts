import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../../node-core/protocol/json.ts';

/** The reference client's vectors, byte-identical to the spec's copy (checked by its SHA-256). */
export const VECTORS_PATH = fileURLToPath(new URL('../fixtures/vectors.json', import.meta.url));
export const VECTORS_SHA256 = 'abaea01c586ed2eb3e2c785d6755a92e54a9dccf148ba0f62092ad21b4b6edb4';

export interface BlockVector {
  name: string;
  network_id: string;
  seed_hex: string;
  pub_key_hex: string;
  address: string;
  block: Record<string, unknown>;
  canonical_hex: string;
  aux_hex: string;
  hash: string;
  signature: string;
}

export interface Vectors {
  pow_difficulty: string;
  pow_vectors: { hash_hex: string; nonce: string; pow_hash: string }[];
  attestation_vectors: {
    lease_hash: string;
    timestamp: string;
    payload_hex: string;
    public_key: string;
    signature: string;
  }[];
  vectors: BlockVector[];
}

export const vectorsText = readFileSync(VECTORS_PATH, 'utf8');
/** Parsed losslessly: several integers in the file exceed 2^53. */
export const vectors = parseJson(vectorsText) as unknown as Vectors;
