import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { bytesToHex, hexToBytes, isHex, utf8 } from '../../../node-core/protocol/hex.ts';

/**
 * The keystore's file format: the accounts (seeds and labels) as JSON, encrypted with
 * XChaCha20-Poly1305 under a key that scrypt derives from the password. The header (format version,
 * KDF parameters and salt) is bound to the ciphertext as associated data, so it cannot be altered
 * (say, to weaker parameters) without the password check failing. Each save uses a fresh random nonce.
 */
export const VAULT_VERSION = 1;
export const VAULT_CIPHER = 'xchacha20-poly1305';

export interface KdfParams {
  name: 'scrypt';
  /** CPU/memory cost (a power of two). */
  N: number;
  r: number;
  p: number;
  /** 16 random bytes, hex. */
  salt: string;
}

/** scrypt N=2^15, r=8, p=1: 32 MiB of memory, a fraction of a second in a browser. */
export const DEFAULT_KDF = { N: 2 ** 15, r: 8, p: 1 } as const;
export const KEY_BYTES = 32;

export interface VaultFile {
  version: typeof VAULT_VERSION;
  kdf: KdfParams;
  cipher: typeof VAULT_CIPHER;
  /** 24 bytes, hex. */
  nonce: string;
  /** Ciphertext with its 16-byte tag, hex. */
  ciphertext: string;
}

export interface VaultAccount {
  /** 32-byte seed, hex. */
  seed: string;
  label: string;
  /** Unix milliseconds. */
  created: number;
}

/** A lease's access key (a fresh Ed25519 key per lease, for its VM's console). */
export interface VaultAccessKey {
  /** 32-byte seed, hex. */
  seed: string;
  /** The public key, hex (the lease block's access_pub_key). */
  pub: string;
  /** The lease hash, once the lease block is signed. */
  lease?: string;
  /** Unix milliseconds. */
  created: number;
}

export interface VaultContents {
  accounts: VaultAccount[];
  /** Absent in vaults written before leasing. */
  accessKeys?: VaultAccessKey[];
}

export class WrongPasswordError extends Error {
  constructor() {
    super('Wrong password: the keystore could not be decrypted with it.');
    this.name = 'WrongPasswordError';
  }
}

export class VaultFormatError extends Error {
  constructor(detail: string) {
    super(`The stored keystore is damaged or from an unknown version (${detail}).`);
    this.name = 'VaultFormatError';
  }
}

function random(n: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

export function newKdfParams(params: Pick<KdfParams, 'N' | 'r' | 'p'> = DEFAULT_KDF): KdfParams {
  return { name: 'scrypt', N: params.N, r: params.r, p: params.p, salt: bytesToHex(random(16)) };
}

function aad(kdf: KdfParams): Uint8Array {
  return utf8(
    `ledger-desktop-vault/v${VAULT_VERSION}|${VAULT_CIPHER}|scrypt|${kdf.N}|${kdf.r}|${kdf.p}|${kdf.salt}`,
  );
}

export function sealVault(key: Uint8Array, kdf: KdfParams, contents: VaultContents): VaultFile {
  const nonce = random(24);
  const plain = utf8(JSON.stringify(contents));
  const ct = xchacha20poly1305(key, nonce, aad(kdf)).encrypt(plain);
  plain.fill(0);
  return {
    version: VAULT_VERSION,
    kdf,
    cipher: VAULT_CIPHER,
    nonce: bytesToHex(nonce),
    ciphertext: bytesToHex(ct),
  };
}

export function openVault(key: Uint8Array, file: VaultFile): VaultContents {
  let plain: Uint8Array;
  try {
    plain = xchacha20poly1305(key, hexToBytes(file.nonce, 24), aad(file.kdf)).decrypt(
      hexToBytes(file.ciphertext),
    );
  } catch {
    throw new WrongPasswordError();
  }
  let contents: unknown;
  try {
    contents = JSON.parse(new TextDecoder().decode(plain));
  } catch {
    throw new VaultFormatError('contents are not JSON');
  } finally {
    plain.fill(0);
  }
  const accounts = (contents as { accounts?: unknown } | null)?.accounts;
  if (!Array.isArray(accounts)) throw new VaultFormatError('no account list');
  for (const a of accounts as VaultAccount[]) {
    if (!isHex(a?.seed, 32) || typeof a.label !== 'string') throw new VaultFormatError('bad account entry');
  }
  const accessKeys = (contents as { accessKeys?: unknown }).accessKeys;
  if (accessKeys === undefined) return { accounts: accounts as VaultAccount[] };
  if (!Array.isArray(accessKeys)) throw new VaultFormatError('bad access key list');
  for (const k of accessKeys as VaultAccessKey[]) {
    if (!isHex(k?.seed, 32) || !isHex(k.pub, 32) || (k.lease !== undefined && !isHex(k.lease, 32)))
      throw new VaultFormatError('bad access key entry');
  }
  return { accounts: accounts as VaultAccount[], accessKeys: accessKeys as VaultAccessKey[] };
}

/** Parses and checks a stored vault's header. */
export function parseVaultFile(text: string): VaultFile {
  let v: VaultFile;
  try {
    v = JSON.parse(text) as VaultFile;
  } catch {
    throw new VaultFormatError('not JSON');
  }
  if (v?.version !== VAULT_VERSION) throw new VaultFormatError(`version ${String(v?.version)}`);
  if (v.cipher !== VAULT_CIPHER) throw new VaultFormatError(`cipher ${String(v.cipher)}`);
  const k = v.kdf;
  const pow2 = (n: unknown) =>
    Number.isInteger(n) && (n as number) >= 2 && ((n as number) & ((n as number) - 1)) === 0;
  if (
    k?.name !== 'scrypt' ||
    !pow2(k.N) ||
    !Number.isInteger(k.r) ||
    !Number.isInteger(k.p) ||
    k.r < 1 ||
    k.p < 1
  ) {
    throw new VaultFormatError('key derivation parameters');
  }
  // Refuse parameters too weak to mean anything, in case the stored header was tampered with.
  if (k.N < 2 ** 14 || !isHex(k.salt, 16)) throw new VaultFormatError('key derivation parameters too weak');
  if (!isHex(v.nonce, 24) || typeof v.ciphertext !== 'string' || v.ciphertext.length < 32) {
    throw new VaultFormatError('nonce or ciphertext');
  }
  return v;
}
