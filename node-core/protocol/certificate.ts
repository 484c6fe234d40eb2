import type { Attestation } from './block.ts';
import { ProtocolError } from './errors.ts';
import { hexField, intField, jsonObject, type JsonObject } from './fields.ts';
import { domainTag, lp8Text } from './framing.ts';
import { sha256 } from './hash.ts';
import { bytesToHex, concatBytes, hexToBytes, utf8 } from './hex.ts';
import { u64BE } from './int.ts';
import { RawJson } from './json.ts';
import { addressFromPublicKey, signBytes, type Verifier, verifyBytes } from './keys.ts';

/**
 * Performance certificates (protocol.md 8.6, reference-behavior.md 4.7): a provider's signed
 * benchmark result, which carries the price multiplier its leases are billed at.
 */

/** The certificate JSON, fields in the order the specification lists them. */
export interface PerformanceCertificate {
  /** Provider address (64 hex). */
  provider: string;
  provider_pub_key: string;
  /** The benchmark seed (64 hex), see certificateSeed. */
  seed: string;
  workload_version: bigint;
  iterations: bigint;
  /** 64 hex: SHA-256(cpuHash || memoryProof). */
  work_proof: string;
  /** 1 / benchmark seconds. */
  score: number;
  start_attestation_root: string;
  end_attestation_root: string;
  start_median: bigint;
  end_median: bigint;
  issued_at: bigint;
  expires_at: bigint;
  price_multiplier_milli: bigint;
  signature: string;
  hash: string;
}

export type UnsignedCertificate = Omit<PerformanceCertificate, 'signature' | 'hash'>;

export const CERTIFICATE_FIELDS = [
  'provider',
  'provider_pub_key',
  'seed',
  'workload_version',
  'iterations',
  'work_proof',
  'score',
  'start_attestation_root',
  'end_attestation_root',
  'start_median',
  'end_median',
  'issued_at',
  'expires_at',
  'price_multiplier_milli',
  'signature',
  'hash',
] as const satisfies readonly (keyof PerformanceCertificate)[];

export const MIN_PRICE_MULTIPLIER_MILLI = 500n;
export const MAX_PRICE_MULTIPLIER_MILLI = 10_000n;
/** expires_at = issued_at + 7 days. */
export const CERTIFICATE_VALIDITY_NS = 7n * 24n * 3600n * 1_000_000_000n;

/**
 * The benchmark a certificate attests. Verification compares only the version and the iteration
 * count; the table size and the read count are what the version means.
 */
export interface Workload {
  workload_version: bigint;
  iterations: bigint;
  table_entries: number;
  reads: number;
}

/** Workload version 3, the reference network's (reference-behavior.md 4.7). */
export const REFERENCE_WORKLOAD: Readonly<Workload> = Object.freeze({
  workload_version: 3n,
  iterations: 375_000_000n,
  table_entries: 8_388_608,
  reads: 1_000_000,
});

// ---- seed and attestation subjects ---------------------------------------------------------------

/**
 * seed = SHA-256(start median as u64 BE || provider public key). The specification leaves open
 * (UNCONFIRMED) whether the key enters as its 32 raw bytes or as its 64-character hex text; this
 * takes the raw 32 bytes, as every other signed key in the protocol's binary inputs is raw.
 */
export function certificateSeed(startMedian: bigint, providerPubKey: string): Uint8Array {
  return sha256(concatBytes(u64BE(startMedian), hexToBytes(providerPubKey, 32, 'provider_pub_key')));
}

/**
 * The end attestation's subject (the start one is the provider address itself): the provider address with hex characters [32, 48) zeroed. */
export function benchmarkEndSubject(provider: string): string {
  return `${provider.slice(0, 32)}${'0'.repeat(16)}${provider.slice(48)}`;
}

// ---- attestation Merkle root ---------------------------------------------------------------------

const LEAF = Uint8Array.of(0x00);
const NODE = Uint8Array.of(0x01);
export const EMPTY_ATTESTATION_ROOT = '0'.repeat(64);

/** Leaf = SHA-256(0x00 || public_key ASCII || timestamp i64 BE || signature ASCII): hex as text. */
function attestationLeaf(a: Attestation): Uint8Array {
  return sha256(concatBytes(LEAF, utf8(a.public_key), u64BE(a.timestamp), utf8(a.signature)));
}

