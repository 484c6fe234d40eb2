import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyBytesNode } from '../../node-core/fastpath/ed25519.ts';
import { ProtocolError } from '../../node-core/protocol/errors.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { parseJson, stringifyJson } from '../../node-core/protocol/json.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import {
  decodeMarketplaceGossip,
  decodeMarketplaceMessage,
  isRequestId,
  MarketplaceError,
  marketplaceDigest,
  marketplaceRequestId,
  type MarketplaceKind,
  type MarketplaceMessages,
  signMarketplaceMessage,
  type UnsignedMarketplace,
  verifyMarketplaceMessage,
} from '../../node-core/protocol/marketplace.ts';

// The pre-image built by hand from protocol.md 8.7: tag, 0x00, then u64-BE-length-framed ASCII.
const ascii = (s: string) => new TextEncoder().encode(s);
function lp8(s: string): Buffer {
  const b = ascii(s);
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(b.length));
  return Buffer.concat([len, b]);
}
function digest(tag: string, net: string, fields: string[]): string {
  return createHash('sha256')
    .update(Buffer.concat([Buffer.from(ascii(tag)), Buffer.of(0), lp8(net), ...fields.map(lp8)]))
    .digest('hex');
}
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const NET = 'testnet-0003';
const provider = keyPairFromSeed(new Uint8Array(32).fill(21));
const consumer = keyPairFromSeed(new Uint8Array(32).fill(22));
const stranger = keyPairFromSeed(new Uint8Array(32).fill(23));
const T = 1_790_155_844_400_578_712n;
const requestId = marketplaceRequestId(consumer.address, T);

const ad: UnsignedMarketplace<'advertisement'> = {
  provider: provider.address,
  provider_pub_key: provider.pub_key,
  vcpus: 2n,
  memory_mb: 2048n,
  disk_gb: 20n,
  max_concurrent_leases: 4n,
  timestamp: T,
};
const request: UnsignedMarketplace<'request'> = {
  consumer: consumer.address,
  consumer_pub_key: consumer.pub_key,
  request_id: requestId,
  vcpus: 1n,
  memory_mb: 1024n,
  disk_gb: 1n,
  duration: 300n,
  timestamp: T,
};
const offer: UnsignedMarketplace<'offer'> = {
  provider: provider.address,
  provider_pub_key: provider.pub_key,
  request_id: requestId,
  vcpus: 1n,
  memory_mb: 1024n,
  disk_gb: 1n,
  duration: 300n,
  total_cost: 18_446_744_073_709_551_615n,
  certificate_hash: 'c0'.repeat(32),
  timestamp: T,
};

describe('signing digests, byte for byte', () => {
  it('advertisement: provider, provider_pub_key, vcpus, memory_mb, disk_gb, max_concurrent_leases, timestamp', () => {
    expect(hex(marketplaceDigest('advertisement', ad, NET))).toBe(
      digest('xe/marketplace-advertisement/v1', NET, [
        provider.address,
        provider.pub_key,
        '2',
        '2048',
        '20',
        '4',
        '1790155844400578712',
      ]),
    );
  });

  it('request: consumer, consumer_pub_key, request_id, vcpus, memory_mb, disk_gb, duration, timestamp', () => {
    expect(hex(marketplaceDigest('request', request, NET))).toBe(
      digest('xe/marketplace-request/v1', NET, [
        consumer.address,
        consumer.pub_key,
        `${consumer.address.slice(0, 16)}-1790155844400578712`,
        '1',
        '1024',
        '1',
        '300',
        '1790155844400578712',
      ]),
    );
  });

  it('offer: ..., duration, total_cost, certificate_hash, timestamp', () => {
    expect(hex(marketplaceDigest('offer', offer, NET))).toBe(
      digest('xe/marketplace-offer/v1', NET, [
        provider.address,
        provider.pub_key,
        requestId,
        '1',
        '1024',
        '1',
        '300',
        '18446744073709551615',
        'c0'.repeat(32),
        '1790155844400578712',
      ]),
    );
  });

  it('binds the network id and the kind', () => {
    const a = hex(marketplaceDigest('request', request, NET));
    expect(hex(marketplaceDigest('request', request, 'testnet-0001'))).not.toBe(a);
    expect(hex(marketplaceDigest('offer', { ...offer }, NET))).not.toBe(a);
  });
});

