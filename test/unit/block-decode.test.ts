import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  blockHash,
  blockToJson,
  decodeBlock,
  decodeCanonical,
  encodeCanonical,
  hexToBytes,
  parseJson,
  ProtocolError,
  stringifyJson,
} from '../../node-core/protocol/index.ts';
import { vectors } from '../helpers/vectors.ts';

const byName = (n: string) => vectors.vectors.find((v) => v.name === n && v.network_id === 'testnet-0003')!;
const send = byName('send_xusd_with_memo').block;
const lease = byName('lease_renew_attested').block;

function expectField(fn: () => unknown, code: string, field: string | undefined) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    expect((e as ProtocolError).code).toBe(code);
    expect((e as ProtocolError).field).toBe(field);
    return;
  }
  throw new Error('expected a ProtocolError');
}

describe('decoding malformed block JSON gives a typed error naming the field', () => {
  const cases: [string, Record<string, unknown>, string, string | undefined][] = [
    ['not an object', [] as unknown as Record<string, unknown>, 'ERR_FIELD_TYPE', 'block'],
    ['unknown type', { ...send, type: 'teleport' }, 'ERR_UNKNOWN_TYPE', 'type'],
    ['type not a string', { ...send, type: 1 }, 'ERR_FIELD_TYPE', 'type'],
    ['short account', { ...send, account: 'abcd' }, 'ERR_HEX', 'account'],
    ['non-hex account', { ...send, account: 'zz'.repeat(32) }, 'ERR_HEX', 'account'],
    ['previous empty', { ...send, previous: '' }, 'ERR_HEX', 'previous'],
    ['balance negative', { ...send, balance: -1 }, 'ERR_FIELD_RANGE', 'balance'],
    ['balance past 2^64', { ...send, balance: 18446744073709551616n }, 'ERR_FIELD_RANGE', 'balance'],
    ['balance as float', { ...send, balance: 1.5 }, 'ERR_FIELD_TYPE', 'balance'],
    ['balance as object', { ...send, balance: {} }, 'ERR_FIELD_TYPE', 'balance'],
    ['timestamp missing', { ...send, timestamp: undefined }, 'ERR_FIELD_TYPE', 'timestamp'],
    ['timestamp past i64', { ...send, timestamp: '9223372036854775808' }, 'ERR_FIELD_RANGE', 'timestamp'],
    ['asset too long', { ...send, asset: 'NINEBYTES' }, 'ERR_ASSET', 'asset'],
    ['asset empty', { ...send, asset: '' }, 'ERR_ASSET', 'asset'],
    ['asset with NUL', { ...send, asset: 'X\u0000E' }, 'ERR_ASSET', 'asset'],
    [
      'asset of 9 UTF-8 bytes in 3 characters',
      { ...send, asset: '\u20ac\u20ac\u20ac' },
      'ERR_ASSET',
      'asset',
    ],
    ['destination missing on send', { ...send, destination: undefined }, 'ERR_FIELD_MISSING', 'destination'],
    ['amount missing on send', { ...send, amount: undefined }, 'ERR_FIELD_MISSING', 'amount'],
    ['memo too long', { ...send, memo: 'x'.repeat(65) }, 'ERR_MEMO', 'memo'],
    ['memo with a control byte', { ...send, memo: 'a\u0000b' }, 'ERR_MEMO', 'memo'],
    ['memo with DEL', { ...send, memo: 'a\u007fb' }, 'ERR_MEMO', 'memo'],
    ['memo with a lone surrogate', { ...send, memo: 'a\ud800b' }, 'ERR_MEMO', 'memo'],
    ['memo on a receive', { ...byName('receive_xe').block, memo: 'hi' }, 'ERR_FIELD_FORBIDDEN', 'memo'],
    [
      'genesis timing on a send',
      { ...send, lease_settle_grace_ns: 5 },
      'ERR_FIELD_FORBIDDEN',
      'lease_settle_grace_ns',
    ],
    ['signature too short', { ...send, signature: 'ab' }, 'ERR_HEX', 'signature'],
    ['pow_nonce past u64', { ...send, pow_nonce: '18446744073709551616' }, 'ERR_FIELD_RANGE', 'pow_nonce'],
    [
      'too many attestations',
      { ...lease, attestations: Array(21).fill((lease.attestations as unknown[])[0]) },
      'ERR_FIELD_RANGE',
      'attestations',
    ],
    [
      'attestation with upper-case key',
      {
        ...lease,
        attestations: [
          { ...(lease.attestations as Record<string, unknown>[])[0], public_key: 'AA'.repeat(32) },
        ],
      },
      'ERR_HEX',
      'attestations.0.public_key',
    ],
    [
      'attestation timestamp as text',
      {
        ...lease,
        attestations: [{ ...(lease.attestations as Record<string, unknown>[])[0], timestamp: 'soon' }],
      },
      'ERR_FIELD_TYPE',
      'attestations.0.timestamp',
    ],
    [
      'multisig keyset missing',
      { ...send, type: 'multisig_open', keyset: undefined },
      'ERR_FIELD_MISSING',
      'keyset',
    ],
    [
      'multisig threshold too high',
      { ...send, type: 'multisig_open', keyset: { keys: ['ab'.repeat(32)], threshold: 2 } },
      'ERR_KEYSET',
      'keyset.threshold',
    ],
    ['signatures empty', { ...send, signatures: [] }, 'ERR_FIELD_RANGE', 'signatures'],
  ];
  for (const [name, json, code, field] of cases) {
    it(name, () => expectField(() => decodeBlock(json), code, field));
  }

  // Through JSON text, as a client sends it: `1.0` or `-0` in a JS object literal is already a plain
  // 1 or 0, which is how such numbers went unnoticed.
  describe('refuses 64-bit fields not written as digits, bare or quoted, naming the field', () => {
    const text = stringifyJson(blockToJson({ ...decodeBlock(lease), pow_nonce: 7n }, 'reference'));
    const fields = ['balance', 'timestamp', 'amount', 'pow_nonce', 'attestations.0.timestamp'];
    const bad: [string, string][] = [
      ['1.0', 'ERR_FIELD_TYPE'],
      ['1e3', 'ERR_FIELD_TYPE'],
      ['1E+2', 'ERR_FIELD_TYPE'],
      ['-0', 'ERR_FIELD_TYPE'],
      ['"1.0"', 'ERR_FIELD_TYPE'],
      ['"1e3"', 'ERR_FIELD_TYPE'],
      ['"-0"', 'ERR_FIELD_TYPE'],
      ['"+1"', 'ERR_FIELD_TYPE'],
      ['"01"', 'ERR_FIELD_TYPE'],
      ['" 1"', 'ERR_FIELD_TYPE'],
      ['18446744073709551616', 'ERR_FIELD_RANGE'],
      ['"18446744073709551616"', 'ERR_FIELD_RANGE'],
    ];
    for (const field of fields) {
      const key = field.split('.').at(-1)!;
      for (const [literal, code] of bad) {
        it(`${field}: ${literal}`, () => {
          const json = parseJson(text) as Record<string, unknown>;
          const holder = (
            field.startsWith('attestations.') ? (json.attestations as Record<string, unknown>[])[0] : json
          ) as Record<string, unknown>;
          expect(holder[key]).toBeDefined();
          holder[key] = (parseJson(`[${literal}]`) as unknown[])[0];
          expectField(() => decodeBlock(json), code, field);
        });
      }
    }
  });

  it('accepts 64-bit fields as digit strings or bare integers, and previous "0" or 64 zeros', () => {
    const a = decodeBlock({ ...send, balance: String(send.balance), timestamp: String(send.timestamp) });
    const b = decodeBlock(send);
    expect(a).toEqual(b);
    const open = byName('open_send_xe_no_memo');
    expect(blockHash(decodeBlock({ ...open.block, previous: '0'.repeat(64) }), 'testnet-0003')).toBe(
      open.hash,
    );
  });

  it('lowercases upper-case hex in the fields the reference ledger lowercases', () => {
    const v = byName('receive_xe');
    const up = {
      ...v.block,
      account: (v.block.account as string).toUpperCase(),
      source: (v.block.source as string).toUpperCase(),
    };
    expect(blockHash(decodeBlock(up), 'testnet-0003')).toBe(v.hash);
  });

  it('drops fields outside the type layout so nothing unhashed rides along', () => {
    const b = decodeBlock({ ...send, vcpus: 4, source: 'ab'.repeat(32), attestations: [] });
    expect(b.vcpus).toBeUndefined();
    expect(b.source).toBeUndefined();
    expect(b.attestations).toBeUndefined();
  });

  it('fuzz: random mutations of vector blocks never throw anything but ProtocolError', () => {
    const bases = vectors.vectors.slice(0, 15).map((v) => v.block);
    const junk = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.bigInt(),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.anything(), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.anything(), { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...bases),
        fc.string(),
        junk,
        fc.constantFrom(...Object.keys(send), 'keyset', 'attestations'),
        (base, _k, value, key) => {
          const mutated = { ...base, [key]: value };
          try {
            const b = decodeBlock(mutated);
            encodeCanonical(b); // whatever decodes must encode
          } catch (e) {
            if (!(e instanceof ProtocolError)) throw e;
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('decoding malformed canonical bytes', () => {
  const canon = hexToBytes(byName('send_xusd_with_memo').canonical_hex);
  it('wrong version, unknown type, truncation and trailing bytes are typed errors', () => {
    expectField(
      () => decodeCanonical(Uint8Array.from([0x03, ...canon.subarray(1)])),
      'ERR_VERSION',
      'version',
    );
    expectField(
      () => decodeCanonical(Uint8Array.from([0x02, 0x0f, ...canon.subarray(2)])),
      'ERR_UNKNOWN_TYPE',
      'type',
    );
    expectField(() => decodeCanonical(canon.subarray(0, canon.length - 1)), 'ERR_LENGTH', 'memo');
    expectField(() => decodeCanonical(Uint8Array.from([...canon, 0])), 'ERR_LENGTH', undefined);
    expectField(() => decodeCanonical(canon.subarray(0, 50)), 'ERR_LENGTH', undefined);
  });

  it('fuzz: truncations and byte flips never throw anything but ProtocolError', () => {
    const all = vectors.vectors.map((v) => hexToBytes(v.canonical_hex));
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.nat(), fc.nat(255), fc.boolean(), (bytes, pos, val, cut) => {
        const b = Uint8Array.from(bytes);
        if (cut) {
          try {
            decodeCanonical(b.subarray(0, pos % b.length));
          } catch (e) {
            if (!(e instanceof ProtocolError)) throw e;
          }
        } else {
          b[pos % b.length] = val;
          try {
            decodeCanonical(b);
          } catch (e) {
            if (!(e instanceof ProtocolError)) throw e;
          }
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('every vector block survives JSON text round trip with its hash intact', () => {
    for (const v of vectors.vectors) {
      const back = decodeBlock(parseJson(stringifyJson(v.block)));
      expect(blockHash(back, v.network_id)).toBe(v.hash);
    }
  });
});
