import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { scryptAsync } from '@noble/hashes/scrypt.js';
import { bytesToHex, hexToBytes, isHex, utf8 } from '../protocol/hex.ts';

/**
 * The wallet's keystore file: the window's vault and the encrypted backup it exports are this same
 * JSON document, and the `ledger-node` command line reads and writes it too. Isomorphic (no Node
 * built-ins): @noble ciphers and hashes, and globalThis.crypto for randomness.
 *
 *   {"type": "ledger-node-keystore", "version": 2,
 *    "kdf": {"name": "scrypt", "N": 32768, "r": 8, "p": 1, "salt": <16 bytes hex>},
 *    "cipher": "xchacha20-poly1305", "nonce": <24 bytes hex>, "ciphertext": <hex, tag included>}
 *
 * The plaintext is the JSON of KeystoreContents. The key is scrypt(NFKC password, salt) with the header's
 * parameters; the header (type, version, cipher, KDF and salt) is the cipher's associated data, so it
 * cannot be changed (to weaker parameters, say) without opening failing. Every seal takes a fresh nonce.
 * Version 1 (the window's vault before one-seed wallets; no "type") still opens: its accounts come
 * back as imported accounts. seal() always writes version 2.
 *
 * API (stable: the CLI builds on it):
 *   newKdfParams(params?)            fresh scrypt parameters and salt (default N=2^15, r=8, p=1)
 *   deriveKey(password, kdf)         Promise of the 32-byte key (scrypt; async, yields to the page)
 *   seal(contents, key, kdf)         KeystoreFile (version 2), ready for JSON.stringify / stringify()
 *   open(key, file)                  KeystoreContents; WrongPasswordError, KeystoreFormatError
 *   parse(text)                      KeystoreFile with a checked header; KeystoreFormatError
 *   stringify(file)                  the file's text as written to disk (indented JSON, final newline)
 *   openWithPassword(text, password) parse + deriveKey + open, for a one-shot read
 * Errors are KeystoreFileError with `code`: 'wrong_password', 'not_keystore', 'unsupported_version',
 * 'damaged' (header or contents not as described), 'weak_kdf'.
 */
export const KEYSTORE_TYPE = 'ledger-node-keystore';
export const KEYSTORE_VERSION = 2;
export const KEYSTORE_CIPHER = 'xchacha20-poly1305';
export const KEY_BYTES = 32;
/** scrypt N=2^15, r=8, p=1: 32 MiB of memory, a fraction of a second in a browser. */
export const DEFAULT_KDF = { N: 2 ** 15, r: 8, p: 1 } as const;
/** Weaker parameters in a file mean it was tampered with (or not made by us): refused. */
export const MIN_KDF_N = 2 ** 14;

export interface KdfParams {
  name: 'scrypt';
  /** CPU/memory cost (a power of two). */
  N: number;
  r: number;
  p: number;
  /** 16 random bytes, hex. */
  salt: string;
}

export interface KeystoreFile {
  /** Absent in version 1. */
  type?: typeof KEYSTORE_TYPE;
  version: 1 | 2;
  kdf: KdfParams;
  cipher: typeof KEYSTORE_CIPHER;
  /** 24 bytes, hex. */
  nonce: string;
  /** Ciphertext with its 16-byte tag, hex. */
  ciphertext: string;
}

/** An account of the wallet's phrase: its key is m/44'/22597'/<index>' (node-core/protocol/hd-derivation.ts). */
export interface DerivedAccountEntry {
  kind: 'derived';
  index: number;
  label: string;
  /** Out of the app's lists until shown again. */
  hidden?: boolean;
  /** Unix milliseconds. */
  created: number;
}

/** An account with its own 32-byte Ed25519 seed (imported, or made before phrases). */
export interface ImportedAccountEntry {
  kind: 'imported';
  /** 32 bytes, hex. */
  seed: string;
  label: string;
  hidden?: boolean;
  created: number;
}

export type KeystoreAccount = DerivedAccountEntry | ImportedAccountEntry;

/** A lease's access key (a fresh Ed25519 key per lease, for its VM's console). */
export interface AccessKeyEntry {
  /** 32 bytes, hex. */
  seed: string;
  /** The public key, hex (the lease block's access_pub_key). */
  pub: string;
  /** The lease hash, once the lease block is signed. */
  lease?: string;
  created: number;
}

export interface KeystorePhrase {
  /** The BIP-39 entropy, hex: 16 to 32 bytes (12 to 24 words). */
  entropy: string;
  /** The index "New account" takes next (one past the highest index ever used). */
  nextIndex: number;
}

export interface KeystoreContents {
  /** The wallet's recovery phrase; absent in a wallet made before phrases (version 1). */
  phrase?: KeystorePhrase;
  /** Derived and imported accounts, in the order they were added. */
  accounts: KeystoreAccount[];
  accessKeys?: AccessKeyEntry[];
}

