import { describe, expect, it } from 'vitest';
import {
  bytesToHex,
  chatCanonical,
  chatEnvelopeId,
  chatReadAuthMessage,
  directoryMessage,
  encodeStateBlock,
  hexToBytes,
  keyPairFromSeed,
  parseStateBlock,
  ProtocolError,
  sha256,
  signChatEnvelope,
  signChatReadAuth,
  signDirectoryRegistration,
  signStateBlock,
  stateBlockHash,
  stateBlockToJson,
  stringifyJson,
  utf8,
  verifyChatEnvelope,
  verifyChatReadAuth,
  verifyDirectoryRegistration,
  verifyHashSignature,
  type StateBlock,
} from '../../node-core/protocol/index.ts';

const alice = keyPairFromSeed(new Uint8Array(32).fill(1));
const bob = keyPairFromSeed(new Uint8Array(32).fill(2));
const aliceSeed = new Uint8Array(32).fill(1);

describe('chat envelope (contract canonical bytes, decisions D15)', () => {
  const env = {
    from: alice.pub_key,
    to: bob.pub_key,
    message: 'héllo',
    timestamp: 1_790_000_000_000_000_000n,
  };

  it('frames from, to and message with 4-byte lengths, then the timestamp as 8 bytes BE', () => {
    const expected =
      '00000040' +
      bytesToHex(utf8(alice.pub_key)) +
      '00000040' +
      bytesToHex(utf8(bob.pub_key)) +
      '00000006' +
      bytesToHex(utf8('héllo')) +
      1_790_000_000_000_000_000n.toString(16).padStart(16, '0');
    expect(bytesToHex(chatCanonical(env))).toBe(expected);
    expect(chatEnvelopeId(env)).toBe(bytesToHex(sha256(hexToBytes(expected))));
  });

  it('signs the id with the sender key; tampering or a wrong sender fails', () => {
    const signed = signChatEnvelope(env, aliceSeed);
    expect(verifyChatEnvelope(signed)).toBe(true);
    expect(verifyChatEnvelope({ ...signed, message: 'hello' })).toBe(false);
    expect(verifyChatEnvelope({ ...signed, from: bob.pub_key })).toBe(false);
    expect(verifyChatEnvelope({ ...signed, signature: 'zz' })).toBe(false);
  });

  it('refuses messages over 8192 bytes', () => {
    expect(() => chatEnvelopeId({ ...env, message: 'x'.repeat(8193) })).toThrow(ProtocolError);
  });
});

describe('chat read-auth proof', () => {
  const challenge = 'ab'.repeat(56);
  it('signs SHA-256("xe/chat-read-auth/v1" NUL challenge-bytes)', () => {
    const pre = bytesToHex(utf8('xe/chat-read-auth/v1')) + '00' + challenge;
    expect(bytesToHex(chatReadAuthMessage(challenge))).toBe(bytesToHex(sha256(hexToBytes(pre))));
    const sig = signChatReadAuth(challenge, aliceSeed);
    expect(verifyChatReadAuth(challenge, sig, alice.pub_key)).toBe(true);
    expect(verifyChatReadAuth('cd'.repeat(56), sig, alice.pub_key)).toBe(false);
    expect(verifyChatReadAuth(challenge, sig, bob.pub_key)).toBe(false);
    expect(() => chatReadAuthMessage('ab'.repeat(55))).toThrow(ProtocolError);
  });
});

describe('directory registration (contract rule, decisions D15)', () => {
  it('signs the 32 raw key bytes followed by the timestamp as i64 BE, directly', () => {
    expect(bytesToHex(directoryMessage(alice.pub_key, 258n))).toBe(alice.pub_key + '0000000000000102');
    expect(bytesToHex(directoryMessage(alice.pub_key, -1n))).toBe(alice.pub_key + 'ffffffffffffffff');
    const reg = signDirectoryRegistration(
      { account: alice.pub_key, node_peer: '12D3KooW', timestamp: 5n },
      aliceSeed,
    );
    expect(verifyDirectoryRegistration(reg)).toBe(true);
    expect(verifyDirectoryRegistration({ ...reg, timestamp: 6n })).toBe(false);
    expect(verifyDirectoryRegistration({ ...reg, account: bob.pub_key })).toBe(false);
  });
});

describe('state-chain blocks (protocol.md section 7)', () => {
  const text = `{"index": 3, "prev_hash": "${'11'.repeat(32)}", "timestamp": 1790000000000000000,
    "ops": [{"action": "set", "key": "sys.faucet", "value": {
      "amount": "1000000000",  "period_ns": "86400000000000"}},
      {"type": "delete", "key": "app/x"}], "signatures": []}`;

  it('hashes index, prev_hash, ops with the value text byte for byte, and the timestamp', () => {
    const b = parseStateBlock(text);
    const value = '{\n      "amount": "1000000000",  "period_ns": "86400000000000"}';
    expect(b.ops[0]!.value).toBe(value);
    const key = bytesToHex(utf8('sys.faucet'));
    const expected =
      '0000000000000003' +
      '11'.repeat(32) +
      '00000002' +
      '01' +
      '000a' +
      key +
      utf8(value).length.toString(16).padStart(8, '0') +
      bytesToHex(utf8(value)) +
      '02' +
      '0005' +
      bytesToHex(utf8('app/x')) +
      '00000000' +
      1_790_000_000_000_000_000n.toString(16).padStart(16, '0');
    expect(bytesToHex(encodeStateBlock(b))).toBe(expected);
    expect(stateBlockHash(b)).toBe(bytesToHex(sha256(hexToBytes(expected))));
    // Re-serializing the value compactly would change the hash: the raw text is what counts.
    const compact: StateBlock = {
      ...b,
      ops: [{ ...b.ops[0]!, value: JSON.stringify(JSON.parse(value)) }, b.ops[1]!],
    };
    expect(stateBlockHash(compact)).not.toBe(stateBlockHash(b));
  });

  it('signatures cover the hash; JSON output keeps the raw value and parses back to the same hash', () => {
    const signed = signStateBlock(parseStateBlock(text), aliceSeed);
    expect(
      verifyHashSignature(hexToBytes(signed.hash!), signed.signatures[0]!.signature, alice.pub_key),
    ).toBe(true);
    const back = parseStateBlock(stringifyJson(stateBlockToJson(signed)));
    expect(stateBlockHash(back)).toBe(signed.hash);
    expect(back.signatures).toEqual(signed.signatures);
  });

  it('refuses bad keys and ops with typed errors', () => {
    const bad = (ops: string) => () =>
      parseStateBlock(`{"index":1,"prev_hash":"${'00'.repeat(32)}","timestamp":1,"ops":${ops}}`);
    expect(bad('[{"type":"set","key":"Upper","value":1}]')).toThrow(/key/);
    expect(bad(`[{"type":"set","key":"${'a'.repeat(129)}","value":1}]`)).toThrow(/key/);
    expect(bad('[{"type":"set","key":"a"}]')).toThrow(/value/);
    expect(bad('[{"type":"rename","key":"a"}]')).toThrow(/type/);
    expect(bad('{}')).toThrow(ProtocolError);
    expect(
      parseStateBlock(
        `{"index":1,"prev_hash":"${'00'.repeat(32)}","timestamp":1,"ops":[{"type":"set","key":"timekeeper/keys/0","value":"x"}]}`,
      ).ops[0]!.key,
    ).toBe('timekeeper/keys/0');
  });
});
