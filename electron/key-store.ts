import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../node-core/genesis/genesis.ts';

/**
 * The bridge's key storage (DesktopKeyStorage) on the main side: small secrets, each encrypted by
 * the operating system's secret store (Electron safeStorage: Keychain, DPAPI, libsecret/kwallet)
 * and kept as base64 in one JSON file in userData (mode 0600).
 *
 * When the OS cannot protect secrets (safeStorage unavailable, or Linux without a keyring, where
 * Electron would fall back to a hard-coded key), `set` refuses with KeyStorageUnavailableError: a
 * secret is never written in the clear, nor under a key that protects nothing. Reading what was
 * stored earlier still works while the store is available.
 *
 * No electron import: main passes a SecretCipher built on safeStorage, tests a fake one.
 */
export interface SecretCipher {
  /** Whether secrets can be protected by the OS right now. */
  available(): Promise<boolean>;
  encrypt(plain: string): Promise<Uint8Array>;
  /** `stale`: the OS rotated its key; the value should be encrypted again. */
  decrypt(data: Uint8Array): Promise<{ value: string; stale: boolean }>;
}

export const KEY_STORE_FILE = 'desktop-keys.json';
const FORMAT_VERSION = 1;
/** Names: what a wallet would use (`wallet:main`, `seed.1`), nothing path- or prototype-like. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const MAX_SECRET_LENGTH = 64 * 1024;

export class KeyStorageUnavailableError extends Error {
  constructor() {
    super(
      'the operating system offers no secret store (keyring) to protect keys with, so nothing was stored; ' +
        'on Linux, install and unlock a keyring such as GNOME Keyring or KWallet',
    );
    this.name = 'KeyStorageUnavailableError';
  }
}

interface KeyFile {
  version: number;
  entries: Record<string, string>;
}

export function checkKeyName(name: unknown): string {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new TypeError(
      'key name must be 1-128 characters of letters, digits, . _ : - (starting alphanumeric)',
    );
  }
  return name;
}

export class KeyStore {
  readonly file: string;
  readonly #cipher: SecretCipher;
  /** Operations run one at a time: two concurrent sets must not lose one another's entry. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(file: string, cipher: SecretCipher) {
    this.file = file;
    this.#cipher = cipher;
  }

  isEncryptionAvailable(): Promise<boolean> {
    return this.#cipher.available().catch(() => false);
  }

  async set(name: string, value: string): Promise<void> {
    const key = checkKeyName(name);
    if (typeof value !== 'string') throw new TypeError('value must be a string');
    if (value.length > MAX_SECRET_LENGTH)
      throw new RangeError(`value is longer than ${MAX_SECRET_LENGTH} characters`);
    return this.#serial(async () => {
      if (!(await this.isEncryptionAvailable())) throw new KeyStorageUnavailableError();
      const sealed = await this.#cipher.encrypt(value);
      const file = this.#read();
      file.entries[key] = Buffer.from(sealed).toString('base64');
      this.#write(file);
    });
  }

  async get(name: string): Promise<string | null> {
    const key = checkKeyName(name);
    return this.#serial(async () => {
      const file = this.#read();
      const sealed = Object.hasOwn(file.entries, key) ? file.entries[key] : undefined;
      if (sealed === undefined) return null;
      if (!(await this.isEncryptionAvailable())) throw new KeyStorageUnavailableError();
      const { value, stale } = await this.#cipher.decrypt(Buffer.from(sealed, 'base64'));
      if (stale) {
        file.entries[key] = Buffer.from(await this.#cipher.encrypt(value)).toString('base64');
        this.#write(file);
      }
      return value;
    });
  }

  async delete(name: string): Promise<void> {
    const key = checkKeyName(name);
    return this.#serial(async () => {
      const file = this.#read();
      if (!Object.hasOwn(file.entries, key)) return;
      delete file.entries[key];
      this.#write(file);
    });
  }

  #serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(op, op);
    this.#queue = run.catch(() => {});
    return run;
  }

  #read(): KeyFile {
    if (!existsSync(this.file)) return { version: FORMAT_VERSION, entries: Object.create(null) };
    const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<KeyFile>;
    if (parsed.version !== FORMAT_VERSION || typeof parsed.entries !== 'object' || parsed.entries === null) {
      throw new Error(`${this.file} is not a key file of version ${FORMAT_VERSION}`);
    }
    const entries: Record<string, string> = Object.create(null);
    for (const [k, v] of Object.entries(parsed.entries)) if (typeof v === 'string') entries[k] = v;
    return { version: FORMAT_VERSION, entries };
  }

  #write(file: KeyFile): void {
    writeFileAtomic(
      this.file,
      `${JSON.stringify({ version: file.version, entries: { ...file.entries } }, null, 2)}\n`,
      0o600,
    );
  }
}