export type KeystoreFileErrorCode =
  'wrong_password' | 'not_keystore' | 'unsupported_version' | 'damaged' | 'weak_kdf';

export class KeystoreFileError extends Error {
  readonly code: KeystoreFileErrorCode;
  constructor(code: KeystoreFileErrorCode, message: string) {
    super(message);
    this.name = 'KeystoreFileError';
    this.code = code;
  }
}

export class WrongPasswordError extends KeystoreFileError {
  constructor() {
    super('wrong_password', 'Wrong password: the keystore could not be decrypted with it.');
    this.name = 'WrongPasswordError';
  }
}

const FORMAT_MESSAGES: Record<Exclude<KeystoreFileErrorCode, 'wrong_password'>, (d: string) => string> = {
  not_keystore: (d) => `This is not a Ledger Node keystore file (${d}).`,
  unsupported_version: (d) => `This keystore file is from an unknown or newer version of the app (${d}).`,
  damaged: (d) => `The keystore is damaged (${d}).`,
  weak_kdf: (d) => `The keystore's key derivation is weaker than this app ever writes (${d}).`,
};

export class KeystoreFormatError extends KeystoreFileError {
  readonly detail: string;
  constructor(code: Exclude<KeystoreFileErrorCode, 'wrong_password'>, detail: string) {
    super(code, FORMAT_MESSAGES[code](detail));
    this.name = 'KeystoreFormatError';
    this.detail = detail;
  }
}

function random(n: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

export function newKdfParams(params: Pick<KdfParams, 'N' | 'r' | 'p'> = DEFAULT_KDF): KdfParams {
  return { name: 'scrypt', N: params.N, r: params.r, p: params.p, salt: bytesToHex(random(16)) };
}

/** The password's bytes: Unicode-normalised, so the same password typed on another keyboard matches. */
export function passwordBytes(password: string): Uint8Array {
  return utf8(password.normalize('NFKC'));
}

/** scrypt of the password under the file's parameters: the 32-byte key of seal and open. */
export async function deriveKey(password: string, kdf: KdfParams): Promise<Uint8Array> {
  const pw = passwordBytes(password);
  try {
    return await scryptAsync(pw, hexToBytes(kdf.salt, 16), {
      N: kdf.N,
      r: kdf.r,
      p: kdf.p,
      dkLen: KEY_BYTES,
    });
  } finally {
    pw.fill(0);
  }
}

function aad(version: 1 | 2, kdf: KdfParams): Uint8Array {
  const head = version === 1 ? 'ledger-desktop-vault/v1' : `${KEYSTORE_TYPE}/v${KEYSTORE_VERSION}`;
  return utf8(`${head}|${KEYSTORE_CIPHER}|scrypt|${kdf.N}|${kdf.r}|${kdf.p}|${kdf.salt}`);
}

export function seal(contents: KeystoreContents, key: Uint8Array, kdf: KdfParams): KeystoreFile {
  checkContents(contents);
  const nonce = random(24);
  const plain = utf8(JSON.stringify(contents));
  const ct = xchacha20poly1305(key, nonce, aad(2, kdf)).encrypt(plain);
  plain.fill(0);
  return {
    type: KEYSTORE_TYPE,
    version: KEYSTORE_VERSION,
    kdf,
    cipher: KEYSTORE_CIPHER,
    nonce: bytesToHex(nonce),
    ciphertext: bytesToHex(ct),
  };
}

export function open(key: Uint8Array, file: KeystoreFile): KeystoreContents {
  let plain: Uint8Array;
  try {
    plain = xchacha20poly1305(key, hexToBytes(file.nonce, 24), aad(file.version, file.kdf)).decrypt(
      hexToBytes(file.ciphertext),
    );
  } catch {
    throw new WrongPasswordError();
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(plain));
  } catch {
    throw new KeystoreFormatError('damaged', 'contents are not JSON');
  } finally {
    plain.fill(0);
  }
  return file.version === 1 ? fromVersion1(raw) : checkContents(raw);
}

/** Version 1 held {accounts: [{seed, label, created}], accessKeys?}: each becomes an imported account. */
function fromVersion1(raw: unknown): KeystoreContents {
  const r = raw as { accounts?: unknown; accessKeys?: unknown } | null;
  if (!Array.isArray(r?.accounts)) throw new KeystoreFormatError('damaged', 'no account list');
  const accounts = (r.accounts as { seed?: unknown; label?: unknown; created?: unknown }[]).map(
    (a): ImportedAccountEntry => ({
      kind: 'imported',
      seed: a?.seed as string,
      label: a?.label as string,
      created: typeof a?.created === 'number' ? a.created : 0,
    }),
  );
  return checkContents(
    r.accessKeys === undefined ? { accounts } : { accounts, accessKeys: r.accessKeys as AccessKeyEntry[] },
  );
}

