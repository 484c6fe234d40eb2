import { describe, expect, it } from 'vitest';
import {
  type Block,
  blockHash,
  blockToJson,
  bytesToHex,
  decodeBlock,
  decodeCanonical,
  encodeAux,
  encodeCanonical,
  keyPairFromSeed,
  hexToBytes,
  multisigAddress,
  parseJson,
  ProtocolError,
  sha256,
  signBlock,
  signBlockMultisig,
  stringifyJson,
  utf8,
  verifyBlockSignature,
  verifyHashSignature,
  ZERO_HASH,
} from '../../node-core/protocol/index.ts';

/** Hand-computed layouts for the types the vectors lack: every byte written out from the spec. */
const A = 'aa'.repeat(32); // account
const P = 'bb'.repeat(32); // previous
const R = 'cc'.repeat(32); // representative
const be8 = (v: bigint) => v.toString(16).padStart(16, '0');
const asset = (s: string) => bytesToHex(utf8(s)).padEnd(16, '0');
const header = (typeByte: string, a: string, prev: string, bal: bigint, ts: bigint) =>
  `02${typeByte}${asset(a)}${A}${prev}${be8(bal)}${be8(ts)}`;

describe('canonical layouts of types without vectors', () => {
  it('claim (0x03, decisions D6): header, amount, representative = 130 bytes', () => {
    const b: Block = {
      type: 'claim',
      account: A,
      previous: ZERO_HASH,
      balance: 1_000_000_000n,
      timestamp: 5n,
      asset: 'XE',
      amount: 1_000_000_000n,
      representative: R,
    };
    const hex = bytesToHex(encodeCanonical(b));
    expect(hex).toBe(header('03', 'XE', ZERO_HASH, 1_000_000_000n, 5n) + be8(1_000_000_000n) + R);
    expect(hex.length / 2).toBe(130);
    expect(decodeCanonical(hexToBytes(hex))).toEqual(b);
  });

  it('asset field: each name padded to 8 bytes, refusals every time, however many names were seen', () => {
    const claim = (asset: string): Block => ({
      type: 'claim',
      account: A,
      previous: ZERO_HASH,
      balance: 1n,
      timestamp: 5n,
      asset,
      amount: 1n,
      representative: R,
    });
    const assetHex = (asset: string) => bytesToHex(utf8(asset)).padEnd(16, '0');
    // More names than the encoder keeps (16), twice over: each encodes as its own bytes, not another's.
    const names = Array.from({ length: 40 }, (_, i) => `A${i}`);
    for (const asset of [...names, ...names, 'XE', 'XUSD', 'XE']) {
      const bytes = encodeCanonical(claim(asset));
      expect(bytesToHex(bytes.subarray(2, 10)), asset).toBe(assetHex(asset));
      expect(decodeCanonical(bytes).asset).toBe(asset);
    }
    for (const bad of ['', 'NINEBYTES', 'X\u0000E']) {
      for (let i = 0; i < 2; i++) expect(() => encodeCanonical(claim(bad)), bad).toThrow(ProtocolError);
    }
  });

  it('mint (0x0d): no memo trailer, absent representative as zeros = 130 bytes', () => {
    const b: Block = {
      type: 'mint',
      account: A,
      previous: P,
      balance: 7n,
      timestamp: 9n,
      asset: 'XUSD',
      amount: 3n,
    };
    const hex = bytesToHex(encodeCanonical(b));
    expect(hex).toBe(header('0d', 'XUSD', P, 7n, 9n) + be8(3n) + '00'.repeat(32));
    expect(hex.length / 2).toBe(130);
    expect(decodeCanonical(hexToBytes(hex))).toEqual(b);
  });

  it('genesis (0x07): 122 bytes without timing, 170 with the six-field tail', () => {
    const g: Block = {
      type: 'genesis',
      account: A,
      previous: ZERO_HASH,
      balance: 42_000_000_000_000n,
      timestamp: 0n,
      asset: 'XE',
      representative: R,
    };
    const plain = bytesToHex(encodeCanonical(g));
    expect(plain).toBe(header('07', 'XE', ZERO_HASH, 42_000_000_000_000n, 0n) + R);
    expect(plain.length / 2).toBe(122);
    const timed: Block = {
      ...g,
      lease_min_duration_secs: 5n,
      lease_settle_grace_ns: 120_000_000_000n,
      lease_force_settle_gap_ns: 300_000_000_000n,
      lease_escrow_expiry_ns: 3_600_000_000_000n,
      lease_archive_gap_ns: 600_000_000_000n,
      max_attestation_skew_ns: 60_000_000_000n,
    };
    const withTail = bytesToHex(encodeCanonical(timed));
    expect(withTail).toBe(
      plain +
        [5n, 120_000_000_000n, 300_000_000_000n, 3_600_000_000_000n, 600_000_000_000n, 60_000_000_000n]
          .map(be8)
          .join(''),
    );
    expect(withTail.length / 2).toBe(170);
    expect(decodeCanonical(hexToBytes(withTail))).toEqual(timed);
    // One non-zero field is enough for the whole tail.
    expect(encodeCanonical({ ...g, lease_archive_gap_ns: 1n }).length).toBe(170);
  });

  it('genesis hashes with an empty network id whatever id is passed', () => {
    const g: Block = {
      type: 'genesis',
      account: A,
      previous: ZERO_HASH,
      balance: 1n,
      timestamp: 0n,
      asset: 'XE',
      representative: R,
      pub_key: 'dd'.repeat(32),
    };
    const expected = bytesToHex(sha256(new Uint8Array([...encodeCanonical(g), ...encodeAux(g)])));
    expect(blockHash(g, 'testnet-0003')).toBe(expected);
    expect(blockHash(g, '')).toBe(expected);
    expect(() => blockHash({ ...g, type: 'send', destination: R, amount: 1n }, '')).toThrow(ProtocolError);
  });

  it('multisig_open (0x08) and multisig_update (0x09): threshold, count, keys sorted by hex = 130 + 32n', () => {
    const keys = ['ff'.repeat(32), '01'.repeat(32), '80'.repeat(32)];
    const b: Block = {
      type: 'multisig_open',
      account: A,
      previous: ZERO_HASH,
      balance: 0n,
      timestamp: 1n,
      asset: 'XE',
      keyset: { keys, threshold: 2 },
    };
    const hex = bytesToHex(encodeCanonical(b));
    const sortedKeys = ['01'.repeat(32), '80'.repeat(32), 'ff'.repeat(32)].join('');
    expect(hex).toBe(
      header('08', 'XE', ZERO_HASH, 0n, 1n) + '00000002' + '00000003' + sortedKeys + '00'.repeat(32),
    );
    expect(hex.length / 2).toBe(130 + 32 * 3);
    const upd = bytesToHex(encodeCanonical({ ...b, type: 'multisig_update', previous: P }));
    expect(upd.slice(2, 4)).toBe('09');
    expect(decodeCanonical(hexToBytes(hex)).keyset).toEqual({
      keys: sortedKeys.match(/.{64}/g),
      threshold: 2,
    });
  });

  it('send memo trailer: length byte then UTF-8 bytes, limit 64 bytes not characters', () => {
    const base: Block = {
      type: 'send',
      account: A,
      previous: P,
      balance: 1n,
      timestamp: 1n,
      asset: 'XE',
      destination: R,
      amount: 1n,
    };
    expect(bytesToHex(encodeCanonical(base)).slice(-2)).toBe('00');
    expect(bytesToHex(encodeCanonical({ ...base, memo: 'é' })).slice(-6)).toBe('02c3a9');
    expect(encodeCanonical({ ...base, memo: 'é'.repeat(32) }).length).toBe(163 + 64);
    expect(() => encodeCanonical({ ...base, memo: 'é'.repeat(33) })).toThrow(/64/);
  });
});

