import type { Block } from '../../../node-core/protocol/block.ts';
import { signBlock, type SignedBlock } from '../../../node-core/protocol/block-sign.ts';
import { bytesToHex, hexToBytes } from '../../../node-core/protocol/hex.ts';
import {
  addressFromPublicKey,
  publicKeyFromSeed,
  randomSeed,
  signBytes,
} from '../../../node-core/protocol/keys.ts';
import {
  type MarketplaceRequest,
  signMarketplaceMessage,
  type UnsignedMarketplace,
} from '../../../node-core/protocol/marketplace.ts';
import {
  type ChatEnvelope,
  signChatEnvelope,
  signChatReadAuth,
  signDirectoryRegistration,
  signLeaseAccess,
} from '../../../node-core/protocol/payloads.ts';
import { type DeriveKey, deriveKey } from './kdf.ts';
import {
  type KdfParams,
  newKdfParams,
  openVault,
  parseVaultFile,
  sealVault,
  type VaultAccessKey,
  type VaultAccount,
  type VaultContents,
} from './vault.ts';

/**
 * The keystore: the only place seeds exist in the renderer. At rest they are encrypted (vault.ts);
 * unlocked, they sit in this module's memory, are used here to sign blocks, and are wiped on lock.
 * Nothing outside gets a seed back: the rest of the app sees addresses and labels, and asks for
 * signatures. The node never signs.
 */
export const MIN_PASSWORD_LENGTH = 8;
export const VAULT_STORAGE_KEY = 'ledger-desktop.vault.v1';

export interface AccountInfo {
  address: string;
  label: string;
  created: number;
}

export type KeystoreStatus = 'empty' | 'locked' | 'unlocked';
export type LockReason = 'user' | 'idle' | 'elsewhere';

export interface KeystoreSnapshot {
  status: KeystoreStatus;
  /** Accounts in creation order (empty unless unlocked). */
  accounts: readonly AccountInfo[];
  /** Why the keystore locked, if it did: the user, inactivity, or a change made in another window. */
  lockedBy?: LockReason;
}

/**
 * Where the encrypted vault lives: the node's app store in the app (window-store/), read from memory
 * and written through; localStorage for tests and tools.
 */
export interface VaultStorage {
  read(): string | null;
  write(text: string): void;
  remove(): void;
  /** Resolves once what was written is stored for good (the node took it). */
  flush?(): Promise<void>;
}

/**
 * The accounts' labels kept outside the vault (address -> label), so that they can be read and
 * rolled back without the password (agent checkpoints); the vault keeps its own copy for backups.
 */
export interface LabelStorage {
  read(): Readonly<Record<string, string>>;
  write(labels: Record<string, string>): void;
}

export function localVaultStorage(key = VAULT_STORAGE_KEY): VaultStorage {
  return {
    read: () => globalThis.localStorage.getItem(key),
    write: (text) => globalThis.localStorage.setItem(key, text),
    remove: () => globalThis.localStorage.removeItem(key),
  };
}

export class PasswordPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PasswordPolicyError';
  }
}

export class KeystoreLockedError extends Error {
  constructor() {
    super('The keystore is locked: unlock it to sign.');
    this.name = 'KeystoreLockedError';
  }
}

export function checkNewPassword(password: string, confirm: string): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    return `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`;
  }
  if (password !== confirm) return 'The two passwords differ.';
  return undefined;
}

interface Entry {
  address: string;
  seed: Uint8Array;
  label: string;
  created: number;
}

interface AccessEntry {
  seed: Uint8Array;
  pub: string;
  lease?: string;
  created: number;
}

/** What the app may know of a lease's access key: never its seed. */
export interface AccessKeyInfo {
  pub: string;
  lease?: string;
  created: number;
}

interface Unlocked {
  key: Uint8Array;
  kdf: KdfParams;
  /** In creation order. */
  entries: Entry[];
  /** Per-lease access keys, in creation order. */
  access: AccessEntry[];
}

export interface KeystoreOptions {
  storage?: VaultStorage;
  labels?: LabelStorage;
  derive?: DeriveKey;
  /** Milliseconds clock (auto-lock); tests inject one. */
  now?: () => number;
}

