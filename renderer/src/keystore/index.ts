import { useSyncExternalStore } from 'react';
import { windowStore, type WindowStore } from '../window-store/index.ts';
import {
  Keystore,
  type KeystoreOptions,
  type KeystoreSnapshot,
  type LabelStorage,
  type VaultStorage,
} from './keystore.ts';

export * from './keystore.ts';
export { KeystoreFileError, WrongPasswordError, VaultFormatError } from './vault.ts';
export { lastKdfMs } from './kdf.ts';

let instance: Keystore | undefined;

/** The vault as the node keeps it (the window store's `vault` document: the keystore file's text). */
export function windowVaultStorage(store: WindowStore): VaultStorage {
  return {
    read() {
      const v = store.get('vault');
      return typeof v === 'string' ? v : null;
    },
    write: (text) => store.set('vault', text),
    remove: () => store.set('vault', null),
    flush: () => store.flush(),
  };
}

/** The accounts' labels as the node keeps them (`wallet_labels`: address -> label). */
export function windowLabelStorage(store: WindowStore): LabelStorage {
  return {
    read() {
      const v = store.get('wallet_labels');
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, string>) : {};
    },
    write: (labels) => store.set('wallet_labels', labels),
  };
}

/** A keystore whose vault and labels live in `store`, following changes made elsewhere. */
export function windowKeystore(
  store: WindowStore,
  opts: Omit<KeystoreOptions, 'storage' | 'labels'> = {},
): Keystore {
  const ks = new Keystore({ ...opts, storage: windowVaultStorage(store), labels: windowLabelStorage(store) });
  // Two windows changing the vault at once: merged, not dropped (only the keystore can open it).
  store.setMerger('vault', (base, ours, theirs) =>
    ks.mergeStored(
      typeof base === 'string' ? base : undefined,
      typeof ours === 'string' ? ours : null,
      typeof theirs === 'string' ? theirs : undefined,
    ),
  );
  // Another window of the app, or an agent's rollback, changed the vault or the labels.
  store.onChange((key, origin) => {
    if (origin !== 'remote') return;
    if (key === 'vault') ks.externalChange();
    if (key === 'wallet_labels') ks.labelsChanged();
  });
  return ks;
}

/** The page's keystore (vault in the node's app store, scrypt in a worker). */
export function keystore(): Keystore {
  instance ??= windowKeystore(windowStore());
  return instance;
}

export function useKeystore(): KeystoreSnapshot {
  const ks = keystore();
  return useSyncExternalStore(ks.subscribe, ks.getSnapshot);
}