/**
 * Merkle root of an attestation set: leaves sorted by public-key string, parents SHA-256(0x01 ||
 * left || right), an odd last node carried up unchanged (not paired with itself), and 64 zero
 * characters for the empty set.
 */
export function attestationMerkleRoot(attestations: readonly Attestation[]): string {
  if (attestations.length === 0) return EMPTY_ATTESTATION_ROOT;
  const sorted = [...attestations].sort((a, b) =>
    a.public_key < b.public_key ? -1 : a.public_key > b.public_key ? 1 : 0,
  );
  let level = sorted.map(attestationLeaf);
  while (level.length > 1) {
    const up: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      up.push(i + 1 < level.length ? sha256(concatBytes(NODE, level[i]!, level[i + 1]!)) : level[i]!);
    }
    level = up;
  }
  return bytesToHex(level[0]!);
}

// ---- hash and signature --------------------------------------------------------------------------

const CERT_TAG = domainTag('xe/perf-certificate/v1');

function float64BE(v: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setFloat64(0, v, false);
  return out;
}

/**
 * SHA-256 of the certificate's fields (reference-behavior.md 4.7 table): text fields lp8-framed as
 * the ASCII they are in JSON, integers 8 bytes BE, score as its IEEE-754 bits. The network id binds
 * a certificate to one network.
 */
export function certificateHashBytes(cert: UnsignedCertificate, networkId: string): Uint8Array {
  return sha256(
    concatBytes(
      CERT_TAG,
      lp8Text(networkId),
      lp8Text(cert.provider),
      lp8Text(cert.provider_pub_key),
      lp8Text(cert.seed),
      u64BE(cert.workload_version),
      u64BE(cert.iterations),
      lp8Text(cert.work_proof),
      float64BE(cert.score),
      lp8Text(cert.start_attestation_root),
      lp8Text(cert.end_attestation_root),
      u64BE(cert.start_median),
      u64BE(cert.end_median),
      u64BE(cert.issued_at),
      u64BE(cert.expires_at),
      u64BE(cert.price_multiplier_milli),
    ),
  );
}

export function certificateHash(cert: UnsignedCertificate, networkId: string): string {
  return bytesToHex(certificateHashBytes(cert, networkId));
}

/** The certificate with its fields in JSON order (signature and hash last). */
function ordered(c: PerformanceCertificate): PerformanceCertificate {
  const out: Record<string, unknown> = {};
  for (const f of CERTIFICATE_FIELDS) out[f] = c[f];
  return out as unknown as PerformanceCertificate;
}

/** Hashes and signs (Ed25519 over the 32 hash bytes) with the provider's 32-byte seed. */
export function signCertificate(
  cert: UnsignedCertificate,
  networkId: string,
  seed: Uint8Array,
  sign: (message: Uint8Array, seed: Uint8Array) => Uint8Array = signBytes,
): PerformanceCertificate {
  const hash = certificateHashBytes(cert, networkId);
  return ordered({ ...cert, signature: bytesToHex(sign(hash, seed)), hash: bytesToHex(hash) });
}

// ---- verification --------------------------------------------------------------------------------

export type CertificateErrorCode =
  | 'ERR_CERT_HASH' // the hash does not recompute
  | 'ERR_CERT_PROVIDER_KEY' // provider_pub_key does not derive provider
  | 'ERR_CERT_SIGNATURE' // the signature does not verify
  | 'ERR_CERT_SCORE' // score not > 0
  | 'ERR_CERT_WORKLOAD' // workload version or iterations other than expected
  | 'ERR_CERT_MULTIPLIER' // price_multiplier_milli outside 500..10,000
  | 'ERR_CERT_EXPIRED'; // now > expires_at

export class CertificateError extends Error {
  readonly code: CertificateErrorCode;
  constructor(code: CertificateErrorCode, message: string) {
    super(`certificate: ${message}`);
    this.name = 'CertificateError';
    this.code = code;
  }
}

export interface CertificateVerifyOptions {
  /** The workload the network pins (a development network may pin a smaller one). */
  workload?: Pick<Workload, 'workload_version' | 'iterations'>;
  verify?: Verifier;
}

/**
 * Content verification in the reference order: hash, key derives provider, signature, score > 0,
 * workload, multiplier range. The benchmark is not re-run and the attestations behind the roots
 * cannot be re-checked: only their roots are kept.
 */
