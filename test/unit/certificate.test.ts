import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import type { Attestation } from '../../node-core/protocol/block.ts';
import {
  attestationMerkleRoot,
  benchmarkEndSubject,
  CERTIFICATE_FIELDS,
  CERTIFICATE_VALIDITY_NS,
  CertificateError,
  certificateHash,
  certificateSeed,
  certificateToJson,
  decodeCertificate,
  signCertificate,
  type UnsignedCertificate,
  verifyCertificate,
  verifyCertificateContent,
} from '../../node-core/protocol/certificate.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { parseJson, stringifyJson } from '../../node-core/protocol/json.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { signAttestation } from '../../node-core/protocol/payloads.ts';

// Byte builders written from the spec text, independent of the implementation's helpers.
const ascii = (s: string) => new TextEncoder().encode(s);
const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
function u64(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, v, false);
  return out;
}
function i64(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, v, false);
  return out;
}
function f64(v: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setFloat64(0, v, false);
  return out;
}
function lp8(s: string): Uint8Array {
  const b = ascii(s);
  const out = new Uint8Array(8 + b.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(b.length), false);
  out.set(b, 8);
  return out;
}

const NET = 'testnet-0003';
const provider = keyPairFromSeed(new Uint8Array(32).fill(7));
const stranger = keyPairFromSeed(new Uint8Array(32).fill(8));
const timekeepers = [11, 12, 13, 14, 15].map((i) => keyPairFromSeed(new Uint8Array(32).fill(i)));
const START = 1_790_155_844_400_578_712n;

function attest(subject: string, count: number, t: bigint): Attestation[] {
  return timekeepers
    .slice(0, count)
    .map((k, i) => signAttestation(subject, t + BigInt(i), hexToBytes(k.seed_hex), k.pub_key));
}

function unsigned(over: Partial<UnsignedCertificate> = {}): UnsignedCertificate {
  return {
    provider: provider.address,
    provider_pub_key: provider.pub_key,
    seed: hex(certificateSeed(START, provider.pub_key)),
    workload_version: 3n,
    iterations: 375_000_000n,
    work_proof: 'e3'.repeat(32),
    score: 1 / 187.25,
    start_attestation_root: attestationMerkleRoot(attest(provider.address, 3, START)),
    end_attestation_root: attestationMerkleRoot(attest(benchmarkEndSubject(provider.address), 3, START + 9n)),
    start_median: START + 1n,
    end_median: START + 10n,
    issued_at: START + 1n,
    expires_at: START + 1n + CERTIFICATE_VALIDITY_NS,
    price_multiplier_milli: 2500n,
    ...over,
  };
}

const signed = (over: Partial<UnsignedCertificate> = {}, seed = provider.seed_hex) =>
  signCertificate(unsigned(over), NET, hexToBytes(seed));

describe('certificate hash (reference-behavior.md 4.7 table)', () => {
  it('is SHA-256 of the fields framed as the table says, byte for byte', () => {
    const c = unsigned();
    const expected = sha(
      ascii('xe/perf-certificate/v1'),
      Uint8Array.of(0),
      lp8(NET),
      lp8(c.provider),
      lp8(c.provider_pub_key),
      lp8(c.seed),
      u64(c.workload_version),
      u64(c.iterations),
      lp8(c.work_proof),
      f64(c.score),
      lp8(c.start_attestation_root),
      lp8(c.end_attestation_root),
      i64(c.start_median),
      i64(c.end_median),
      i64(c.issued_at),
      i64(c.expires_at),
      u64(c.price_multiplier_milli),
    );
    expect(certificateHash(c, NET)).toBe(hex(expected));
  });

  it('writes negative i64 fields as two’s complement and binds the network id', () => {
    const c = unsigned({ start_median: -2n });
    const h = certificateHash(c, NET);
    expect(h).not.toBe(certificateHash(unsigned(), NET));
    expect(certificateHash(c, 'other-net')).not.toBe(h);
    // score is its IEEE-754 bits: a one-ulp change changes the hash.
    const s = unsigned().score;
    const next = new DataView(f64(s).buffer);
    next.setBigUint64(0, next.getBigUint64(0) + 1n);
    expect(certificateHash(unsigned({ score: next.getFloat64(0) }), NET)).not.toBe(
      certificateHash(unsigned(), NET),
    );
  });
});

