import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  attestationPayload,
  blockHash,
  blockToJson,
  bytesToHex,
  decodeBlock,
  decodeCanonical,
  encodeAux,
  encodeCanonical,
  hexToBytes,
  keyPairFromSeed,
  parseJson,
  signAttestation,
  signBlock,
  stringifyJson,
  verifyAttestation,
  verifyBlockSignature,
  verifyBytes,
} from '../../node-core/protocol/index.ts';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { vectors, vectorsText, VECTORS_SHA256 } from '../helpers/vectors.ts';

describe('vectors.json fixture', () => {
  it('is the byte-identical copy of the specification file', () => {
    expect(createHash('sha256').update(vectorsText, 'utf8').digest('hex')).toBe(VECTORS_SHA256);
    expect(vectors.vectors).toHaveLength(30);
    expect(vectors.pow_vectors).toHaveLength(12);
    expect(vectors.attestation_vectors).toHaveLength(3);
  });
});

describe('block vectors (every entry, both network ids)', () => {
  for (const v of vectors.vectors) {
    describe(`${v.name} @ ${v.network_id}`, () => {
      const block = decodeBlock(v.block);

      it('derives the wallet key and address from the seed', () => {
        const kp = keyPairFromSeed(hexToBytes(v.seed_hex));
        expect(kp.pub_key).toBe(v.pub_key_hex);
        expect(kp.address).toBe(v.address);
      });

      it('encodes canonical bytes and aux byte for byte', () => {
        expect(bytesToHex(encodeCanonical(block))).toBe(v.canonical_hex);
        expect(bytesToHex(encodeAux(block))).toBe(v.aux_hex);
      });

      it('hashes with the network id', () => {
        expect(blockHash(block, v.network_id)).toBe(v.hash);
        expect(block.hash).toBe(v.hash);
      });

      it('signs deterministically to the vector signature', () => {
        const unsigned = { ...block };
        delete unsigned.signature;
        delete unsigned.hash;
        const signed = signBlock(unsigned, hexToBytes(v.seed_hex), v.network_id);
        expect(signed.hash).toBe(v.hash);
        expect(signed.signature).toBe(v.signature);
        // The signer declares the key exactly on opening blocks.
        expect(signed.pub_key).toBe(v.block.pub_key);
      });

      it('verifies with the isomorphic and the node:crypto verifier, and not on another network', () => {
        expect(verifyBlockSignature(block, v.network_id, v.pub_key_hex, verifyBytes)).toBe(true);
        expect(verifyBlockSignature(block, v.network_id, v.pub_key_hex, verifyBytesNode)).toBe(true);
        expect(verifyBlockSignature(block, `${v.network_id}-x`, v.pub_key_hex)).toBe(false);
      });

      it('round-trips through canonical decoding and reference JSON', () => {
        const back = decodeCanonical(encodeCanonical(block));
        expect(bytesToHex(encodeCanonical(back))).toBe(v.canonical_hex);
        const json = parseJson(stringifyJson(blockToJson(block, 'reference')));
        expect(json).toEqual(parseJson(stringifyJson(v.block)));
      });
    });
  }
});

describe('attestation vectors', () => {
  const seed = hexToBytes(vectors.vectors[0]!.seed_hex);
  for (const a of vectors.attestation_vectors) {
    it(`payload and signature at timestamp ${a.timestamp}`, () => {
      const ts = BigInt(a.timestamp);
      expect(bytesToHex(attestationPayload(a.lease_hash, ts))).toBe(a.payload_hex);
      const att = signAttestation(a.lease_hash, ts, seed, a.public_key);
      expect(att.signature).toBe(a.signature);
      expect(
        verifyAttestation(a.lease_hash, { public_key: a.public_key, timestamp: ts, signature: a.signature }),
      ).toBe(true);
      expect(
        verifyAttestation(a.lease_hash, {
          public_key: a.public_key,
          timestamp: ts + 1n,
          signature: a.signature,
        }),
      ).toBe(false);
    });
  }
});
