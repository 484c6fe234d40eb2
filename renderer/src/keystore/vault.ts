import {
  DEFAULT_KDF,
  KEY_BYTES,
  KEYSTORE_CIPHER,
  KEYSTORE_VERSION,
  type AccessKeyEntry,
  type KdfParams,
  type KeystoreAccount,
  type KeystoreContents,
  type KeystoreFile,
  KeystoreFileError,
  KeystoreFormatError,
  newKdfParams,
  open,
  parse,
  seal,
  stringify,
  WrongPasswordError,
} from '../../../node-core/client/keystore-file.ts';

/**
 * The window's vault is the keystore file of node-core/client/keystore-file.ts (the format the
 * backups and the `ledger-node` CLI share): the accounts (the phrase's entropy and next index, derived
 * and imported accounts, labels) and lease access keys, encrypted with XChaCha20-Poly1305 under a key
 * that scrypt derives from the password, the header bound to the ciphertext. Version 1 vaults (before
 * phrases) open, their accounts as imported ones, and are written back as version 2 on the next save.
 * This module keeps the keystore's names for that format.
 */
export const VAULT_VERSION = KEYSTORE_VERSION;
export const VAULT_CIPHER = KEYSTORE_CIPHER;
export { DEFAULT_KDF, KEY_BYTES, KeystoreFileError, newKdfParams, WrongPasswordError };
export type { KdfParams };
export type VaultFile = KeystoreFile;
export type VaultContents = KeystoreContents;
export type VaultAccount = KeystoreAccount;
export type VaultAccessKey = AccessKeyEntry;
/** A stored or chosen file that is not a keystore, or a damaged one (its `code` says which). */
export const VaultFormatError = KeystoreFormatError;
export type VaultFormatError = KeystoreFormatError;

export function sealVault(key: Uint8Array, kdf: KdfParams, contents: VaultContents): VaultFile {
  return seal(contents, key, kdf);
}

export function openVault(key: Uint8Array, file: VaultFile): VaultContents {
  return open(key, file);
}

/** Parses and checks a stored vault's (or a backup file's) header. */
export function parseVaultFile(text: string): VaultFile {
  return parse(text);
}

/** The text of a backup file (indented JSON). */
export function stringifyVault(file: VaultFile): string {
  return stringify(file);
}
