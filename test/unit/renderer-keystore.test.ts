import { describe, expect, it } from 'vitest';
import { type Block, ZERO_HASH } from '../../node-core/protocol/block.ts';
import { verifyBlockSignature } from '../../node-core/protocol/block-sign.ts';
import { bytesToHex } from '../../node-core/protocol/hex.ts';
import { keyPairFromSeed } from '../../node-core/protocol/keys.ts';
import { deriveKeyAsync } from '../../renderer/src/keystore/kdf.ts';
import {
  Keystore,
  KeystoreLockedError,
  PasswordPolicyError,
  type VaultStorage,
} from '../../renderer/src/keystore/keystore.ts';
import {
  groupMatches,
  parseSeedInput,
  pickConfirmGroups,
  seedGroups,
} from '../../renderer/src/keystore/seed.ts';
import {
  newKdfParams,
  openVault,
  parseVaultFile,
  sealVault,
  VaultFormatError,
  WrongPasswordError,
} from '../../renderer/src/keystore/vault.ts';

/** The renderer's keystore: encryption at rest, lock and unlock, password change, auto-lock, signing. */
function memoryStorage(): VaultStorage & { text: string | null } {
  const s = {
    text: null as string | null,
    read: () => s.text,
    write: (t: string) => void (s.text = t),
    remove: () => void (s.text = null),
  };
  return s;
}

const SEED_A = '11'.repeat(32);
const SEED_B = '22'.repeat(32);
const PW = 'password one';

describe('vault format', () => {
  const key = new Uint8Array(32).fill(7);
  const kdf = newKdfParams();
  const contents = { accounts: [{ kind: 'imported' as const, seed: SEED_A, label: 'A', created: 1 }] };

  it('round-trips, with a fresh nonce per save', () => {
    const a = sealVault(key, kdf, contents);
    const b = sealVault(key, kdf, contents);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.ciphertext).not.toContain(SEED_A);
    expect(openVault(key, parseVaultFile(JSON.stringify(a)))).toEqual(contents);
  });

  it('refuses a wrong key, a tampered ciphertext and a tampered header', () => {
    const v = sealVault(key, kdf, contents);
    expect(() => openVault(new Uint8Array(32), v)).toThrow(WrongPasswordError);
    const flipped = (v.ciphertext[0] === 'a' ? 'b' : 'a') + v.ciphertext.slice(1);
    expect(() => openVault(key, { ...v, ciphertext: flipped })).toThrow(WrongPasswordError);
    // The KDF parameters are bound as associated data: a weakened header no longer decrypts.
    expect(() => openVault(key, { ...v, kdf: { ...v.kdf, N: 2 ** 16 } })).toThrow(WrongPasswordError);
  });

  it('refuses damaged or weakened stored files before any derivation', () => {
    const v = sealVault(key, kdf, contents);
    expect(() => parseVaultFile('{')).toThrow(VaultFormatError);
    expect(() => parseVaultFile(JSON.stringify({ ...v, version: 3 }))).toThrow(VaultFormatError);
    expect(() => parseVaultFile(JSON.stringify({ ...v, kdf: { ...v.kdf, N: 1024 } }))).toThrow(/too weak/);
    expect(() => parseVaultFile(JSON.stringify({ ...v, kdf: { ...v.kdf, N: 3 } }))).toThrow(VaultFormatError);
  });
});