describe('multisig addresses and signatures', () => {
  const seeds = [1, 2, 3].map((i) => new Uint8Array(32).fill(i));
  const kps = seeds.map((s) => keyPairFromSeed(s));

  it('derives the address from threshold, count and sorted raw keys (no tag)', () => {
    const keys = kps.map((k) => k.pub_key);
    const sorted = [...keys].sort();
    const pre = '00000002' + '00000003' + sorted.join('');
    expect(multisigAddress({ keys, threshold: 2 })).toBe(bytesToHex(sha256(hexToBytes(pre))));
    // Key order does not matter; the threshold does.
    expect(multisigAddress({ keys: [...keys].reverse(), threshold: 2 })).toBe(
      multisigAddress({ keys, threshold: 2 }),
    );
    expect(multisigAddress({ keys, threshold: 3 })).not.toBe(multisigAddress({ keys, threshold: 2 }));
  });

  it('rejects bad keysets with a typed error', () => {
    const k = kps[0]!.pub_key;
    expect(() => multisigAddress({ keys: [k, k], threshold: 1 })).toThrow(/duplicate/);
    expect(() => multisigAddress({ keys: [k], threshold: 2 })).toThrow(/threshold/);
    expect(() => multisigAddress({ keys: [], threshold: 1 })).toThrow(/non-empty/);
    expect(() => multisigAddress({ keys: [k.toUpperCase()], threshold: 1 })).toThrow(ProtocolError);
  });

  it('signs a multisig block by several members without pub_key; each signature verifies over the hash', () => {
    const keyset = { keys: kps.map((k) => k.pub_key), threshold: 2 };
    const account = multisigAddress(keyset);
    const open: Block = {
      type: 'multisig_open',
      account,
      previous: ZERO_HASH,
      balance: 0n,
      timestamp: 10n,
      asset: 'XE',
      keyset,
    };
    const signed = signBlockMultisig(open, [seeds[0]!, seeds[2]!], 'devnet');
    expect(signed.pub_key).toBeUndefined();
    expect(signed.signature).toBeUndefined();
    expect(signed.signatures).toHaveLength(2);
    const hash = hexToBytes(signed.hash);
    for (const s of signed.signatures!)
      expect(verifyHashSignature(hash, s.signature, s.public_key)).toBe(true);
    expect(verifyHashSignature(hash, signed.signatures![0]!.signature, kps[1]!.pub_key)).toBe(false);
    // Round trip through JSON keeps everything that is hashed.
    const back = decodeBlock(parseJson(stringifyJson(blockToJson(signed))));
    expect(blockHash(back, 'devnet')).toBe(signed.hash);
  });
});

