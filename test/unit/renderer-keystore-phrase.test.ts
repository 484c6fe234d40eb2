import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveKey, parse } from '../../node-core/client/keystore-file.ts';
import { accountSeed } from '../../node-core/protocol/hd-derivation.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { entropyToBip39Seed } from '../../node-core/protocol/mnemonic.ts';
import { deriveKeyAsync } from '../../renderer/src/keystore/kdf.ts';
import { Keystore, type LabelStorage, type VaultStorage } from '../../renderer/src/keystore/keystore.ts';
import { newKdfParams, VaultFormatError, WrongPasswordError } from '../../renderer/src/keystore/vault.ts';

/**
 * The keystore with one phrase for all accounts: accounts at their indexes, "New account" at the next,
 * hide and remove, the phrase again, backup files out and in (merge rules), a first run from a backup,
 * and a vault from before phrases (version 1), which keeps working and gets a phrase on demand.
 * Real scrypt (the format's smallest N), real storage semantics in memory.
 */
function memoryStorage(): VaultStorage & { text: string | null } {
  const s = {
    text: null as string | null,
    read: () => s.text,
    write: (t: string) => void (s.text = t),
    remove: () => void (s.text = null),
  };
  return s;
}

function memoryLabels(): LabelStorage & { labels: Record<string, string> } {
  const s = {
    labels: {} as Record<string, string>,
    read: () => s.labels,
    write: (l: Record<string, string>) => void (s.labels = { ...l }),
  };
  return s;
}

const PW = 'password one';
const ENTROPY = '7f'.repeat(32);
const bip39 = entropyToBip39Seed(new Uint8Array(32).fill(0x7f));
const addr = (index: number) => keyPairFromSeed(accountSeed(bip39, index)).address;
const SEED_X = '33'.repeat(32);
const ADDR_X = keyPairFromSeed(new Uint8Array(32).fill(0x33)).address;

function keystore(storage = memoryStorage()): Keystore {
  return new Keystore({ storage, derive: deriveKeyAsync, labels: memoryLabels() });
}

async function phraseWallet(
  indexes = [0],
): Promise<{ ks: Keystore; storage: ReturnType<typeof memoryStorage> }> {
  const storage = memoryStorage();
  const ks = keystore(storage);
  await ks.create(PW, PW, { phraseEntropyHex: ENTROPY, indexes, label: 'Main' });
  return { ks, storage };
}