describe('Keystore', () => {
  it('creates, locks (wiping), refuses a wrong password, unlocks, signs', async () => {
    const storage = memoryStorage();
    const ks = new Keystore({ storage, derive: deriveKeyAsync });
    expect(ks.status).toBe('empty');
    await expect(ks.create('short', 'short', { seedHex: SEED_A, label: 'A' })).rejects.toThrow(
      PasswordPolicyError,
    );
    await expect(ks.create(PW, 'different', { seedHex: SEED_A, label: 'A' })).rejects.toThrow(/differ/);
    const a = await ks.create(PW, PW, { seedHex: SEED_A, label: 'A' });
    expect(a.address).toBe(keyPairFromSeed(new Uint8Array(32).fill(0x11)).address);
    expect(storage.text).not.toContain(SEED_A);
    expect(JSON.parse(storage.text!).kdf).toMatchObject({ name: 'scrypt', N: 32768, r: 8, p: 1 });

    const b = ks.addAccount(SEED_B, 'B');
    expect(() => ks.addAccount(SEED_B, 'again')).toThrow(/already in the keystore as "B"/);
    ks.renameAccount(b.address, 'Savings');
    expect(ks.accounts.map((x) => x.label)).toEqual(['A', 'Savings']);

    ks.lock();
    expect(ks.status).toBe('locked');
    expect(ks.accounts).toEqual([]);
    const block: Block = {
      type: 'claim',
      account: a.address,
      previous: ZERO_HASH,
      balance: 5n,
      timestamp: 1n,
      asset: 'XE',
      amount: 5n,
    };
    expect(() => ks.signBlock(a.address, block, 'net')).toThrow(KeystoreLockedError);

    await expect(ks.unlock('wrong password')).rejects.toThrow(WrongPasswordError);
    expect(ks.status).toBe('locked');
    await ks.unlock(PW);
    expect(ks.accounts.map((x) => x.label)).toEqual(['A', 'Savings']);
    const signed = ks.signBlock(a.address, block, 'net');
    expect(signed.pub_key).toBe(keyPairFromSeed(new Uint8Array(32).fill(0x11)).pub_key);
    expect(verifyBlockSignature(signed, 'net', signed.pub_key!)).toBe(true);
    expect(() => ks.signBlock(a.address, { ...block, account: b.address }, 'net')).toThrow(/another account/);
  });

  it('changes the password: the old one stops working, the new one opens the same accounts', async () => {
    const storage = memoryStorage();
    const ks = new Keystore({ storage, derive: deriveKeyAsync });
    await ks.create(PW, PW, { seedHex: SEED_A, label: 'A' });
    const before = JSON.parse(storage.text!).kdf.salt;
    await expect(ks.changePassword('not it at all', 'new password', 'new password')).rejects.toThrow(
      WrongPasswordError,
    );
    await ks.changePassword(PW, 'new password', 'new password');
    expect(JSON.parse(storage.text!).kdf.salt).not.toBe(before);
    const again = new Keystore({ storage, derive: deriveKeyAsync });
    await expect(again.unlock(PW)).rejects.toThrow(WrongPasswordError);
    await again.unlock('new password');
    expect(again.accounts.map((x) => x.label)).toEqual(['A']);
  });

  it('never overwrites a vault another window changed: it locks and reads it afresh, or takes it under the same key', async () => {
    const storage = memoryStorage();
    const one = new Keystore({ storage, derive: deriveKeyAsync });
    const a = await one.create(PW, PW, { seedHex: SEED_A, label: 'A' });
    const two = new Keystore({ storage, derive: deriveKeyAsync });
    await two.unlock(PW);
    two.addAccount(SEED_B, 'B');
    expect(() => one.renameAccount(a.address, 'renamed')).toThrow(/changed in another window/);
    expect(one.getSnapshot()).toMatchObject({ status: 'locked', lockedBy: 'elsewhere' });
    await one.unlock(PW);
    expect(one.accounts.map((x) => x.label)).toEqual(['A', 'B']);
    // The store's change path: a change elsewhere under the same key is taken at once, unlocked.
    two.renameAccount(a.address, 'A2');
    one.externalChange();
    expect(one.status).toBe('unlocked');
    expect(one.accounts.map((x) => x.label)).toEqual(['A2', 'B']);
  });

  it('locks itself after the idle time, and activity postpones it', async () => {
    let now = 0;
    const ks = new Keystore({ storage: memoryStorage(), derive: deriveKeyAsync, now: () => now });
    await ks.create(PW, PW, { seedHex: SEED_A, label: 'A' });
    ks.setAutoLock(5);
    now = 4 * 60_000;
    expect(ks.checkIdle()).toBe(false);
    ks.touch();
    now = 8 * 60_000;
    expect(ks.checkIdle()).toBe(false);
    now = 9 * 60_000 + 1;
    expect(ks.checkIdle()).toBe(true);
    expect(ks.getSnapshot()).toMatchObject({ status: 'locked', lockedBy: 'idle' });
    ks.dispose();
  });
});

describe('seed handling', () => {
  it('groups, parses pasted seeds and checks typed groups', () => {
    const hex = bytesToHex(new Uint8Array(32).map((_, i) => i * 7));
    expect(seedGroups(hex)).toHaveLength(16);
    expect(seedGroups(hex).join('')).toBe(hex);
    expect(parseSeedInput(seedGroups(hex).join(' ').toUpperCase())).toEqual({ seedHex: hex });
    expect(parseSeedInput(`0x${hex}`)).toEqual({ seedHex: hex });
    expect(parseSeedInput(hex.slice(2))).toEqual({
      error: 'A seed has 64 hexadecimal characters; this has 62.',
    });
    expect(parseSeedInput(`${hex.slice(1)}g`)).toMatchObject({ error: expect.stringMatching(/"g" is not/) });
    expect(parseSeedInput('0'.repeat(64))).toMatchObject({ error: expect.stringMatching(/all-zero/) });
    expect(groupMatches(' AB12 ', 'ab12')).toBe(true);
    expect(groupMatches('ab13', 'ab12')).toBe(false);
  });

  it('asks for distinct groups', () => {
    for (let i = 0; i < 50; i++) {
      const g = pickConfirmGroups(3);
      expect(new Set(g).size).toBe(3);
      expect(g.every((x) => x >= 0 && x < 16)).toBe(true);
    }
  });
});