describe('claim blocks sign and verify end to end', () => {
  it('an opening claim declares pub_key; a later one does not', () => {
    const seed = new Uint8Array(32).fill(9);
    const kp = keyPairFromSeed(seed);
    const first = signBlock(
      {
        type: 'claim',
        account: kp.address,
        previous: ZERO_HASH,
        balance: 5n,
        timestamp: 1n,
        asset: 'XE',
        amount: 5n,
      },
      seed,
      'devnet',
    );
    expect(first.pub_key).toBe(kp.pub_key);
    expect(verifyBlockSignature(first, 'devnet', kp.pub_key)).toBe(true);
    const second = signBlock(
      {
        type: 'claim',
        account: kp.address,
        previous: first.hash,
        balance: 10n,
        timestamp: 2n,
        asset: 'XE',
        amount: 5n,
        pub_key: kp.pub_key,
      },
      seed,
      'devnet',
    );
    expect(second.pub_key).toBeUndefined();
    expect(encodeAux(second).length).toBe(0);
    expect(verifyBlockSignature(second, 'devnet', kp.pub_key)).toBe(true);
    // Tampering with a hashed field breaks the signature.
    expect(verifyBlockSignature({ ...second, amount: 6n }, 'devnet', kp.pub_key)).toBe(false);
  });
});