describe('Keystore with a recovery phrase', () => {
  it('creates the accounts of the given indexes, stores no seed of them, and unlocks to the same', async () => {
    const { ks, storage } = await phraseWallet([3, 0, 1]);
    expect(ks.accounts.map((a) => [a.address, a.label, a.kind, a.index])).toEqual([
      [addr(0), 'Main', 'derived', 0],
      [addr(1), 'Account 2', 'derived', 1],
      [addr(3), 'Account 4', 'derived', 3],
    ]);
    expect(ks.getSnapshot()).toMatchObject({ hasPhrase: true, nextIndex: 4 });
    const file = parse(storage.text!);
    expect(file.version).toBe(2);
    ks.lock();
    expect(ks.getSnapshot()).toMatchObject({ status: 'locked', hasPhrase: false, accounts: [] });
    await expect(ks.unlock('wrong password')).rejects.toBeInstanceOf(WrongPasswordError);
    await ks.unlock(PW);
    expect(ks.accounts.map((a) => a.address)).toEqual([addr(0), addr(1), addr(3)]);
    // The accounts sign with the derived keys.
    expect(ks.publicKeyOf(addr(3))).toBe(keyPairFromSeed(accountSeed(bip39, 3)).pub_key);
  });

  it('"New account" takes the next index; the phrase comes back as its entropy', async () => {
    const { ks } = await phraseWallet();
    expect(ks.newAccount('Savings')).toMatchObject({ address: addr(1), label: 'Savings', index: 1 });
    expect(ks.newAccount('')).toMatchObject({ address: addr(2), label: 'Account 3', index: 2 });
    expect(ks.getSnapshot().nextIndex).toBe(3);
    expect(ks.phraseEntropyHex()).toBe(ENTROPY);
    await ks.verifyPassword(PW);
    await expect(ks.verifyPassword('nope nope')).rejects.toBeInstanceOf(WrongPasswordError);
  });

  it('hides and shows; removes (never the last shown one); brings a phrase account back by index', async () => {
    const { ks, storage } = await phraseWallet([0, 1]);
    ks.setHidden(addr(1), true);
    expect(ks.accounts.map((a) => a.address)).toEqual([addr(0)]);
    expect(ks.getSnapshot().allAccounts.map((a) => [a.address, a.hidden])).toEqual([
      [addr(0), false],
      [addr(1), true],
    ]);
    expect(() => ks.setHidden(addr(0), true)).toThrow('The last shown account cannot be hidden.');
    expect(() => ks.removeAccount(addr(0))).toThrow(/last shown account cannot be removed/);
    expect(() => ks.removeAccount('00'.repeat(32))).toThrow('No such account in the keystore.');
    expect(ks.newAccount('').index).toBe(2);
    // Hidden survives a lock.
    ks.lock();
    await ks.unlock(PW);
    expect(ks.accounts.map((a) => a.address)).toEqual([addr(0), addr(2)]);
    ks.setHidden(addr(1), false);
    ks.removeAccount(addr(1));
    expect(ks.has(addr(1))).toBe(false);
    expect(ks.getSnapshot().nextIndex).toBe(3);
    expect(() => ks.restoreAccount(0)).toThrow('Account 1 is in the wallet already, as “Main”.');
    expect(ks.restoreAccount(1)).toMatchObject({ address: addr(1), label: 'Account 2' });
    expect(ks.getSnapshot().nextIndex).toBe(3);
    expect(ks.restoreAccount(9).address).toBe(addr(9));
    expect(ks.getSnapshot().nextIndex).toBe(10);
    const before = storage.text;
    expect(() => ks.restoreAccount(-1)).toThrow(/whole number/);
    expect(storage.text).toBe(before);
  });

  it('refuses the same account twice, naming it (and that it is hidden)', async () => {
    const { ks } = await phraseWallet();
    ks.addAccount(SEED_X, 'X');
    ks.setHidden(ADDR_X, true);
    expect(() => ks.addAccount(SEED_X, 'again')).toThrow(
      'This account is already in the keystore as "X" (hidden: Settings shows it again).',
    );
  });
});

describe('backup files', () => {
  it('export is a version 2 keystore file under the current password; first run restores it whole', async () => {
    const { ks } = await phraseWallet([0, 2]);
    ks.addAccount(SEED_X, 'X');
    ks.setHidden(addr(2), true);
    const text = ks.exportBackup();
    expect(JSON.parse(text)).toMatchObject({ type: 'ledger-node-keystore', version: 2 });
    const fresh = keystore();
    await expect(fresh.restoreBackup(text, 'wrong password')).rejects.toBeInstanceOf(WrongPasswordError);
    expect(fresh.status).toBe('empty');
    await expect(fresh.restoreBackup('{"a":1}', PW)).rejects.toBeInstanceOf(VaultFormatError);
    await fresh.restoreBackup(text, PW);
    expect(fresh.getSnapshot().allAccounts.map((a) => [a.address, a.kind, a.hidden])).toEqual([
      [addr(0), 'derived', false],
      [addr(2), 'derived', true],
      [ADDR_X, 'imported', false],
    ]);
    expect(fresh.getSnapshot().nextIndex).toBe(3);
    await expect(fresh.restoreBackup(text, PW)).rejects.toThrow(/already exists/);
  });

  it('import merges: the same phrase adds missing indexes; another phrase comes in as imported accounts', async () => {
    const { ks } = await phraseWallet([0, 1]);
    ks.newAccount('');
    const backup = ks.exportBackup();
    ks.removeAccount(addr(1));
    expect(await ks.importBackup(backup, PW)).toEqual({
      added: 1,
      present: 2,
      adoptedPhrase: false,
      otherPhrase: 0,
    });
    expect(ks.accounts.map((a) => a.address)).toEqual([addr(0), addr(2), addr(1)]);
    expect(await ks.importBackup(backup, PW)).toEqual({
      added: 0,
      present: 3,
      adoptedPhrase: false,
      otherPhrase: 0,
    });

    // Another wallet with another phrase.
    const other = keystore();
    await other.create(PW, PW, { phraseEntropyHex: 'ab'.repeat(16), indexes: [0], label: 'Theirs' });
    other.addAccount(SEED_X, 'X');
    const theirs = other.accounts.map((a) => a.address);
    const report = await ks.importBackup(other.exportBackup(), PW);
    expect(report).toEqual({ added: 2, present: 0, adoptedPhrase: false, otherPhrase: 1 });
    const all = ks.getSnapshot().allAccounts;
    expect(all.slice(-2).map((a) => [a.address, a.kind])).toEqual([
      [theirs[0], 'imported'],
      [theirs[1], 'imported'],
    ]);
    // The wallet's own phrase is unchanged, and it survives a lock.
    expect(ks.phraseEntropyHex()).toBe(ENTROPY);
    ks.lock();
    await ks.unlock(PW);
    expect(ks.accounts).toHaveLength(5);
    await expect(ks.importBackup(backup, 'not the password')).rejects.toBeInstanceOf(WrongPasswordError);
    await expect(ks.importBackup('not json', PW)).rejects.toBeInstanceOf(VaultFormatError);
  });
});

