import { useSyncExternalStore } from 'react';
import { Keystore, type KeystoreSnapshot, VAULT_STORAGE_KEY } from './keystore.ts';

export * from './keystore.ts';
export { WrongPasswordError, VaultFormatError } from './vault.ts';
export { lastKdfMs } from './kdf.ts';

let instance: Keystore | undefined;

/** The page's keystore (vault in localStorage, scrypt in a worker). */
export function keystore(): Keystore {
  if (!instance) {
    const ks = new Keystore();
    instance = ks;
    // Another tab of the app saved or erased the vault.
    globalThis.addEventListener?.('storage', (e: StorageEvent) => {
      if (e.key === VAULT_STORAGE_KEY || e.key === null) ks.externalChange();
    });
  }
  return instance;
}

export function useKeystore(): KeystoreSnapshot {
  const ks = keystore();
  return useSyncExternalStore(ks.subscribe, ks.getSnapshot);
}
