import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPeerKey } from '../../node-core/net/peer-key.ts';
import {
  base58btc,
  PEER_KEY_FILE,
  peerIdFromKeyFile,
  peerIdOfProtobufKey,
} from '../../node-core/net/peer-id-text.ts';

/** The node's peer id read from its key file without libp2p must be libp2p's own, byte for byte. */
describe('peer id from the key file, without libp2p', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'peer-id-'));
    dirs.push(d);
    return d;
  };

  it('is the id libp2p gives the same Ed25519 key, for 20 keys', async () => {
    for (let i = 0; i < 20; i++) {
      const key = await generateKeyPair('Ed25519');
      expect(peerIdOfProtobufKey(privateKeyToProtobuf(key))).toBe(peerIdFromPrivateKey(key).toString());
    }
  });

  it('reads the file the node writes (peer-key.ts), and libp2p loads the same id from it', async () => {
    const d = dir();
    expect(peerIdFromKeyFile(d, PEER_KEY_FILE)).toBeUndefined(); // no file yet: the caller asks libp2p
    const key = await loadPeerKey(d); // creates it
    const id = peerIdFromKeyFile(d, PEER_KEY_FILE);
    expect(id).toMatch(/^12D3KooW/);
    expect(id).toBe(peerIdFromPrivateKey(key).toString());
    expect(id).toBe(peerIdFromPrivateKey(await loadPeerKey(d)).toString());
  });

  it('gives undefined for any other form (left to libp2p)', async () => {
    const d = dir();
    const key = privateKeyToProtobuf(await generateKeyPair('Ed25519'));
    for (const text of ['not hex', 'abc', Buffer.from(key.subarray(0, 60)).toString('hex')]) {
      writeFileSync(join(d, PEER_KEY_FILE), `${text}\n`);
      expect(peerIdFromKeyFile(d, PEER_KEY_FILE)).toBeUndefined();
    }
    const other = Uint8Array.from(key);
    other[1] = 0x02; // another key type
    expect(peerIdOfProtobufKey(other)).toBeUndefined();
  });

  it('encodes base58btc with leading zero bytes as 1s', () => {
    expect(base58btc(Uint8Array.of(0, 0, 1))).toBe('112');
    expect(base58btc(new TextEncoder().encode('hello world'))).toBe('StV1DL6CwTryKyV');
  });
});
