import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkKeyName,
  KeyStorageUnavailableError,
  KeyStore,
  type SecretCipher,
} from '../../electron/key-store.ts';
import { tempDir } from '../helpers/node.ts';

/** A stand-in for safeStorage: XOR "encryption" with a key that can rotate, availability switchable. */
interface FakeCipher extends SecretCipher {
  on: boolean;
  key: number;
  encrypts: number;
}

function fakeCipher(): FakeCipher {
  const c: FakeCipher = {
    on: true,
    key: 0x5a,
    encrypts: 0,
    async available() {
      return c.on;
    },
    async encrypt(plain: string) {
      c.encrypts++;
      return Uint8Array.from(Buffer.from(`${c.key}:${plain}`, 'utf8'), (b) => b ^ c.key);
    },
    async decrypt(data: Uint8Array) {
      for (const k of [0x5a, 0x33]) {
        const text = Buffer.from(Uint8Array.from(data, (b) => b ^ k)).toString('utf8');
        if (text.startsWith(`${k}:`)) return { value: text.slice(`${k}:`.length), stale: k !== c.key };
      }
      throw new Error('cannot decrypt');
    },
  };
  return c;
}

describe('the desktop key store', () => {
  it('stores, reads and deletes secrets, never in the clear, in a private file', async () => {
    const file = join(tempDir(), 'desktop-keys.json');
    const cipher = fakeCipher();
    const store = new KeyStore(file, cipher);
    expect(await store.get('wallet:main')).toBeNull();
    await store.set('wallet:main', 'correct horse battery staple');
    await store.set('seed.2', 'second');
    expect(await store.get('wallet:main')).toBe('correct horse battery staple');
    expect(await store.get('seed.2')).toBe('second');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('correct horse');
    expect(JSON.parse(text)).toMatchObject({ version: 1, entries: { 'wallet:main': expect.any(String) } });
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    await store.delete('wallet:main');
    await store.delete('never-stored');
    expect(await store.get('wallet:main')).toBeNull();
    expect(await new KeyStore(file, cipher).get('seed.2')).toBe('second');
  });

  it('refuses to store anything when the OS cannot protect it, and writes nothing', async () => {
    const file = join(tempDir(), 'desktop-keys.json');
    const cipher = fakeCipher();
    cipher.on = false;
    const store = new KeyStore(file, cipher);
    expect(await store.isEncryptionAvailable()).toBe(false);
    await expect(store.set('wallet:main', 'seed')).rejects.toBeInstanceOf(KeyStorageUnavailableError);
    await expect(store.set('wallet:main', 'seed')).rejects.toThrow(/nothing was stored/);
    expect(existsSync(file)).toBe(false);
    expect(cipher.encrypts).toBe(0);
  });

  it('treats a failing availability check as unavailable', async () => {
    const store = new KeyStore(join(tempDir(), 'k.json'), {
      available: async () => {
        throw new Error('keyring locked');
      },
      encrypt: async () => new Uint8Array(),
      decrypt: async () => ({ value: '', stale: false }),
    });
    expect(await store.isEncryptionAvailable()).toBe(false);
  });

  it('re-encrypts a secret when the OS rotated its key', async () => {
    const file = join(tempDir(), 'desktop-keys.json');
    const cipher = fakeCipher();
    const store = new KeyStore(file, cipher);
    await store.set('k', 'v');
    const before = readFileSync(file, 'utf8');
    cipher.key = 0x33;
    expect(await store.get('k')).toBe('v');
    expect(readFileSync(file, 'utf8')).not.toBe(before);
    expect(await store.get('k')).toBe('v');
  });

  it('keeps every entry when sets race', async () => {
    const store = new KeyStore(join(tempDir(), 'k.json'), fakeCipher());
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.set(`key-${i}`, `value-${i}`)));
    for (let i = 0; i < 20; i++) expect(await store.get(`key-${i}`)).toBe(`value-${i}`);
  });

  it('accepts only plain names and bounded values', async () => {
    for (const good of ['a', 'wallet:main', 'seed.1', 'A_b-c', 'x'.repeat(128)])
      expect(checkKeyName(good)).toBe(good);
    for (const bad of [
      '',
      '.hidden',
      '../x',
      'a/b',
      'a b',
      '__proto__x'.replace('x', '/'),
      'x'.repeat(129),
      7,
    ]) {
      expect(() => checkKeyName(bad), String(bad)).toThrow(TypeError);
    }
    const store = new KeyStore(join(tempDir(), 'k.json'), fakeCipher());
    await expect(store.set('../evil', 'v')).rejects.toThrow(TypeError);
    await expect(store.set('big', 'x'.repeat(64 * 1024 + 1))).rejects.toThrow(RangeError);
    await store.set('constructor', 'fine');
    expect(await store.get('constructor')).toBe('fine');
    expect(await store.get('toString')).toBeNull();
  });

  it('refuses a key file it does not understand rather than overwriting it', async () => {
    const file = join(tempDir(), 'k.json');
    writeFileSync(file, JSON.stringify({ version: 99, entries: {} }));
    const store = new KeyStore(file, fakeCipher());
    await expect(store.set('a', 'b')).rejects.toThrow(/not a key file of version 1/);
    expect(JSON.parse(readFileSync(file, 'utf8')).version).toBe(99);
  });
});
