import {
  blockHashBytes,
  type Block,
  keyPairFromSeed,
  signBytes,
  verifyBytes,
} from '../node-core/protocol/index.ts';
import { verifyBytesNode, verifyOpenSsl } from '../node-core/fastpath/ed25519.ts';
import { blockHashBytesNode } from '../node-core/fastpath/block-hash.ts';
import { fmtRate, measureRate, ratio } from './measure.ts';

/**
 * Signature verification and block hashing: the node's fast paths (libsodium first, node:crypto)
 * against the isomorphic (pure JS) paths, measured in the same run on one thread.
 */
export default async function benchCrypto(log: (line: string) => void): Promise<Record<string, number>> {
  const N = 256;
  const items = Array.from({ length: N }, (_, i) => {
    const seed = new Uint8Array(32).fill(i + 1);
    const msg = new Uint8Array(32).fill(i);
    return {
      pub: keyPairFromSeed(seed).pub_key,
      pubBytes: Uint8Array.from(Buffer.from(keyPairFromSeed(seed).pub_key, 'hex')),
      msg,
      sig: signBytes(msg, seed),
    };
  });
  let i = 0;
  const fast = measureRate(() => {
    const it = items[i++ % N]!;
    if (!verifyBytesNode(it.sig, it.msg, it.pubBytes)) throw new Error('verify failed');
  }, 1);
  const openSsl = measureRate(() => {
    const it = items[i++ % N]!;
    if (!verifyOpenSsl(it.sig, it.msg, it.pubBytes)) throw new Error('verify failed');
  }, 1);
  const iso = measureRate(() => {
    const it = items[i++ % N]!;
    if (!verifyBytes(it.sig, it.msg, it.pubBytes)) throw new Error('verify failed');
  }, 1);
  log(
    `ed25519 verify: the node's (libsodium first) ${fmtRate(fast.perSecond)}, node:crypto alone ${fmtRate(openSsl.perSecond)}` +
      ` (${ratio(fast.perSecond, openSsl.perSecond)}), isomorphic ${fmtRate(iso.perSecond)} (node's ${ratio(fast.perSecond, iso.perSecond)})`,
  );

  const block: Block = {
    type: 'send',
    account: 'aa'.repeat(32),
    previous: 'bb'.repeat(32),
    balance: 123n,
    timestamp: 1_790_000_000_000_000_000n,
    asset: 'XE',
    destination: 'cc'.repeat(32),
    amount: 5n,
    memo: 'bench',
  };
  const hFast = measureRate(() => void blockHashBytesNode(block, 'devnet'), 1, 1);
  const hIso = measureRate(() => void blockHashBytes(block, 'devnet'), 1, 1);
  log(
    `block hash (encode + sha256): node fast path ${fmtRate(hFast.perSecond)}, isomorphic ${fmtRate(hIso.perSecond)} (${ratio(hFast.perSecond, hIso.perSecond)})`,
  );
  return {
    ed25519_verify_node_per_s: fast.perSecond,
    ed25519_verify_openssl_per_s: openSsl.perSecond,
    ed25519_verify_iso_per_s: iso.perSecond,
    block_hash_node_per_s: hFast.perSecond,
    block_hash_iso_per_s: hIso.perSecond,
  };
}
