import { describe, expect, it } from 'vitest';
import { deriveKeyAsync } from '../../renderer/src/keystore/kdf.ts';
import { windowKeystore } from '../../renderer/src/keystore/index.ts';
import { mergeVaultContents } from '../../renderer/src/keystore/vault-merge.ts';
import type { VaultContents } from '../../renderer/src/keystore/vault.ts';
import { mergeAddressBook, mergeObjectDoc } from '../../renderer/src/window-store/merge.ts';
import { WindowStore } from '../../renderer/src/window-store/window-store.ts';
import { AppStoreStandIn } from '../helpers/app-store-stand-in.ts';

/**
 * Two windows changing one document at once (renderer/src/window-store/merge.ts, the window store's
 * rebase, the keystore's vault merge): neither change is lost. The node's side is a stand-in
 * (test/helpers/app-store-stand-in.ts) so that the race happens on demand.
 */
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);
const PW = 'password one';

async function windowOn(node: AppStoreStandIn): Promise<WindowStore> {
  const s = new WindowStore(node);
  await s.load();
  return s;
}

describe('three-way merges', () => {
  it('objects: each side keeps what only it changed; both changed one key: ours', () => {
    const base = { theme: 'light', lang: 'en', gone: 1 };
    const ours = { theme: 'dark', lang: 'en', gone: 1, mine: true };
    const theirs = { theme: 'system', lang: 'de', theirs: true };
    expect(mergeObjectDoc(base, ours, theirs)).toEqual({
      theme: 'dark',
      lang: 'de',
      theirs: true,
      mine: true,
    });
    expect(mergeObjectDoc(base, null, theirs)).toBeNull();
  });

  it('the address book: contact by contact, a contact removed on one side stays removed', () => {
    const base = [
      { name: 'A', address: A },
      { name: 'B', address: B },
    ];
    const ours = [
      { name: 'A renamed', address: A },
      { name: 'B', address: B },
      { name: 'C', address: C },
    ];
    const theirs = [{ name: 'A', address: A }];
    expect(mergeAddressBook(base, ours, theirs)).toEqual([
      { name: 'A renamed', address: A },
      { name: 'C', address: C },
    ]);
  });

  it('the vault: accounts by identity, labels and hiding field by field, the higher next index', () => {
    const phrase = { entropy: '7f'.repeat(32), nextIndex: 2 };
    const base: VaultContents = {
      phrase,
      accounts: [
        { kind: 'derived', index: 0, label: 'Main', created: 1 },
        { kind: 'derived', index: 1, label: 'Two', created: 2 },
      ],
    };
    const ours: VaultContents = {
      phrase: { ...phrase, nextIndex: 3 },
      accounts: [
        { kind: 'derived', index: 0, label: 'Main', created: 1, hidden: true },
        { kind: 'derived', index: 1, label: 'Two', created: 2 },
        { kind: 'derived', index: 2, label: 'Three', created: 3 },
      ],
    };
    const theirs: VaultContents = {
      phrase,
      accounts: [
        { kind: 'derived', index: 0, label: 'Everyday', created: 1 },
        { kind: 'derived', index: 1, label: 'Two', created: 2 },
        { kind: 'imported', seed: '11'.repeat(32), label: 'Old', created: 4 },
      ],
      accessKeys: [{ seed: '22'.repeat(32), pub: 'p'.repeat(64), created: 5 }],
    };
    expect(mergeVaultContents(base, ours, theirs)).toEqual({
      phrase: { ...phrase, nextIndex: 3 },
      accounts: [
        { kind: 'derived', index: 0, label: 'Everyday', created: 1, hidden: true },
        { kind: 'derived', index: 1, label: 'Two', created: 2 },
        { kind: 'imported', seed: '11'.repeat(32), label: 'Old', created: 4 },
        { kind: 'derived', index: 2, label: 'Three', created: 3 },
      ],
      accessKeys: [{ seed: '22'.repeat(32), pub: 'p'.repeat(64), created: 5 }],
    });
    // Another wallet altogether: nothing to merge.
    const other: VaultContents = { ...theirs, phrase: { entropy: '01'.repeat(16), nextIndex: 1 } };
    expect(mergeVaultContents(base, ours, other)).toBeUndefined();
  });
});

describe('two windows, one node', () => {
  it('both add a contact within one polling interval: both contacts are kept', async () => {
    const node = new AppStoreStandIn();
    node.elsewhere('address_book', [{ name: 'A', address: A }]);
    const one = await windowOn(node);
    const two = await windowOn(node);
    one.set('address_book', [
      { name: 'A', address: A },
      { name: 'B', address: B },
    ]);
    await one.flush();
    two.set('address_book', [
      { name: 'A', address: A },
      { name: 'C', address: C },
    ]);
    await two.flush();
    expect(node.docs.get('address_book')?.value).toEqual([
      { name: 'A', address: A },
      { name: 'B', address: B },
      { name: 'C', address: C },
    ]);
    expect(two.get('address_book')).toEqual(node.docs.get('address_book')?.value);
  });

  it('a newer copy seen by polling while a change waits is merged, not overwritten', async () => {
    const node = new AppStoreStandIn();
    node.elsewhere('settings', { theme: 'light' });
    const s = await windowOn(node);
    node.down = true;
    s.set('settings', { theme: 'dark' });
    await expect.poll(() => s.saveState().error).toBe('cannot reach the node');
    // Meanwhile another window changed another setting, and this one polled (the node answers reads).
    node.elsewhere('settings', { theme: 'light', lang: 'de' });
    await s.refresh();
    node.down = false;
    await s.flush();
    expect(node.docs.get('settings')?.value).toEqual({ theme: 'dark', lang: 'de' });
  });

  it('one window adds an account while the other renames one: the vault keeps both, both stay unlocked', async () => {
    const node = new AppStoreStandIn();
    const first = await windowOn(node);
    const one = windowKeystore(first, { derive: deriveKeyAsync });
    const a = await one.create(PW, PW, { seedHex: '11'.repeat(32), label: 'A' });
    await first.flush();
    const second = await windowOn(node);
    const two = windowKeystore(second, { derive: deriveKeyAsync });
    await two.unlock(PW);

    // Both change the vault before either sees the other's change (within one polling interval).
    one.addAccount('22'.repeat(32), 'B');
    two.renameAccount(a.address, 'Everyday');
    await Promise.all([first.flush(), second.flush()]);
    await first.refresh();
    await second.refresh();

    for (const ks of [one, two]) {
      expect(ks.status).toBe('unlocked');
      expect(ks.accounts.map((x) => x.label)).toEqual(['Everyday', 'B']);
    }
    // What the node holds opens to the same two accounts in a third window.
    const third = windowKeystore(await windowOn(node), { derive: deriveKeyAsync });
    await third.unlock(PW);
    expect(third.accounts.map((x) => x.label)).toEqual(['Everyday', 'B']);
  });
});