export class Keystore {
  private readonly storage: VaultStorage;
  private readonly labels: LabelStorage | undefined;
  private readonly derive: DeriveKey;
  private readonly now: () => number;
  private unlocked: Unlocked | undefined;
  private snapshot: KeystoreSnapshot;
  private readonly listeners = new Set<() => void>();
  private busy = false;
  /** The stored text this page last read or wrote: a different one means another window changed it. */
  private knownText: string | null = null;
  private autoLockMs = 5 * 60_000;
  private lastActivity: number;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(opts: KeystoreOptions = {}) {
    this.storage = opts.storage ?? localVaultStorage();
    this.labels = opts.labels;
    this.derive = opts.derive ?? deriveKey;
    this.now = opts.now ?? Date.now;
    this.lastActivity = this.now();
    this.snapshot = { status: this.storage.read() === null ? 'empty' : 'locked', accounts: [] };
  }

  // ---- observation (React reads snapshots through useSyncExternalStore) ----------------------------

  getSnapshot = (): KeystoreSnapshot => this.snapshot;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private publish(lockedBy?: LockReason): void {
    const u = this.unlocked;
    const status: KeystoreStatus = u ? 'unlocked' : this.storage.read() === null ? 'empty' : 'locked';
    this.snapshot = {
      status,
      accounts: u ? u.entries.map((e) => ({ address: e.address, label: e.label, created: e.created })) : [],
      ...(lockedBy ? { lockedBy } : {}),
    };
    for (const l of this.listeners) l();
  }

  get status(): KeystoreStatus {
    return this.snapshot.status;
  }

  get accounts(): readonly AccountInfo[] {
    return this.snapshot.accounts;
  }

  // ---- life cycle ---------------------------------------------------------------------------------

  /** Creates the vault with its first account (refused if one exists: unlock it instead). */
  async create(
    password: string,
    confirm: string,
    first: { seedHex: string; label: string },
  ): Promise<AccountInfo> {
    if (this.storage.read() !== null)
      throw new Error('A keystore already exists in this browser: unlock it.');
    const problem = checkNewPassword(password, confirm);
    if (problem) throw new PasswordPolicyError(problem);
    const kdf = newKdfParams();
    const key = await this.exclusive(() => this.derive(password, kdf));
    const entry = entryOf({
      seed: first.seedHex,
      label: first.label.trim() || 'Account 1',
      created: Date.now(),
    });
    this.unlocked = { key, kdf, entries: [entry], access: [] };
    this.knownText = null;
    this.persist();
    this.touch();
    this.publish();
    // A new wallet is not done until it is stored for good: the seed was just shown once.
    await this.storage.flush?.();
    return { address: entry.address, label: entry.label, created: entry.created };
  }

  /** Decrypts the vault; a wrong password rejects with WrongPasswordError. */
  async unlock(password: string): Promise<void> {
    if (this.unlocked) return;
    const text = this.storage.read();
    if (text === null) throw new Error('There is no keystore to unlock.');
    const file = parseVaultFile(text);
    const key = await this.exclusive(() => this.derive(password, file.kdf));
    if (this.storage.read() !== text) {
      key.fill(0);
      throw new Error('The keystore was changed in another window while unlocking: try again.');
    }
    let contents: VaultContents;
    try {
      contents = openVault(key, file);
    } catch (e) {
      key.fill(0);
      throw e;
    }
    this.unlocked = {
      key,
      kdf: file.kdf,
      entries: contents.accounts.map(entryOf),
      access: (contents.accessKeys ?? []).map(accessEntryOf),
    };
    this.knownText = text;
    this.applyLabels();
    this.touch();
    this.publish();
  }

  /**
   * The labels kept outside the vault changed (another window, or an agent rolled them back): take
   * them, so that the next save writes them into the vault too.
   */
  labelsChanged(): void {
    if (this.applyLabels()) this.publish(this.snapshot.lockedBy);
  }

