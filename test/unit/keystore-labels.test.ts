import { describe, expect, it } from 'vitest';
import { deriveKeyAsync } from '../../renderer/src/keystore/kdf.ts';
import { Keystore, type LabelStorage, type VaultStorage } from '../../renderer/src/keystore/keystore.ts';

/**
 * The keystore's labels kept outside the vault (issue #14: agent checkpoints cover wallet labels;
 * issue #16: the node keeps them): written on every save that changes one, taken back when they
 * change elsewhere (a rollback) and then saved into the vault too; and a new wallet is not reported
 * created before its storage says it is stored for good.
 */
interface TestVault extends VaultStorage {
  text: string | null;
  flushed: number;
}
interface TestLabels extends LabelStorage {
  map: Record<string, string>;
  writes: number;
}

function storages(): { vault: TestVault; labels: TestLabels } {
  const vault: TestVault = {
    text: null as string | null,
    flushed: 0,
    read: () => vault.text,
    write: (t: string) => void (vault.text = t),
    remove: () => void (vault.text = null),
    flush: async () => {
      await new Promise((r) => setTimeout(r, 5));
      vault.flushed += 1;
    },
  };
  const labels: TestLabels = {
    map: {} as Record<string, string>,
    writes: 0,
    read: () => labels.map,
    write: (m: Record<string, string>) => {
      labels.map = { ...m };
      labels.writes += 1;
    },
  };
  return { vault, labels };
}

const PW = 'password one';

describe('keystore labels outside the vault, and windows sharing one vault', () => {
  it('writes them on save, takes back a change made elsewhere, and saves it into the vault', async () => {
    const { vault, labels } = storages();
    const ks = new Keystore({ storage: vault, labels, derive: deriveKeyAsync });
    const a = await ks.create(PW, PW, { seedHex: '11'.repeat(32), label: 'Main' });
    expect(vault.flushed).toBe(1); // create waited for the storage
    expect(labels.map).toEqual({ [a.address]: 'Main' });
    const b = ks.addAccount('22'.repeat(32), 'Savings');
    expect(labels.map).toEqual({ [a.address]: 'Main', [b.address]: 'Savings' });
    const writes = labels.writes;
    ks.touch();
    expect(labels.writes).toBe(writes);

    // An agent rolls a label back: the unlocked keystore shows it and saves it into the vault.
    labels.map = { [a.address]: 'Everyday', [b.address]: 'Savings' };
    ks.labelsChanged();
    expect(ks.accounts.find((x) => x.address === a.address)?.label).toBe('Everyday');
    ks.renameAccount(b.address, 'Rainy day');
    ks.lock();
    const again = new Keystore({ storage: vault, derive: deriveKeyAsync });
    await again.unlock(PW);
    expect(again.accounts.map((x) => x.label)).toEqual(['Everyday', 'Rainy day']);
  });

  it('on unlock, the labels outside win over the vault copy', async () => {
    const { vault, labels } = storages();
    const ks = new Keystore({ storage: vault, labels, derive: deriveKeyAsync });
    const a = await ks.create(PW, PW, { seedHex: '33'.repeat(32), label: 'Main' });
    ks.lock();
    labels.map = { [a.address]: 'Renamed elsewhere' };
    await ks.unlock(PW);
    expect(ks.accounts[0]?.label).toBe('Renamed elsewhere');
  });

  it('another window added an account: this one stays unlocked and shows it; a new password locks it', async () => {
    const { vault, labels } = storages();
    const one = new Keystore({ storage: vault, labels, derive: deriveKeyAsync });
    await one.create(PW, PW, { seedHex: '44'.repeat(32), label: 'Main' });
    const two = new Keystore({ storage: vault, labels, derive: deriveKeyAsync });
    await two.unlock(PW);
    two.addAccount('55'.repeat(32), 'Second');
    one.externalChange();
    expect(one.status).toBe('unlocked');
    expect(one.accounts.map((a) => a.label)).toEqual(['Main', 'Second']);
    // Saving from the first window now keeps the account added in the second.
    one.renameAccount(one.accounts[0]!.address, 'Main account');
    two.externalChange();
    expect(two.accounts.map((a) => a.label)).toEqual(['Main account', 'Second']);

    await two.changePassword(PW, 'password two', 'password two');
    one.externalChange();
    expect(one.status).toBe('locked');
    expect(one.getSnapshot().lockedBy).toBe('elsewhere');
  });
});