describe('attestation Merkle root', () => {
  const leaf = (a: Attestation) =>
    sha(Uint8Array.of(0), ascii(a.public_key), i64(a.timestamp), ascii(a.signature));
  const node = (l: Uint8Array, r: Uint8Array) => sha(Uint8Array.of(1), l, r);
  const sortedLeaves = (atts: Attestation[]) =>
    [...atts].sort((a, b) => (a.public_key < b.public_key ? -1 : 1)).map(leaf);

  it('is 64 zero characters for the empty set', () => {
    expect(attestationMerkleRoot([])).toBe('0'.repeat(64));
  });

  it('is the leaf itself for one attestation', () => {
    const [a] = attest('12'.repeat(32), 1, START);
    expect(attestationMerkleRoot([a!])).toBe(hex(leaf(a!)));
  });

  it('pairs two leaves sorted by public key, whatever the input order', () => {
    const atts = attest('12'.repeat(32), 2, START);
    const [l0, l1] = sortedLeaves(atts);
    expect(attestationMerkleRoot(atts)).toBe(hex(node(l0!, l1!)));
    expect(attestationMerkleRoot([...atts].reverse())).toBe(hex(node(l0!, l1!)));
  });

  it('carries an odd last node up unchanged (3 leaves)', () => {
    const atts = attest('12'.repeat(32), 3, START);
    const [a, b, c] = sortedLeaves(atts);
    expect(attestationMerkleRoot(atts)).toBe(hex(node(node(a!, b!), c!)));
    // Not the duplicate-the-last convention.
    expect(attestationMerkleRoot(atts)).not.toBe(hex(node(node(a!, b!), node(c!, c!))));
  });

  it('carries odd nodes up at every level (5 leaves)', () => {
    const atts = attest('12'.repeat(32), 5, START);
    const [a, b, c, d, e] = sortedLeaves(atts);
    expect(attestationMerkleRoot([...atts].reverse())).toBe(hex(node(node(node(a!, b!), node(c!, d!)), e!)));
  });
});

describe('seed and attestation subjects', () => {
  it('seed = SHA-256(start median u64 BE || the 32 raw public-key bytes)', () => {
    const expected = sha(u64(START), Buffer.from(provider.pub_key, 'hex'));
    expect(hex(certificateSeed(START, provider.pub_key))).toBe(hex(expected));
  });

  it('the end subject zeroes hex characters 32..47 of the address', () => {
    const a = '0123456789abcdef'.repeat(4);
    expect(benchmarkEndSubject(a)).toBe(a.slice(0, 32) + '0000000000000000' + a.slice(48));
  });
});