export function verifyCertificateContent(
  cert: PerformanceCertificate,
  networkId: string,
  opts: CertificateVerifyOptions = {},
): void {
  const workload = opts.workload ?? REFERENCE_WORKLOAD;
  const verify = opts.verify ?? verifyBytes;
  const hash = certificateHashBytes(cert, networkId);
  if (bytesToHex(hash) !== cert.hash) {
    throw new CertificateError('ERR_CERT_HASH', 'hash does not match its fields');
  }
  let derived: string | undefined;
  try {
    derived = addressFromPublicKey(cert.provider_pub_key);
  } catch {
    derived = undefined; // not 64 lowercase hex: derives nothing
  }
  if (derived !== cert.provider) {
    throw new CertificateError('ERR_CERT_PROVIDER_KEY', 'provider_pub_key does not derive provider');
  }
  let signed: boolean;
  try {
    signed = verify(hexToBytes(cert.signature, 64), hash, hexToBytes(cert.provider_pub_key, 32));
  } catch {
    signed = false; // malformed hex
  }
  if (!signed) throw new CertificateError('ERR_CERT_SIGNATURE', 'invalid signature');
  if (!(cert.score > 0) || !Number.isFinite(cert.score)) {
    throw new CertificateError('ERR_CERT_SCORE', 'score must be greater than 0');
  }
  if (cert.workload_version !== workload.workload_version || cert.iterations !== workload.iterations) {
    throw new CertificateError(
      'ERR_CERT_WORKLOAD',
      `workload ${cert.workload_version}/${cert.iterations}, expected ${workload.workload_version}/${workload.iterations}`,
    );
  }
  const m = cert.price_multiplier_milli;
  if (m < MIN_PRICE_MULTIPLIER_MILLI || m > MAX_PRICE_MULTIPLIER_MILLI) {
    throw new CertificateError(
      'ERR_CERT_MULTIPLIER',
      `price_multiplier_milli ${m} outside ${MIN_PRICE_MULTIPLIER_MILLI}..${MAX_PRICE_MULTIPLIER_MILLI}`,
    );
  }
}

/** Content verification, then now ≤ expires_at. */
export function verifyCertificate(
  cert: PerformanceCertificate,
  networkId: string,
  now: bigint,
  opts: CertificateVerifyOptions = {},
): void {
  verifyCertificateContent(cert, networkId, opts);
  if (now > cert.expires_at) {
    throw new CertificateError('ERR_CERT_EXPIRED', `expired at ${cert.expires_at}`);
  }
}

// ---- JSON ----------------------------------------------------------------------------------------

function scoreField(o: JsonObject): number {
  const v = o.score;
  if (v === undefined || v === null) throw new ProtocolError('ERR_FIELD_MISSING', 'required', 'score');
  // The lossless parser hands a whole number written as 1.0 or 1e0 over as RawJson.
  const n = v instanceof RawJson ? v.value : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    throw new ProtocolError('ERR_FIELD_TYPE', 'expected a number', 'score');
  }
  return n;
}

/** Decodes certificate JSON (from the lossless parser); every problem names its field. */
export function decodeCertificate(json: unknown): PerformanceCertificate {
  const o = jsonObject(json, 'certificate');
  return {
    provider: hexField(o, 'provider', 32),
    provider_pub_key: hexField(o, 'provider_pub_key', 32),
    seed: hexField(o, 'seed', 32),
    workload_version: intField(o, 'workload_version', 'u64'),
    iterations: intField(o, 'iterations', 'u64'),
    work_proof: hexField(o, 'work_proof', 32),
    score: scoreField(o),
    start_attestation_root: hexField(o, 'start_attestation_root', 32),
    end_attestation_root: hexField(o, 'end_attestation_root', 32),
    start_median: intField(o, 'start_median', 'i64'),
    end_median: intField(o, 'end_median', 'i64'),
    issued_at: intField(o, 'issued_at', 'i64'),
    expires_at: intField(o, 'expires_at', 'i64'),
    price_multiplier_milli: intField(o, 'price_multiplier_milli', 'u64'),
    signature: hexField(o, 'signature', 64),
    hash: hexField(o, 'hash', 32),
  };
}

/** The JSON object in specification order (serialise with stringifyJson: bigints stay exact). */
export function certificateToJson(cert: PerformanceCertificate): Record<string, unknown> {
  return { ...ordered(cert) };
}
