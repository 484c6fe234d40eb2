import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import { writeFileAtomic } from '../genesis/genesis.ts';
import { PEER_KEY_FILE } from './peer-id-text.ts';

/**
 * The node's peer-to-peer identity (its libp2p peer id), kept in the data directory so the peer id
 * survives restarts and peers can find the node again. Private to the owner (mode 0600).
 */
export { PEER_KEY_FILE } from './peer-id-text.ts';

export async function loadPeerKey(dataDir: string): Promise<PrivateKey> {
  const path = join(dataDir, PEER_KEY_FILE);
  if (existsSync(path)) {
    const hex = readFileSync(path, 'utf8').trim();
    return privateKeyFromProtobuf(Uint8Array.from(Buffer.from(hex, 'hex')));
  }
  const key = await generateKeyPair('Ed25519');
  writeFileAtomic(path, `${Buffer.from(privateKeyToProtobuf(key)).toString('hex')}\n`, 0o600);
  return key;
}