  /** Takes the outside labels into the unlocked entries; true when one changed. */
  private applyLabels(): boolean {
    const u = this.unlocked;
    if (!u || !this.labels) return false;
    const outside = this.labels.read();
    let changed = false;
    for (const e of u.entries) {
      const l = outside[e.address];
      if (typeof l === 'string' && l !== e.label) {
        e.label = l;
        changed = true;
      }
    }
    return changed;
  }

  /** Wipes the key and seeds from memory. */
  lock(reason: LockReason = 'user'): void {
    const u = this.unlocked;
    if (!u) return;
    this.unlocked = undefined;
    u.key.fill(0);
    for (const e of u.entries) e.seed.fill(0);
    for (const a of u.access) a.seed.fill(0);
    u.entries.length = 0;
    u.access.length = 0;
    this.publish(reason);
  }

  /** Re-encrypts the vault under a new password (new salt, new key). */
  async changePassword(current: string, next: string, confirm: string): Promise<void> {
    const u = this.requireUnlocked();
    const problem = checkNewPassword(next, confirm);
    if (problem) throw new PasswordPolicyError(problem);
    const text = this.storage.read();
    if (text === null) throw new Error('There is no keystore.');
    const file = parseVaultFile(text);
    // The current password is checked against the stored vault, not assumed.
    const oldKey = await this.exclusive(() => this.derive(current, file.kdf));
    try {
      openVault(oldKey, file);
    } finally {
      oldKey.fill(0);
    }
    const kdf = newKdfParams();
    const key = await this.exclusive(() => this.derive(next, kdf));
    u.key.fill(0);
    u.key = key;
    u.kdf = kdf;
    this.persist();
    this.touch();
  }

  /**
   * Another window of the app wrote the vault: this page's copy is stale and saving it would undo
   * that change (an account added there would be lost). When it is sealed under the same key (same
   * password and salt: an account added, a label changed), this page opens it with the key it holds
   * and carries on; otherwise (the password changed, the vault was erased or replaced) it locks and
   * asks for the password again.
   */
  externalChange(): void {
    const u = this.unlocked;
    const text = this.storage.read();
    if (!u || text === this.knownText) {
      this.publish(this.snapshot.lockedBy);
      return;
    }
    let contents: VaultContents | undefined;
    try {
      const file = text === null ? undefined : parseVaultFile(text);
      if (file !== undefined && sameKdf(file.kdf, u.kdf)) contents = openVault(u.key, file);
    } catch {
      contents = undefined;
    }
    if (contents === undefined) {
      this.lock('elsewhere');
      return;
    }
    for (const e of u.entries) e.seed.fill(0);
    for (const a of u.access) a.seed.fill(0);
    u.entries = contents.accounts.map(entryOf);
    u.access = (contents.accessKeys ?? []).map(accessEntryOf);
    this.knownText = text;
    this.applyLabels();
    this.publish();
  }

  /** Erases the vault from this browser (forgotten password); seeds are gone unless backed up. */
  erase(): void {
    this.lock();
    this.storage.remove();
    this.publish();
  }

  // ---- accounts -----------------------------------------------------------------------------------

  /** Adds an account (a new or imported seed); refuses one already present. */
  addAccount(seedHex: string, label: string): AccountInfo {
    const u = this.requireUnlocked();
    const entry = entryOf({
      seed: seedHex,
      label: label.trim() || `Account ${u.entries.length + 1}`,
      created: Date.now(),
    });
    const existing = u.entries.find((e) => e.address === entry.address);
    if (existing) {
      entry.seed.fill(0);
      throw new Error(`This seed is already in the keystore as "${existing.label}".`);
    }
    u.entries.push(entry);
    this.persist();
    this.touch();
    this.publish();
    return { address: entry.address, label: entry.label, created: entry.created };
  }

  renameAccount(address: string, label: string): void {
    const u = this.requireUnlocked();
    const a = u.entries.find((e) => e.address === address);
    if (!a) throw new Error('No such account in the keystore.');
    const t = label.trim();
    if (t === '') throw new Error('A label cannot be empty.');
    if (t.length > 40) throw new Error('A label has at most 40 characters.');
    a.label = t;
    this.persist();
    this.touch();
    this.publish();
  }

  has(address: string): boolean {
    return this.unlocked?.entries.some((e) => e.address === address) ?? false;
  }

