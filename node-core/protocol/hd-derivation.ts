import { hmac } from '@noble/hashes/hmac.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { ProtocolError } from './errors.ts';
import { utf8 } from './hex.ts';

/**
 * Hierarchical keys for one-seed wallets: SLIP-0010 for Ed25519 over a BIP-39 seed
 * (https://github.com/satoshilabs/slips/blob/master/slip-0010.md). Ed25519 has no public-key
 * derivation, so every step is hardened:
 *
 *   master:  I = HMAC-SHA512(key = "ed25519 seed", data = seed)
 *   child i: I = HMAC-SHA512(key = parent chain code, data = 0x00 || parent key || ser32(i + 2^31))
 *
 * with the key = I[0..32] and the chain code = I[32..64]. A node's key is exactly the 32-byte Ed25519
 * seed of node-core/protocol/keys.ts, so an account's key pair and address come from it as from any seed.
 *
 * Accounts of a wallet sit at m/44'/22597'/<account index>' (README, "One seed, many accounts"): the
 * coin type is fixed forever, since changing it would move every account of every wallet.
 */
export const HARDENED_OFFSET = 0x8000_0000;
/** BIP-44's purpose field. */
export const ACCOUNT_PURPOSE = 44;
/** 0x5845, "XE" in ASCII: this ledger has no SLIP-0044 registration, and the path must never change. */
export const ACCOUNT_COIN_TYPE = 22597;
/** Highest index a hardened step can take (2^31 - 1). */
export const MAX_CHILD_INDEX = HARDENED_OFFSET - 1;

const MASTER_KEY = utf8('ed25519 seed');

export interface Slip10Node {
  /** 32 bytes: the Ed25519 seed (private key) of this node. */
  key: Uint8Array;
  /** 32 bytes. */
  chainCode: Uint8Array;
}

function split(i: Uint8Array): Slip10Node {
  const node = { key: i.slice(0, 32), chainCode: i.slice(32, 64) };
  i.fill(0);
  return node;
}

/** The master node of a seed (BIP-39 seeds are 64 bytes; SLIP-0010 allows 16 to 64). */
export function slip10Master(seed: Uint8Array): Slip10Node {
  if (seed.length < 16 || seed.length > 64) {
    throw new ProtocolError('ERR_LENGTH', 'a SLIP-0010 seed has 16 to 64 bytes', 'seed');
  }
  return split(hmac(sha512, MASTER_KEY, seed));
}

/** The hardened child `index` (0 .. 2^31-1; the 2^31 offset is added here) of a node. */
export function slip10Child(parent: Slip10Node, index: number): Slip10Node {
  if (!Number.isInteger(index) || index < 0 || index > MAX_CHILD_INDEX) {
    throw new ProtocolError('ERR_FIELD_RANGE', `a hardened index is 0 to ${MAX_CHILD_INDEX}`, 'index');
  }
  const data = new Uint8Array(37);
  data.set(parent.key, 1);
  new DataView(data.buffer).setUint32(33, index + HARDENED_OFFSET, false);
  const node = split(hmac(sha512, parent.chainCode, data));
  data.fill(0);
  return node;
}

/** The node at a path of hardened indexes (each without the 2^31 offset) below a seed's master. */
export function slip10Derive(seed: Uint8Array, path: readonly number[]): Slip10Node {
  let node = slip10Master(seed);
  for (const index of path) {
    const next = slip10Child(node, index);
    node.key.fill(0);
    node.chainCode.fill(0);
    node = next;
  }
  return node;
}

/**
 * Parses a path written the usual way, "m/44'/22597'/0'" (H or h also mark a hardened step). Every
 * step must be hardened: Ed25519 under SLIP-0010 has no other kind.
 */
export function parseHardenedPath(path: string): number[] {
  const parts = path.trim().split('/');
  if (parts[0] !== 'm') throw new ProtocolError('ERR_FIELD_TYPE', 'a path starts with "m"', 'path');
  return parts.slice(1).map((p) => {
    const m = /^(\d{1,10})['hH]$/.exec(p);
    if (!m) throw new ProtocolError('ERR_FIELD_TYPE', `"${p}" is not a hardened step like 0'`, 'path');
    const n = Number(m[1]);
    if (n > MAX_CHILD_INDEX) throw new ProtocolError('ERR_FIELD_RANGE', `${p} is too large`, 'path');
    return n;
  });
}

/** The path of a wallet's account, as people write it. */
export function accountPath(accountIndex: number): string {
  return `m/${ACCOUNT_PURPOSE}'/${ACCOUNT_COIN_TYPE}'/${accountIndex}'`;
}

/**
 * The wallet node all accounts hang from (m/44'/22597'): keep it while a wallet is open, so the next
 * account costs one HMAC rather than the whole path.
 */
export function walletNode(bip39Seed: Uint8Array): Slip10Node {
  return slip10Derive(bip39Seed, [ACCOUNT_PURPOSE, ACCOUNT_COIN_TYPE]);
}

/** The 32-byte Ed25519 seed of account `accountIndex` below a wallet node (m/44'/22597'/<index>'). */
export function accountSeedFromWalletNode(wallet: Slip10Node, accountIndex: number): Uint8Array {
  const node = slip10Child(wallet, accountIndex);
  node.chainCode.fill(0);
  return node.key;
}

/** The 32-byte Ed25519 seed of account `accountIndex` of a BIP-39 seed. */
export function accountSeed(bip39Seed: Uint8Array, accountIndex: number): Uint8Array {
  const wallet = walletNode(bip39Seed);
  try {
    return accountSeedFromWalletNode(wallet, accountIndex);
  } finally {
    wallet.key.fill(0);
    wallet.chainCode.fill(0);
  }
}
