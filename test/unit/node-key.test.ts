import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publicKeyFromSeedNode } from '../../node-core/fastpath/ed25519.ts';
import { keyPairFromSeed, publicKeyFromSeed, randomSeed } from '../../node-core/protocol/keys.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { startTestNode, tempDir } from '../helpers/node.ts';

/** The node's key through node:crypto at start-up (node.ts loadNodeKey) is the isomorphic path's. */
describe('the node key through node:crypto', () => {
  it('gives the public key the pure-JS path gives, for 50 seeds', () => {
    for (let i = 0; i < 50; i++) {
      const seed = randomSeed();
      expect(Buffer.from(publicKeyFromSeedNode(seed)).toString('hex')).toBe(
        Buffer.from(publicKeyFromSeed(seed)).toString('hex'),
      );
    }
  });

  it('refuses a seed of another length', () => {
    expect(() => publicKeyFromSeedNode(new Uint8Array(31))).toThrow(RangeError);
  });

  it('a node restarted on its data directory has the key pair of its node.key', async () => {
    const dataDir = tempDir();
    try {
      const first = await startTestNode({ dataDir });
      const created = first.node.nodeKey;
      await first.stop({ keepData: true });
      const again = await startTestNode({ dataDir });
      const seed = readFileSync(join(dataDir, 'node.key'), 'utf8').trim();
      expect(again.node.nodeKey).toEqual(keyPairFromSeed(hexToBytes(seed)));
      expect(again.node.nodeKey).toEqual(created);
      await again.stop({ keepData: true });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