  /** Signs a single-key block of one of the keystore's accounts. */
  signBlock(address: string, block: Block, networkId: string): SignedBlock {
    const seed = this.unlocked?.entries.find((e) => e.address === address)?.seed;
    if (!seed)
      throw this.unlocked ? new Error('That account is not in the keystore.') : new KeystoreLockedError();
    if (block.account !== address) throw new Error('The block belongs to another account.');
    this.touch();
    return signBlock(block, seed, networkId);
  }

  /** The public key (hex) of one of the accounts. */
  publicKeyOf(address: string): string {
    const seed = this.unlocked?.entries.find((e) => e.address === address)?.seed;
    if (!seed)
      throw this.unlocked ? new Error('That account is not in the keystore.') : new KeystoreLockedError();
    return bytesToHex(publicKeyFromSeed(seed));
  }

  /** Signs a chat envelope sent from one of the accounts (its key is `from`; protocol.md 8.1). */
  signChat(address: string, env: ChatEnvelope): ChatEnvelope & { signature: string } {
    const seed = this.seedOf(address);
    if (env.from !== bytesToHex(publicKeyFromSeed(seed)))
      throw new Error('The message names another sender.');
    this.touch();
    return signChatEnvelope(env, seed);
  }

  /** The ownership proof's signature over a chat read challenge (protocol.md 8.2). */
  signChatReadAuth(address: string, challenge: string): string {
    return signChatReadAuth(challenge, this.seedOf(address));
  }

  /** A directory registration of one of the accounts with the node `nodePeer`. */
  signRegistration(address: string, nodePeer: string, timestamp: bigint) {
    const seed = this.seedOf(address);
    return signDirectoryRegistration(
      { account: bytesToHex(publicKeyFromSeed(seed)), node_peer: nodePeer, timestamp },
      seed,
    );
  }

  private seedOf(address: string): Uint8Array {
    const seed = this.unlocked?.entries.find((e) => e.address === address)?.seed;
    if (!seed)
      throw this.unlocked ? new Error('That account is not in the keystore.') : new KeystoreLockedError();
    return seed;
  }

  /** Signs a marketplace lease request (reference-behavior.md 4.9) with one of the accounts. */
  signMarketplaceRequest(
    address: string,
    request: UnsignedMarketplace<'request'>,
    networkId: string,
  ): MarketplaceRequest {
    const seed = this.unlocked?.entries.find((e) => e.address === address)?.seed;
    if (!seed)
      throw this.unlocked ? new Error('That account is not in the keystore.') : new KeystoreLockedError();
    if (request.consumer !== address) throw new Error('The request names another account.');
    this.touch();
    return signMarketplaceMessage('request', request, networkId, seed);
  }

  // ---- per-lease access keys ------------------------------------------------------------------------

  /**
   * A fresh Ed25519 access key for a lease about to be signed, stored encrypted in the vault before
   * its public key is used anywhere; returns the public key (hex). The seed never leaves the keystore.
   */
  newAccessKey(): string {
    const u = this.requireUnlocked();
    const seed = randomSeed();
    const pub = bytesToHex(publicKeyFromSeed(seed));
    u.access.push({ seed, pub, created: Date.now() });
    this.persist();
    this.touch();
    return pub;
  }

  /** Records which lease an access key belongs to (once the lease block is signed). */
  bindAccessKey(pub: string, leaseHash: string): void {
    const u = this.requireUnlocked();
    const a = u.access.find((k) => k.pub === pub);
    if (!a) throw new Error('No such access key in the keystore.');
    a.lease = leaseHash;
    this.persist();
  }

  /** Drops an access key that was never used (its lease block was not submitted). */
  dropAccessKey(pub: string): void {
    const u = this.requireUnlocked();
    const i = u.access.findIndex((k) => k.pub === pub && k.lease === undefined);
    if (i < 0) return;
    u.access[i]!.seed.fill(0);
    u.access.splice(i, 1);
    this.persist();
  }

  accessKeys(): AccessKeyInfo[] {
    return (this.unlocked?.access ?? []).map((a) => ({
      pub: a.pub,
      created: a.created,
      ...(a.lease ? { lease: a.lease } : {}),
    }));
  }

