import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  deriveKey,
  type KdfParams,
  type KeystoreContents,
  type KeystoreFile,
  newKdfParams,
  open,
  parse,
  seal,
  stringify,
} from '../../client/keystore-file.ts';
import { accountSeedFromWalletNode } from '../../protocol/hd-derivation.ts';
import { hexToBytes } from '../../protocol/hex.ts';
import { keyPairFromSeed } from '../../protocol/keys.ts';
import { walletNodeOfEntropy } from '../../protocol/mnemonic.ts';
import { appDataDir } from '../paths.ts';
import { WalletError } from './errors.ts';

/**
 * The command line's keystore: the window's export format (node-core/client/keystore-file.ts) in a
 * file, 0600, replaced atomically on every change. Accounts come out with their seeds: derived ones
 * from the recovery phrase at m/44'/22597'/<index>', imported ones as stored.
 */
export const KEYSTORE_ENV = 'LEDGER_KEYSTORE';

export function defaultKeystorePath(env: NodeJS.ProcessEnv): string {
  return env[KEYSTORE_ENV] ?? join(appDataDir(env), 'keystore.json');
}

export interface OpenKeystore {
  path: string;
  contents: KeystoreContents;
  /** The open file's parameters and key, to seal changes under the same passphrase. */
  kdf: KdfParams;
  key: Uint8Array;
}

export interface Account {
  label: string;
  address: string;
  pub_key: string;
  kind: 'derived' | 'imported';
  index?: number;
  seed: Uint8Array;
}

export function readKeystoreFile(path: string): KeystoreFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new WalletError(
      'no_keystore',
      `no keystore at ${path}: make one with 'ledger-node keys new' (or pass --keystore FILE)`,
    );
  }
  return parse(text);
}

export async function openKeystore(path: string, passphrase: string): Promise<OpenKeystore> {
  const file = readKeystoreFile(path);
  const key = await deriveKey(passphrase, file.kdf);
  return { path, contents: open(key, file), kdf: file.kdf, key };
}

/** A new keystore's parameters under a passphrase (fresh salt). */
export async function newKeystore(
  path: string,
  passphrase: string,
  contents: KeystoreContents,
): Promise<OpenKeystore> {
  if (existsSync(path)) throw new WalletError('keystore_exists', `a keystore already exists at ${path}`);
  const kdf = newKdfParams();
  return { path, contents, kdf, key: await deriveKey(passphrase, kdf) };
}

/** Seals and writes the keystore: a temp file renamed over the old one, mode 0600. */
export function saveKeystore(ks: OpenKeystore): void {
  mkdirSync(dirname(ks.path), { recursive: true });
  const tmp = `${ks.path}.${process.pid}.tmp`;
  writeFileSync(tmp, stringify(seal(ks.contents, ks.key, ks.kdf)), { mode: 0o600 });
  renameSync(tmp, ks.path);
}

/** Every account of the keystore with its seed, in the keystore's order. */
export function accountsOf(contents: KeystoreContents): Account[] {
  const needsPhrase = contents.accounts.some((a) => a.kind === 'derived');
  const node =
    needsPhrase && contents.phrase ? walletNodeOfEntropy(hexToBytes(contents.phrase.entropy)) : undefined;
  try {
    return contents.accounts.map((a) => {
      const seed = a.kind === 'derived' ? accountSeedFromWalletNode(node!, a.index) : hexToBytes(a.seed, 32);
      const kp = keyPairFromSeed(seed);
      return {
        label: a.label,
        address: kp.address,
        pub_key: kp.pub_key,
        kind: a.kind,
        ...(a.kind === 'derived' ? { index: a.index } : {}),
        seed,
      };
    });
  } finally {
    node?.key.fill(0);
    node?.chainCode.fill(0);
  }
}

/**
 * The account a command acts for: `--account` by label, address (or a prefix of 8+ hex digits) or
 * position (#1 is the first); the first account when none is named.
 */
export function selectAccount(accounts: Account[], selector: string | undefined): Account {
  if (accounts.length === 0)
    throw new WalletError(
      'unknown_account',
      "the keystore has no account: add one with 'ledger-node keys new'",
    );
  if (selector === undefined) return accounts[0]!;
  const s = selector.toLowerCase();
  const pos = /^#([0-9]+)$/.exec(s);
  const hit = pos
    ? accounts[Number(pos[1]) - 1]
    : (accounts.find((a) => a.label === selector) ??
      accounts.find((a) => a.address === s) ??
      (s.length >= 8 && /^[0-9a-f]+$/.test(s)
        ? onlyOne(accounts.filter((a) => a.address.startsWith(s)))
        : undefined));
  if (!hit) {
    const known = accounts.map((a) => a.label).join(', ');
    throw new WalletError('unknown_account', `no account "${selector}" in the keystore (it has: ${known})`);
  }
  return hit;
}

function onlyOne<T>(xs: T[]): T | undefined {
  return xs.length === 1 ? xs[0] : undefined;
}
