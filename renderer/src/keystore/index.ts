import { useSyncExternalStore } from 'react';
import { windowStore } from '../window-store/index.ts';
import { Keystore, type KeystoreSnapshot, type LabelStorage, type VaultStorage } from './keystore.ts';

export * from './keystore.ts';
export { KeystoreFileError, WrongPasswordError, VaultFormatError } from './vault.ts';
export { lastKdfMs } from './kdf.ts';

let instance: Keystore | undefined;

/** The vault as the node keeps it (the window store's `vault` document: the keystore file's text). */
function nodeVaultStorage(): VaultStorage {
  return {
    read() {
      const v = windowStore().get('vault');
      return typeof v === 'string' ? v : null;
    },
    write: (text) => windowStore().set('vault', text),
    remove: () => windowStore().set('vault', null),
    flush: () => windowStore().flush(),
  };
}

/** The accounts' labels as the node keeps them (`wallet_labels`: address -> label). */
function nodeLabelStorage(): LabelStorage {
  return {
    read() {
      const v = windowStore().get('wallet_labels');
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, string>) : {};
    },
    write: (labels) => windowStore().set('wallet_labels', labels),
  };
}

/** The page's keystore (vault in the node's app store, scrypt in a worker). */
export function keystore(): Keystore {
  if (!instance) {
    const ks = new Keystore({ storage: nodeVaultStorage(), labels: nodeLabelStorage() });
    instance = ks;
    // Another window of the app, or an agent's rollback, changed the vault or the labels.
    windowStore().onChange((key, origin) => {
      if (origin !== 'remote') return;
      if (key === 'vault') ks.externalChange();
      if (key === 'wallet_labels') ks.labelsChanged();
    });
  }
  return instance;
}

export function useKeystore(): KeystoreSnapshot {
  const ks = keystore();
  return useSyncExternalStore(ks.subscribe, ks.getSnapshot);
}