describe('signing and verification', () => {
  const failCode = (f: () => void) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(CertificateError);
      return (e as CertificateError).code;
    }
    return undefined;
  };

  it('signs the 32 hash bytes and verifies', () => {
    const c = signed();
    expect(c.hash).toBe(certificateHash(unsigned(), NET));
    expect(verifyBytesNode(hexToBytes(c.signature), hexToBytes(c.hash), hexToBytes(provider.pub_key))).toBe(
      true,
    );
    expect(failCode(() => verifyCertificateContent(c, NET))).toBeUndefined();
    expect(failCode(() => verifyCertificateContent(c, NET, { verify: verifyBytesNode }))).toBeUndefined();
    expect(Object.keys(c)).toEqual(CERTIFICATE_FIELDS);
  });

  it('1. the hash must recompute (a field changed after signing, or another network)', () => {
    const c = signed();
    expect(failCode(() => verifyCertificateContent({ ...c, price_multiplier_milli: 10_000n }, NET))).toBe(
      'ERR_CERT_HASH',
    );
    expect(failCode(() => verifyCertificateContent(c, 'testnet-0001'))).toBe('ERR_CERT_HASH');
  });

  it('2. provider_pub_key must derive provider', () => {
    const c = signed({ provider: stranger.address });
    expect(failCode(() => verifyCertificateContent(c, NET))).toBe('ERR_CERT_PROVIDER_KEY');
    const junk = signed({ provider_pub_key: 'zz'.repeat(32) });
    expect(failCode(() => verifyCertificateContent(junk, NET))).toBe('ERR_CERT_PROVIDER_KEY');
  });

  it('3. the signature must verify', () => {
    const c = signed({}, stranger.seed_hex);
    expect(failCode(() => verifyCertificateContent(c, NET))).toBe('ERR_CERT_SIGNATURE');
    const garbled = { ...signed(), signature: 'not hex' };
    expect(failCode(() => verifyCertificateContent(garbled, NET))).toBe('ERR_CERT_SIGNATURE');
  });

  it('4. score must be > 0 (checked before the workload and the multiplier)', () => {
    expect(failCode(() => verifyCertificateContent(signed({ score: 0 }), NET))).toBe('ERR_CERT_SCORE');
    expect(failCode(() => verifyCertificateContent(signed({ score: -1 }), NET))).toBe('ERR_CERT_SCORE');
    const all = signed({ score: 0, iterations: 1n, price_multiplier_milli: 1n });
    expect(failCode(() => verifyCertificateContent(all, NET))).toBe('ERR_CERT_SCORE');
  });

  it('5. workload version and iterations must be the expected workload', () => {
    expect(failCode(() => verifyCertificateContent(signed({ workload_version: 2n }), NET))).toBe(
      'ERR_CERT_WORKLOAD',
    );
    const dev = signed({ iterations: 1000n });
    expect(failCode(() => verifyCertificateContent(dev, NET))).toBe('ERR_CERT_WORKLOAD');
    const workload = { workload_version: 3n, iterations: 1000n };
    expect(failCode(() => verifyCertificateContent(dev, NET, { workload }))).toBeUndefined();
    expect(failCode(() => verifyCertificateContent(signed(), NET, { workload }))).toBe('ERR_CERT_WORKLOAD');
  });

  it('6. the multiplier must be in 500..10,000', () => {
    for (const [m, ok] of [
      [499n, false],
      [500n, true],
      [10_000n, true],
      [10_001n, false],
    ] as const) {
      const code = failCode(() => verifyCertificateContent(signed({ price_multiplier_milli: m }), NET));
      expect(code).toBe(ok ? undefined : 'ERR_CERT_MULTIPLIER');
    }
  });

  it('full verification adds now ≤ expires_at', () => {
    const c = signed();
    expect(failCode(() => verifyCertificate(c, NET, c.expires_at))).toBeUndefined();
    expect(failCode(() => verifyCertificate(c, NET, c.expires_at + 1n))).toBe('ERR_CERT_EXPIRED');
    // Content failures come first.
    expect(failCode(() => verifyCertificate({ ...c, score: 2 }, NET, c.expires_at + 1n))).toBe(
      'ERR_CERT_HASH',
    );
  });
});

describe('JSON', () => {
  it('round-trips through text in the specification’s field order', () => {
    const c = signed();
    const text = stringifyJson(certificateToJson(c));
    expect(Object.keys(JSON.parse(text) as object)).toEqual(CERTIFICATE_FIELDS);
    const back = decodeCertificate(parseJson(text));
    expect(back).toEqual(c);
    expect(() => verifyCertificateContent(back, NET)).not.toThrow();
  });

  it('keeps 64-bit values exact and reads a whole-number score', () => {
    const c = signed({ score: 1 });
    const text = stringifyJson(certificateToJson(c)).replace('"score":1,', '"score":1.0,');
    expect(text).toContain('"score":1.0,');
    expect(text).toContain(`"start_median":${START + 1n},`);
    expect(decodeCertificate(parseJson(text))).toEqual(c);
  });

  it('names the field at fault', () => {
    const json = certificateToJson(signed()) as Record<string, unknown>;
    const field = (over: Record<string, unknown>) => {
      try {
        decodeCertificate({ ...json, ...over });
      } catch (e) {
        expect(e).toBeInstanceOf(ProtocolError);
        return (e as ProtocolError).field;
      }
      return undefined;
    };
    expect(field({ provider: 'AB'.repeat(32) })).toBe('provider');
    expect(field({ signature: 'ab'.repeat(32) })).toBe('signature');
    expect(field({ score: '0.5' })).toBe('score');
    expect(field({ score: undefined })).toBe('score');
    expect(field({ iterations: -1 })).toBe('iterations');
    expect(field({ expires_at: 1.5 })).toBe('expires_at');
    expect(field({})).toBeUndefined();
  });
});
