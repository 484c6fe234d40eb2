import { ProtocolError } from './errors.ts';
import { hexField, intField, jsonObject, type JsonObject, stringField } from './fields.ts';
import { domainTag, lp8Text } from './framing.ts';
import { sha256 } from './hash.ts';
import { bytesToHex, concatBytes, hexToBytes } from './hex.ts';
import type { IntKind } from './int.ts';
import { addressFromPublicKey, signBytes, type Verifier, verifyBytes } from './keys.ts';

/**
 * Marketplace messages on gossip topic `xe/marketplace` (protocol.md 8.7, reference-behavior.md
 * 4.9): a provider's advertisement, a consumer's request and a provider's offer. Each is signed
 * with Ed25519 over SHA-256(tag || 0x00 || lp8(network id) || lp8 of each field in the order
 * below), integers framed as their decimal text. The field order is the specification's listing
 * (it marks the exact order UNCONFIRMED).
 */

export interface MarketplaceAdvertisement {
  provider: string;
  provider_pub_key: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  max_concurrent_leases: bigint;
  timestamp: bigint;
  signature: string;
}

export interface MarketplaceRequest {
  consumer: string;
  consumer_pub_key: string;
  /** See marketplaceRequestId. */
  request_id: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  timestamp: bigint;
  signature: string;
}

export interface MarketplaceOffer {
  provider: string;
  provider_pub_key: string;
  request_id: string;
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
  total_cost: bigint;
  certificate_hash: string;
  timestamp: bigint;
  signature: string;
}

export interface MarketplaceMessages {
  advertisement: MarketplaceAdvertisement;
  request: MarketplaceRequest;
  offer: MarketplaceOffer;
}
export type MarketplaceKind = keyof MarketplaceMessages;
export type UnsignedMarketplace<K extends MarketplaceKind> = Omit<MarketplaceMessages[K], 'signature'>;

/** The gossip payloads: `{type:"ad", ad}`, `{type:"request", request}`, `{type:"offer", offer}`. */
export type MarketplaceGossip =
  | { type: 'ad'; ad: MarketplaceAdvertisement }
  | { type: 'request'; request: MarketplaceRequest }
  | { type: 'offer'; offer: MarketplaceOffer };

type FieldKind = 'hex32' | 'request_id' | IntKind;

interface Schema {
  tag: Uint8Array;
  /** The signer's address field and the key that must derive it. */
  account: string;
  pubKey: string;
  /** Signed fields in order, with how each is read from JSON. */
  fields: readonly (readonly [string, FieldKind])[];
}

const SCHEMAS: Record<MarketplaceKind, Schema> = {
  advertisement: {
    tag: domainTag('xe/marketplace-advertisement/v1'),
    account: 'provider',
    pubKey: 'provider_pub_key',
    fields: [
      ['provider', 'hex32'],
      ['provider_pub_key', 'hex32'],
      ['vcpus', 'u64'],
      ['memory_mb', 'u64'],
      ['disk_gb', 'u64'],
      ['max_concurrent_leases', 'u64'],
      ['timestamp', 'i64'],
    ],
  },
  request: {
    tag: domainTag('xe/marketplace-request/v1'),
    account: 'consumer',
    pubKey: 'consumer_pub_key',
    fields: [
      ['consumer', 'hex32'],
      ['consumer_pub_key', 'hex32'],
      ['request_id', 'request_id'],
      ['vcpus', 'u64'],
      ['memory_mb', 'u64'],
      ['disk_gb', 'u64'],
      ['duration', 'u64'],
      ['timestamp', 'i64'],
    ],
  },
  offer: {
    tag: domainTag('xe/marketplace-offer/v1'),
    account: 'provider',
    pubKey: 'provider_pub_key',
    fields: [
      ['provider', 'hex32'],
      ['provider_pub_key', 'hex32'],
      ['request_id', 'request_id'],
      ['vcpus', 'u64'],
      ['memory_mb', 'u64'],
      ['disk_gb', 'u64'],
      ['duration', 'u64'],
      ['total_cost', 'u64'],
      ['certificate_hash', 'hex32'],
      ['timestamp', 'i64'],
    ],
  },
};

/** The 32 bytes that are signed: SHA-256 of the tagged, lp8-framed network id and fields. */
export function marketplaceDigest<K extends MarketplaceKind>(
  kind: K,
  msg: UnsignedMarketplace<K>,
  networkId: string,
): Uint8Array {
  const schema = SCHEMAS[kind];
  const values = msg as unknown as Record<string, string | bigint>;
  const parts = [schema.tag, lp8Text(networkId)];
  for (const [name] of schema.fields) {
    const v = values[name];
    if (v === undefined) throw new ProtocolError('ERR_FIELD_MISSING', 'required', name);
    parts.push(lp8Text(typeof v === 'bigint' ? v.toString(10) : v));
  }
  return sha256(concatBytes(...parts));
}

