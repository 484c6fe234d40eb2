import { createHash } from 'node:crypto';
import { type Block, encodeAux, encodeCanonical } from '../protocol/block.ts';
import { ProtocolError } from '../protocol/errors.ts';

/**
 * Block hashing through node:crypto's native SHA-256: the same bytes as blockHashBytes in
 * node-core/protocol (a test holds them equal), several times faster on the node's hot path.
 */
export function sha256Node(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

export function blockHashBytesNode(block: Block, networkId: string): Uint8Array {
  const id = block.type === 'genesis' ? '' : networkId;
  if (id === '' && block.type !== 'genesis') {
    throw new ProtocolError('ERR_NETWORK_ID', 'a network id is required to hash a non-genesis block');
  }
  return sha256Node(Buffer.from(id, 'utf8'), encodeCanonical(block), encodeAux(block));
}