describe('a vault from before phrases (version 1)', () => {
  async function v1Storage(): Promise<ReturnType<typeof memoryStorage>> {
    const kdf = newKdfParams({ N: 2 ** 14, r: 8, p: 1 });
    const key = await deriveKey(PW, kdf);
    const nonce = randomBytes(24);
    const aad = `ledger-desktop-vault/v1|xchacha20-poly1305|scrypt|${kdf.N}|${kdf.r}|${kdf.p}|${kdf.salt}`;
    const plain = JSON.stringify({ accounts: [{ seed: SEED_X, label: 'Old', created: 7 }] });
    const ct = xchacha20poly1305(key, nonce, new TextEncoder().encode(aad)).encrypt(
      new TextEncoder().encode(plain),
    );
    const storage = memoryStorage();
    storage.text = JSON.stringify({
      version: 1,
      kdf,
      cipher: 'xchacha20-poly1305',
      nonce: bytesToHex(nonce),
      ciphertext: bytesToHex(ct),
    });
    return storage;
  }

  it('opens with its accounts as imported ones; New account needs a phrase first, then takes index 0', async () => {
    const storage = await v1Storage();
    const ks = keystore(storage);
    expect(ks.status).toBe('locked');
    await ks.unlock(PW);
    expect(ks.accounts).toEqual([
      { address: ADDR_X, label: 'Old', created: 7, kind: 'imported', hidden: false },
    ]);
    expect(ks.getSnapshot().hasPhrase).toBe(false);
    expect(() => ks.newAccount('x')).toThrow(/no recovery phrase yet/);
    expect(() => ks.phraseEntropyHex()).toThrow(/no recovery phrase/);
    // Still stored as version 1 until something changes.
    expect(JSON.parse(storage.text!).version).toBe(1);
    await ks.adoptPhrase(ENTROPY);
    expect(JSON.parse(storage.text!).version).toBe(2);
    expect(ks.newAccount('New').address).toBe(addr(0));
    await expect(ks.adoptPhrase('ab'.repeat(32))).rejects.toThrow(/already has a recovery phrase/);
    ks.lock();
    await ks.unlock(PW);
    expect(ks.accounts.map((a) => [a.address, a.kind])).toEqual([
      [ADDR_X, 'imported'],
      [addr(0), 'derived'],
    ]);
  });

  it('a backup with a phrase gives such a wallet that phrase', async () => {
    const ks = keystore(await v1Storage());
    await ks.unlock(PW);
    const { ks: other } = await phraseWallet([0, 1]);
    expect(await ks.importBackup(other.exportBackup(), PW)).toEqual({
      added: 2,
      present: 0,
      adoptedPhrase: true,
      otherPhrase: 0,
    });
    expect(ks.phraseEntropyHex()).toBe(ENTROPY);
    expect(ks.newAccount('').address).toBe(addr(2));
  });
});