const isIndex = (n: unknown): n is number =>
  Number.isInteger(n) && (n as number) >= 0 && (n as number) < 2 ** 31;

/** Checks contents against the format (before sealing and after opening); returns them typed. */
export function checkContents(raw: unknown): KeystoreContents {
  const c = raw as Partial<KeystoreContents> | null;
  if (typeof c !== 'object' || c === null || !Array.isArray(c.accounts)) {
    throw new KeystoreFormatError('damaged', 'no account list');
  }
  if (c.phrase !== undefined) {
    const e = c.phrase?.entropy;
    if (
      typeof e !== 'string' ||
      ![16, 20, 24, 28, 32].some((n) => isHex(e, n)) ||
      !isIndex(c.phrase.nextIndex)
    ) {
      throw new KeystoreFormatError('damaged', 'bad recovery phrase entry');
    }
  }
  const indexes = new Set<number>();
  for (const a of c.accounts) {
    if (typeof a?.label !== 'string' || typeof a.created !== 'number') {
      throw new KeystoreFormatError('damaged', 'bad account entry');
    }
    if (a.hidden !== undefined && typeof a.hidden !== 'boolean') {
      throw new KeystoreFormatError('damaged', 'bad account entry');
    }
    if (a.kind === 'imported') {
      if (!isHex(a.seed, 32)) throw new KeystoreFormatError('damaged', 'bad account entry');
    } else if (a.kind === 'derived') {
      if (!c.phrase || !isIndex(a.index) || a.index >= c.phrase.nextIndex || indexes.has(a.index)) {
        throw new KeystoreFormatError('damaged', 'bad derived account entry');
      }
      indexes.add(a.index);
    } else {
      throw new KeystoreFormatError('damaged', 'unknown account kind');
    }
  }
  if (c.accessKeys !== undefined) {
    if (!Array.isArray(c.accessKeys)) throw new KeystoreFormatError('damaged', 'bad access key list');
    for (const k of c.accessKeys) {
      if (!isHex(k?.seed, 32) || !isHex(k.pub, 32) || (k.lease !== undefined && !isHex(k.lease, 32))) {
        throw new KeystoreFormatError('damaged', 'bad access key entry');
      }
    }
  }
  return c as KeystoreContents;
}

/** Parses a keystore file's text and checks its header. */
export function parse(text: string): KeystoreFile {
  let v: KeystoreFile;
  try {
    v = JSON.parse(text) as KeystoreFile;
  } catch {
    throw new KeystoreFormatError('not_keystore', 'not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new KeystoreFormatError('not_keystore', 'not a JSON object');
  }
  if (v.version === 2 || v.type !== undefined) {
    if (v.type !== KEYSTORE_TYPE) throw new KeystoreFormatError('not_keystore', `type ${String(v.type)}`);
    if (v.version !== 2) throw new KeystoreFormatError('unsupported_version', `version ${String(v.version)}`);
  } else if (v.version === undefined) {
    throw new KeystoreFormatError('not_keystore', 'it has no keystore header');
  } else if (v.version !== 1) {
    throw new KeystoreFormatError(
      typeof v.version === 'number' ? 'unsupported_version' : 'not_keystore',
      `version ${String(v.version)}`,
    );
  }
  if (v.cipher !== KEYSTORE_CIPHER) throw new KeystoreFormatError('damaged', `cipher ${String(v.cipher)}`);
  const k = v.kdf;
  const pow2 = (n: unknown) =>
    Number.isInteger(n) && (n as number) >= 2 && ((n as number) & ((n as number) - 1)) === 0;
  if (
    k?.name !== 'scrypt' ||
    !pow2(k.N) ||
    !Number.isInteger(k.r) ||
    !Number.isInteger(k.p) ||
    k.r < 1 ||
    k.p < 1 ||
    // Bounds keep a crafted file from asking for gigabytes of memory.
    k.N > 2 ** 20 ||
    k.r > 32 ||
    k.p > 16
  ) {
    throw new KeystoreFormatError('damaged', 'key derivation parameters');
  }
  if (k.N < MIN_KDF_N || !isHex(k.salt, 16))
    throw new KeystoreFormatError('weak_kdf', 'key derivation parameters too weak');
  if (!isHex(v.nonce, 24) || typeof v.ciphertext !== 'string' || v.ciphertext.length < 32) {
    throw new KeystoreFormatError('damaged', 'nonce or ciphertext');
  }
  return v;
}

export function stringify(file: KeystoreFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** parse, deriveKey and open in one step; the key is wiped afterwards. */
export async function openWithPassword(text: string, password: string): Promise<KeystoreContents> {
  const file = parse(text);
  const key = await deriveKey(password, file.kdf);
  try {
    return open(key, file);
  } finally {
    key.fill(0);
  }
}