describe('sign and verify', () => {
  const cases: [MarketplaceKind, object, typeof provider][] = [
    ['advertisement', ad, provider],
    ['request', request, consumer],
    ['offer', offer, provider],
  ];
  const failCode = (f: () => void) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(MarketplaceError);
      return (e as MarketplaceError).code;
    }
    return undefined;
  };

  for (const [kind, msg, signer] of cases) {
    describe(kind, () => {
      const signed = signMarketplaceMessage(kind, msg as never, NET, hexToBytes(signer.seed_hex));

      it('signs Ed25519 over the 32 digest bytes', () => {
        expect(
          verifyBytesNode(
            hexToBytes(signed.signature),
            marketplaceDigest(kind, msg as never, NET),
            hexToBytes(signer.pub_key),
          ),
        ).toBe(true);
        expect(failCode(() => verifyMarketplaceMessage(kind, signed, NET))).toBeUndefined();
        expect(failCode(() => verifyMarketplaceMessage(kind, signed, NET, verifyBytesNode))).toBeUndefined();
      });

      it('refuses a key that does not derive the claimed address', () => {
        const account = kind === 'request' ? 'consumer' : 'provider';
        const other = { ...(msg as Record<string, unknown>), [account]: stranger.address };
        const resigned = signMarketplaceMessage(kind, other as never, NET, hexToBytes(signer.seed_hex));
        expect(failCode(() => verifyMarketplaceMessage(kind, resigned, NET))).toBe('ERR_MARKET_KEY');
      });

      it('refuses a changed field, another network, another signer', () => {
        const changed = { ...signed, vcpus: 3n } as MarketplaceMessages[typeof kind];
        expect(failCode(() => verifyMarketplaceMessage(kind, changed, NET))).toBe('ERR_MARKET_SIGNATURE');
        expect(failCode(() => verifyMarketplaceMessage(kind, signed, 'other'))).toBe('ERR_MARKET_SIGNATURE');
        const forged = signMarketplaceMessage(kind, msg as never, NET, hexToBytes(stranger.seed_hex));
        expect(failCode(() => verifyMarketplaceMessage(kind, forged, NET))).toBe('ERR_MARKET_SIGNATURE');
        const junk = { ...signed, signature: 'xyz' };
        expect(failCode(() => verifyMarketplaceMessage(kind, junk, NET))).toBe('ERR_MARKET_SIGNATURE');
      });

      it('round-trips through JSON text', () => {
        const back = decodeMarketplaceMessage(kind, parseJson(stringifyJson(signed)));
        expect(back).toEqual(signed);
      });
    });
  }
});

describe('request id', () => {
  it('is the first 16 hex characters of the consumer address, "-", the time in ns', () => {
    expect(requestId).toBe(`${consumer.address.slice(0, 16)}-1790155844400578712`);
    expect(isRequestId(requestId)).toBe(true);
  });

  it('refuses other forms', () => {
    for (const bad of [
      '',
      `${consumer.address.slice(0, 15)}-1`,
      `${consumer.address.slice(0, 16)}-`,
      `${consumer.address.slice(0, 16)}-01`,
      `${consumer.address.slice(0, 16)}--1`,
      `${consumer.address.slice(0, 16).toUpperCase()}-1`,
      `${consumer.address.slice(0, 16)}-9223372036854775808`, // 2^63
      42,
    ]) {
      expect(isRequestId(bad)).toBe(false);
    }
    expect(isRequestId(`${consumer.address.slice(0, 16)}-9223372036854775807`)).toBe(true);
  });
});

describe('gossip payloads', () => {
  const sAd = signMarketplaceMessage('advertisement', ad, NET, hexToBytes(provider.seed_hex));
  const sReq = signMarketplaceMessage('request', request, NET, hexToBytes(consumer.seed_hex));
  const sOffer = signMarketplaceMessage('offer', offer, NET, hexToBytes(provider.seed_hex));

  it('decodes {type:"ad"|"request"|"offer", …}', () => {
    const text = (o: object) => parseJson(stringifyJson(o));
    expect(decodeMarketplaceGossip(text({ type: 'ad', ad: sAd }))).toEqual({ type: 'ad', ad: sAd });
    expect(decodeMarketplaceGossip(text({ type: 'request', request: sReq }))).toEqual({
      type: 'request',
      request: sReq,
    });
    expect(decodeMarketplaceGossip(text({ type: 'offer', offer: sOffer }))).toEqual({
      type: 'offer',
      offer: sOffer,
    });
  });

  it('names the field at fault', () => {
    const field = (v: unknown) => {
      try {
        decodeMarketplaceGossip(v);
      } catch (e) {
        expect(e).toBeInstanceOf(ProtocolError);
        return (e as ProtocolError).field;
      }
      return undefined;
    };
    expect(field({ type: 'advertisement', ad: sAd })).toBe('type');
    expect(field({ type: 'ad' })).toBe('ad');
    expect(field({ type: 'offer', offer: { ...sOffer, request_id: 'r1' } })).toBe('request_id');
    expect(field({ type: 'offer', offer: { ...sOffer, certificate_hash: 'C0'.repeat(32) } })).toBe(
      'certificate_hash',
    );
    expect(field({ type: 'request', request: { ...sReq, duration: '-1' } })).toBe('duration');
    expect(field({ type: 'ad', ad: { ...sAd, signature: undefined } })).toBe('signature');
  });
});