  hasAccessKey(pub: string): boolean {
    return this.unlocked?.access.some((a) => a.pub === pub) ?? false;
  }

  private accessSeed(pub: string): Uint8Array {
    const a = this.unlocked?.access.find((k) => k.pub === pub);
    if (!a)
      throw this.unlocked
        ? new Error('This lease’s access key is not in this keystore.')
        : new KeystoreLockedError();
    return a.seed;
  }

  /** The replay-proof lease signature (decisions D12) that opens the lease's console, hex. */
  signLeaseAccess(pub: string, leaseHash: string, timestamp: bigint): string {
    return signLeaseAccess(leaseHash, this.accessSeed(pub), timestamp);
  }

  /** Plain Ed25519 over `data` with the access key (the console's SSH user-auth signature), hex. */
  signWithAccessKey(pub: string, data: Uint8Array): string {
    return bytesToHex(signBytes(data, this.accessSeed(pub)));
  }

  // ---- auto-lock ----------------------------------------------------------------------------------

  /** Records activity (the app calls it on input events); idle time counts from here. */
  touch(): void {
    this.lastActivity = this.now();
  }

  /** Sets the idle time before an automatic lock (0 turns it off) and starts the idle check. */
  setAutoLock(minutes: number): void {
    this.autoLockMs = Math.max(0, minutes) * 60_000;
    this.timer ??= setInterval(() => this.checkIdle(), 5_000);
  }

  /** Locks if idle for longer than the auto-lock time; returns whether it locked. */
  checkIdle(): boolean {
    if (!this.unlocked || this.autoLockMs === 0) return false;
    if (this.now() - this.lastActivity < this.autoLockMs) return false;
    this.lock('idle');
    return true;
  }

  dispose(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.lock();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private requireUnlocked(): Unlocked {
    if (!this.unlocked) throw new KeystoreLockedError();
    return this.unlocked;
  }

  private persist(): void {
    const u = this.requireUnlocked();
    if (this.knownText !== null && this.storage.read() !== this.knownText) {
      this.lock('elsewhere');
      throw new Error('The keystore was changed in another window: unlock again, then retry.');
    }
    const accounts: VaultAccount[] = u.entries.map((e) => ({
      seed: bytesToHex(e.seed),
      label: e.label,
      created: e.created,
    }));
    const accessKeys: VaultAccessKey[] = u.access.map((a) => ({
      seed: bytesToHex(a.seed),
      pub: a.pub,
      created: a.created,
      ...(a.lease ? { lease: a.lease } : {}),
    }));
    const text = JSON.stringify(
      sealVault(u.key, u.kdf, accessKeys.length > 0 ? { accounts, accessKeys } : { accounts }),
    );
    this.storage.write(text);
    this.knownText = text;
    if (this.labels) {
      const now = this.labels.read();
      const next: Record<string, string> = {};
      for (const e of u.entries) next[e.address] = e.label;
      const same =
        Object.keys(now).length === u.entries.length && u.entries.every((e) => now[e.address] === e.label);
      if (!same) this.labels.write(next);
    }
  }

  /** One derivation at a time (a double click must not run two 32 MiB derivations). */
  private async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.busy) throw new Error('The keystore is busy; try again in a moment.');
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }
}

function sameKdf(a: KdfParams, b: KdfParams): boolean {
  return a.name === b.name && a.N === b.N && a.r === b.r && a.p === b.p && a.salt === b.salt;
}

function accessEntryOf(a: VaultAccessKey): AccessEntry {
  const seed = hexToBytes(a.seed, 32, 'seed');
  if (bytesToHex(publicKeyFromSeed(seed)) !== a.pub)
    throw new Error('A stored access key does not match its public key.');
  return { seed, pub: a.pub, created: a.created, ...(a.lease ? { lease: a.lease } : {}) };
}

function entryOf(a: VaultAccount): Entry {
  const seed = hexToBytes(a.seed, 32, 'seed');
  return { address: addressFromPublicKey(publicKeyFromSeed(seed)), seed, label: a.label, created: a.created };
}