export function signMarketplaceMessage<K extends MarketplaceKind>(
  kind: K,
  msg: UnsignedMarketplace<K>,
  networkId: string,
  seed: Uint8Array,
): MarketplaceMessages[K] {
  const signature = bytesToHex(signBytes(marketplaceDigest(kind, msg, networkId), seed));
  return { ...msg, signature } as MarketplaceMessages[K];
}

export type MarketplaceErrorCode =
  | 'ERR_MARKET_KEY' // the public key does not derive the claimed address
  | 'ERR_MARKET_SIGNATURE'; // the signature does not verify

export class MarketplaceError extends Error {
  readonly code: MarketplaceErrorCode;
  constructor(code: MarketplaceErrorCode, message: string) {
    super(message);
    this.name = 'MarketplaceError';
    this.code = code;
  }
}

/** Checks that the key derives the claimed address, then the signature; throws MarketplaceError. */
export function verifyMarketplaceMessage<K extends MarketplaceKind>(
  kind: K,
  msg: MarketplaceMessages[K],
  networkId: string,
  verify: Verifier = verifyBytes,
): void {
  const schema = SCHEMAS[kind];
  const values = msg as unknown as Record<string, string>;
  const pubKey = values[schema.pubKey]!;
  let derived: string | undefined;
  try {
    derived = addressFromPublicKey(pubKey);
  } catch {
    derived = undefined;
  }
  if (derived !== values[schema.account]) {
    throw new MarketplaceError('ERR_MARKET_KEY', `${schema.pubKey} does not derive ${schema.account}`);
  }
  let ok: boolean;
  try {
    ok = verify(
      hexToBytes(msg.signature, 64),
      marketplaceDigest(kind, msg, networkId),
      hexToBytes(pubKey, 32),
    );
  } catch {
    ok = false; // malformed hex
  }
  if (!ok) throw new MarketplaceError('ERR_MARKET_SIGNATURE', `invalid ${kind} signature`);
}

// ---- request id ----------------------------------------------------------------------------------

const REQUEST_ID = /^[0-9a-f]{16}-(0|[1-9][0-9]{0,18})$/;

/** request_id = the first 16 hex characters of the consumer address, "-", the time in ns. */
export function marketplaceRequestId(consumer: string, timeNs: bigint): string {
  return `${consumer.slice(0, 16)}-${timeNs.toString(10)}`;
}

export function isRequestId(s: unknown): s is string {
  return typeof s === 'string' && REQUEST_ID.test(s) && BigInt(s.slice(17)) < 1n << 63n;
}

// ---- JSON ----------------------------------------------------------------------------------------

function readField(o: JsonObject, name: string, kind: FieldKind): string | bigint {
  if (kind === 'hex32') return hexField(o, name, 32);
  if (kind === 'request_id') {
    const v = stringField(o, name);
    if (!isRequestId(v)) {
      throw new ProtocolError('ERR_FIELD_TYPE', 'expected 16 hex characters, "-" and a time', name);
    }
    return v;
  }
  return intField(o, name, kind);
}

/** Decodes one message from JSON (lossless parser); every problem is a ProtocolError naming the field. */
export function decodeMarketplaceMessage<K extends MarketplaceKind>(
  kind: K,
  json: unknown,
  field: string = kind,
): MarketplaceMessages[K] {
  const o = jsonObject(json, field);
  const out: Record<string, string | bigint> = {};
  for (const [name, fieldKind] of SCHEMAS[kind].fields) out[name] = readField(o, name, fieldKind);
  out.signature = hexField(o, 'signature', 64);
  return out as unknown as MarketplaceMessages[K];
}

const GOSSIP_KEYS = { ad: 'advertisement', request: 'request', offer: 'offer' } as const;

/** Decodes a gossip payload `{type, ad|request|offer}`. */
export function decodeMarketplaceGossip(json: unknown): MarketplaceGossip {
  const o = jsonObject(json);
  const type = o.type;
  if (type !== 'ad' && type !== 'request' && type !== 'offer') {
    throw new ProtocolError('ERR_FIELD_TYPE', 'expected "ad", "request" or "offer"', 'type');
  }
  const message = decodeMarketplaceMessage(GOSSIP_KEYS[type], o[type], type);
  return { type, [type]: message } as MarketplaceGossip;
}
