import type { Block } from '../../../node-core/protocol/block.ts';
import { signBlock, type SignedBlock } from '../../../node-core/protocol/block-sign.ts';
import { accountSeedFromWalletNode, type Slip10Node } from '../../../node-core/protocol/hd-derivation.ts';
import { bytesToHex, equalBytes, hexToBytes } from '../../../node-core/protocol/hex.ts';
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
import type * as Mnemonic from '../../../node-core/protocol/mnemonic.ts';
import { type DeriveKey, deriveKey } from './kdf.ts';
import { mergeVaultContents } from './vault-merge.ts';
import {
  type KdfParams,
  newKdfParams,
  openVault,
  parseVaultFile,
  sealVault,
  stringifyVault,
  type VaultAccessKey,
  type VaultAccount,
  type VaultContents,
} from './vault.ts';

/** The phrase code and its word list load on demand (unlock starts it beside scrypt): not on the first screen. */
type MnemonicModule = typeof Mnemonic;
const loadMnemonic = (): Promise<MnemonicModule> => import('../../../node-core/protocol/mnemonic.ts');

/**
 * The keystore: the only place seeds exist in the renderer. At rest they are encrypted (vault.ts);
 * unlocked, they sit in this module's memory, are used here to sign blocks, and are wiped on lock.
 * Nothing outside gets a seed back: the rest of the app sees addresses and labels, and asks for
 * signatures (the recovery phrase is shown only through phraseEntropyHex, behind the password in
 * Settings). The node never signs.
 *
 * One wallet, one recovery phrase: its accounts are derived by index (README, "One seed, many
 * accounts"); accounts with their own seed (imported, or made before phrases) sit beside them.
 */
export const MIN_PASSWORD_LENGTH = 8;
export const VAULT_STORAGE_KEY = 'ledger-desktop.vault.v1';

export interface AccountInfo {
  address: string;
  label: string;
  created: number;
  /** Derived from the wallet's phrase (at `index`), or imported with its own seed. */
  kind: 'derived' | 'imported';
  index?: number;
  /** Hidden accounts are out of `accounts` (the app's lists) until shown again. */
  hidden: boolean;
}

/** What a new wallet starts with: a phrase and the indexes to open, or one hex seed (an imported account). */
export type NewWallet =
  | { seedHex: string; label: string }
  | { phraseEntropyHex: string; indexes: readonly number[]; label: string };

/** What importing a backup file into an open wallet did. */
export interface BackupImportReport {
  /** Accounts added. */
  added: number;
  /** Accounts of the backup already in the wallet. */
  present: number;
  /** The wallet had no phrase and took the backup's. */
  adoptedPhrase: boolean;
  /** Accounts of another phrase, added as imported accounts (among `added`). */
  otherPhrase: number;
}

export type KeystoreStatus = 'empty' | 'locked' | 'unlocked';
export type LockReason = 'user' | 'idle' | 'elsewhere';

export interface KeystoreSnapshot {
  status: KeystoreStatus;
  /** Accounts shown in the app, in creation order (empty unless unlocked): hidden ones left out. */
  accounts: readonly AccountInfo[];
  /** Every account, hidden ones too (Settings). */
  allAccounts: readonly AccountInfo[];
  /** The wallet has a recovery phrase (false for a wallet made before phrases, and while locked). */
  hasPhrase: boolean;
  /** The index "New account" takes. */
  nextIndex: number;
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
  kind: 'derived' | 'imported';
  index?: number;
  hidden: boolean;
}

interface PhraseState {
  entropy: Uint8Array;
  nextIndex: number;
  /** m/44'/22597': each account is one HMAC below it. */
  wallet: Slip10Node;
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
  /** The wallet's phrase, when it has one. */
  phrase?: PhraseState;
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
    this.snapshot = {
      status: this.storage.read() === null ? 'empty' : 'locked',
      accounts: [],
      allAccounts: [],
      hasPhrase: false,
      nextIndex: 0,
    };
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
    const all = u ? u.entries.map(infoOf) : [];
    this.snapshot = {
      status,
      accounts: all.filter((a) => !a.hidden),
      allAccounts: all,
      hasPhrase: u?.phrase !== undefined,
      nextIndex: u?.phrase?.nextIndex ?? 0,
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

  /**
   * Creates the vault (refused if one exists: unlock it instead): with a phrase, its accounts at the
   * given indexes (the first takes the label); with a hex seed, that one imported account.
   */
  async create(password: string, confirm: string, first: NewWallet): Promise<AccountInfo> {
    if (this.storage.read() !== null)
      throw new Error('A keystore already exists in this browser: unlock it.');
    const problem = checkNewPassword(password, confirm);
    if (problem) throw new PasswordPolicyError(problem);
    const label = first.label.trim();
    let contents: VaultContents;
    const created = Date.now();
    if ('phraseEntropyHex' in first) {
      const indexes = [...new Set(first.indexes)].sort((a, b) => a - b);
      if (indexes.length === 0) throw new Error('A new wallet needs at least one account.');
      contents = {
        phrase: {
          entropy: first.phraseEntropyHex,
          nextIndex: indexes.at(-1)! + 1,
        },
        accounts: indexes.map((index, k) => ({
          kind: 'derived',
          index,
          label: k === 0 && label !== '' ? label : `Account ${index + 1}`,
          created: created + k,
        })),
      };
    } else {
      contents = {
        accounts: [
          {
            kind: 'imported',
            seed: first.seedHex,
            label: label || 'Account 1',
            created,
          },
        ],
      };
    }
    // Checked (and the phrase's word list loaded) before the slow key derivation.
    const mnemonic = contents.phrase ? await loadMnemonic() : undefined;
    const probe = await this.fromContents(contents, mnemonic);
    const kdf = newKdfParams();
    let key: Uint8Array;
    try {
      key = await this.exclusive(() => this.derive(password, kdf));
    } catch (e) {
      wipe(probe);
      throw e;
    }
    const entry = probe.entries[0]!;
    this.unlocked = { key, kdf, ...probe };
    this.knownText = null;
    this.persist();
    this.touch();
    this.publish();
    // A new wallet is not done until it is stored for good: the seed was just shown once.
    await this.storage.flush?.();
    return infoOf(entry);
  }

  /** Decrypts the vault; a wrong password rejects with WrongPasswordError. */
  async unlock(password: string): Promise<void> {
    if (this.unlocked) return;
    const text = this.storage.read();
    if (text === null) throw new Error('There is no keystore to unlock.');
    const file = parseVaultFile(text);
    // The phrase code loads while scrypt runs; a wallet without a phrase never waits for it.
    const mnemonic = loadMnemonic();
    mnemonic.catch(() => {});
    const key = await this.exclusive(() => this.derive(password, file.kdf));
    if (this.storage.read() !== text) {
      key.fill(0);
      throw new Error('The keystore was changed in another window while unlocking: try again.');
    }
    let opened: Omit<Unlocked, 'key' | 'kdf'>;
    try {
      const contents = openVault(key, file);
      opened = await this.fromContents(contents, contents.phrase ? await mnemonic : undefined);
    } catch (e) {
      key.fill(0);
      throw e;
    }
    if (this.unlocked) {
      // Unlocked meanwhile (a second click): keep that one.
      key.fill(0);
      wipe(opened);
      return;
    }
    this.unlocked = { key, kdf: file.kdf, ...opened };
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
    wipe(u);
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
    // A phrase taken away means another wallet: ask for the password again.
    if (contents === undefined || (u.phrase && !contents.phrase)) {
      this.lock('elsewhere');
      return;
    }
    const theirs = contents;
    if (!theirs.phrase) {
      this.takeContents(u, theirs, text, undefined);
      return;
    }
    if (u.phrase && bytesToHex(u.phrase.entropy) === theirs.phrase.entropy) {
      this.takeContents(u, theirs, text, { ...u.phrase, nextIndex: theirs.phrase.nextIndex });
      return;
    }
    // The other window gave the wallet its phrase: derive it once the phrase code is here.
    const entropyHex = theirs.phrase.entropy;
    const nextIndex = theirs.phrase.nextIndex;
    const entropy = hexToBytes(entropyHex);
    loadMnemonic()
      .then((m) => m.walletNodeOfEntropyAsync(entropy))
      .then(
        (wallet) => {
          const phrase = { entropy, nextIndex, wallet };
          if (this.unlocked !== u || this.storage.read() !== text) wipe({ phrase });
          else this.takeContents(u, theirs, text, phrase);
        },
        () => this.lock('elsewhere'),
      );
  }

  /**
   * The window store's merger for the vault (window-store/merge.ts): this window's unsaved vault and
   * a newer one from the node, both sealed under this page's key, merged over the copy this window's
   * change was built on (vault-merge.ts) and sealed again. Undefined (this window's change gives way,
   * and externalChange decides) while locked, for another key, or for another wallet.
   */
  mergeStored(
    base: string | undefined,
    ours: string | null,
    theirs: string | undefined,
  ): string | null | undefined {
    if (ours === null) return null;
    const u = this.unlocked;
    if (!u || theirs === undefined) return undefined;
    const openUnderOurKey = (text: string): VaultContents | undefined => {
      try {
        const file = parseVaultFile(text);
        return sameKdf(file.kdf, u.kdf) ? openVault(u.key, file) : undefined;
      } catch {
        return undefined;
      }
    };
    const o = openUnderOurKey(ours);
    const t = openUnderOurKey(theirs);
    if (!o || !t) return undefined;
    const merged = mergeVaultContents(base === undefined ? undefined : openUnderOurKey(base), o, t);
    return merged && JSON.stringify(sealVault(u.key, u.kdf, merged));
  }

  /** Takes another window's accounts (sealed under this page's key) and stays unlocked. */
  private takeContents(
    u: Unlocked,
    contents: VaultContents,
    text: string | null,
    phrase: PhraseState | undefined,
  ): void {
    let opened: Omit<Unlocked, 'key' | 'kdf'>;
    try {
      opened = openedOf(contents, phrase);
    } catch {
      this.lock('elsewhere');
      return;
    }
    // The old secrets go, but not a wallet node the new state still uses.
    wipe({
      entries: u.entries,
      access: u.access,
      ...(u.phrase && u.phrase.wallet !== phrase?.wallet ? { phrase: u.phrase } : {}),
    });
    u.phrase = opened.phrase;
    u.entries = opened.entries;
    u.access = opened.access;
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

  /** Adds an account with its own seed (an imported account); refuses one already present. */
  addAccount(seedHex: string, label: string): AccountInfo {
    const u = this.requireUnlocked();
    const entry = importedEntryOf({
      kind: 'imported',
      seed: seedHex,
      label: label.trim() || `Account ${u.entries.length + 1}`,
      created: Date.now(),
    });
    this.refuseDuplicate(u, entry);
    u.entries.push(entry);
    this.saved();
    return infoOf(entry);
  }

  /** "New account": the phrase's next index. */
  newAccount(label: string): AccountInfo {
    const u = this.requireUnlocked();
    const p = u.phrase;
    if (!p) throw new Error('This wallet has no recovery phrase yet: make one first.');
    const entry = derivedEntryOf(p.wallet, {
      kind: 'derived',
      index: p.nextIndex,
      label: label.trim() || `Account ${p.nextIndex + 1}`,
      created: Date.now(),
    });
    this.refuseDuplicate(u, entry);
    p.nextIndex++;
    u.entries.push(entry);
    this.saved();
    return infoOf(entry);
  }

  /**
   * Gives a wallet made before phrases its phrase (shown and checked by the caller); its accounts
   * stay imported accounts. Refused when the wallet has one.
   */
  async adoptPhrase(entropyHex: string): Promise<void> {
    const m = await loadMnemonic();
    if (this.requireUnlocked().phrase) throw new Error('This wallet already has a recovery phrase.');
    const entropy = hexToBytes(entropyHex);
    const phrase: PhraseState = { entropy, nextIndex: 0, wallet: await m.walletNodeOfEntropyAsync(entropy) };
    // Checked again: the wallet may have locked, or got a phrase, while PBKDF2 ran.
    const u = this.unlocked;
    if (!u || u.phrase) {
      wipe({ phrase });
      throw u ? new Error('This wallet already has a recovery phrase.') : new KeystoreLockedError();
    }
    u.phrase = phrase;
    this.saved();
  }

  /** Brings back a removed phrase account by its index (0-based). */
  restoreAccount(index: number, label?: string): AccountInfo {
    const u = this.requireUnlocked();
    const p = u.phrase;
    if (!p)
      throw new Error('This wallet has no recovery phrase: only a backup file can bring accounts back.');
    if (!Number.isInteger(index) || index < 0 || index >= 2 ** 31 - 1)
      throw new Error('An account number is a whole number from 1.');
    const existing = u.entries.find((e) => e.kind === 'derived' && e.index === index);
    if (existing) throw new Error(`Account ${index + 1} is in the wallet already, as “${existing.label}”.`);
    const entry = derivedEntryOf(p.wallet, {
      kind: 'derived',
      index,
      label: label?.trim() || `Account ${index + 1}`,
      created: Date.now(),
    });
    this.refuseDuplicate(u, entry);
    p.nextIndex = Math.max(p.nextIndex, index + 1);
    u.entries.push(entry);
    this.saved();
    return infoOf(entry);
  }

  /** Hides an account from the app's lists, or shows it again; one account always stays shown. */
  setHidden(address: string, hidden: boolean): void {
    const u = this.requireUnlocked();
    const e = this.entry(u, address);
    if (hidden && !e.hidden && u.entries.filter((x) => !x.hidden).length === 1)
      throw new Error('The last shown account cannot be hidden.');
    e.hidden = hidden;
    this.saved();
  }

  /**
   * Removes an account from the wallet: a phrase account can come back by its index (restoreAccount),
   * an imported one only from its seed or a backup. The last account stays.
   */
  removeAccount(address: string): void {
    const u = this.requireUnlocked();
    const e = this.entry(u, address);
    if (u.entries.length === 1) throw new Error('A wallet keeps at least one account.');
    if (!e.hidden && u.entries.filter((x) => !x.hidden).length === 1)
      throw new Error('The last shown account cannot be removed: show another one first.');
    u.entries.splice(u.entries.indexOf(e), 1);
    e.seed.fill(0);
    this.saved();
  }

  // ---- the phrase and backups (Settings, behind the password) ---------------------------------------

  /** Checks a password against the stored vault (Settings asks for it again before showing secrets). */
  async verifyPassword(password: string): Promise<void> {
    this.requireUnlocked();
    const text = this.storage.read();
    if (text === null) throw new Error('There is no keystore.');
    const file = parseVaultFile(text);
    const key = await this.exclusive(() => this.derive(password, file.kdf));
    try {
      openVault(key, file);
    } finally {
      key.fill(0);
    }
    this.touch();
  }

  /** The phrase's entropy, hex (shown as words by the phrase screens). */
  phraseEntropyHex(): string {
    const p = this.requireUnlocked().phrase;
    if (!p) throw new Error('This wallet has no recovery phrase.');
    this.touch();
    return bytesToHex(p.entropy);
  }

  /** The backup file: the keystore file of what is unlocked now, under the current password. */
  exportBackup(): string {
    const u = this.requireUnlocked();
    this.touch();
    return stringifyVault(sealVault(u.key, u.kdf, contentsOf(u)));
  }

  /**
   * Merges a backup file (with the password it was made with) into the open wallet: accounts and access
   * keys not here are added; the backup's phrase is taken if this wallet has none, and the accounts of
   * another phrase come in as imported accounts.
   */
  async importBackup(text: string, password: string): Promise<BackupImportReport> {
    this.requireUnlocked();
    const file = parseVaultFile(text);
    const key = await this.exclusive(() => this.derive(password, file.kdf));
    let theirs: VaultContents;
    try {
      theirs = openVault(key, file);
    } finally {
      key.fill(0);
    }
    const m = theirs.phrase ? await loadMnemonic() : undefined;
    const incoming = await this.fromContents(theirs, m);
    const u = this.requireUnlocked();
    const report: BackupImportReport = {
      added: 0,
      present: 0,
      adoptedPhrase: false,
      otherPhrase: 0,
    };
    const samePhrase = u.phrase && incoming.phrase && equalBytes(u.phrase.entropy, incoming.phrase.entropy);
    if (!u.phrase && incoming.phrase) {
      u.phrase = incoming.phrase;
      incoming.phrase = undefined;
      report.adoptedPhrase = true;
    }
    for (const e of incoming.entries) {
      if (u.entries.some((x) => x.address === e.address)) {
        report.present++;
        e.seed.fill(0);
        continue;
      }
      if (e.kind === 'derived' && !samePhrase && !report.adoptedPhrase) {
        // Another phrase's account: kept by its own seed.
        e.kind = 'imported';
        delete e.index;
        report.otherPhrase++;
      }
      u.entries.push(e);
      report.added++;
    }
    if (u.phrase && incoming.phrase && samePhrase)
      u.phrase.nextIndex = Math.max(u.phrase.nextIndex, incoming.phrase.nextIndex);
    for (const a of incoming.access) {
      if (u.access.some((x) => x.pub === a.pub)) a.seed.fill(0);
      else u.access.push(a);
    }
    wipe({ ...incoming, entries: [], access: [] });
    if (report.added > 0 || report.adoptedPhrase) this.saved();
    return report;
  }

  /** First run from a backup file: it becomes the vault, under the password it was made with. */
  async restoreBackup(text: string, password: string): Promise<void> {
    if (this.storage.read() !== null)
      throw new Error('A keystore already exists in this browser: unlock it.');
    const file = parseVaultFile(text);
    const mnemonic = loadMnemonic();
    mnemonic.catch(() => {});
    const key = await this.exclusive(() => this.derive(password, file.kdf));
    let opened: Omit<Unlocked, 'key' | 'kdf'>;
    try {
      const contents = openVault(key, file);
      opened = await this.fromContents(contents, contents.phrase ? await mnemonic : undefined);
    } catch (e) {
      key.fill(0);
      throw e;
    }
    this.unlocked = { key, kdf: file.kdf, ...opened };
    this.knownText = null;
    this.persist();
    this.applyLabels();
    this.touch();
    this.publish();
    await this.storage.flush?.();
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

  /** True for every account of the keystore, hidden ones too. */
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
      {
        account: bytesToHex(publicKeyFromSeed(seed)),
        node_peer: nodePeer,
        timestamp,
      },
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

  /** Saves, counts as activity and tells the app: after every change to the accounts. */
  private saved(): void {
    this.persist();
    this.touch();
    this.publish();
  }

  private entry(u: Unlocked, address: string): Entry {
    const e = u.entries.find((x) => x.address === address);
    if (!e) throw new Error('No such account in the keystore.');
    return e;
  }

  private refuseDuplicate(u: Unlocked, entry: Entry): void {
    const existing = u.entries.find((e) => e.address === entry.address);
    if (!existing) return;
    entry.seed.fill(0);
    throw new Error(
      `This account is already in the keystore as "${existing.label}"${existing.hidden ? ' (hidden: Settings shows it again)' : ''}.`,
    );
  }

  /** The unlocked form of stored contents; the phrase's accounts are derived here. */
  private async fromContents(
    contents: VaultContents,
    mnemonic: MnemonicModule | undefined,
  ): Promise<Omit<Unlocked, 'key' | 'kdf'>> {
    let phrase: PhraseState | undefined;
    if (contents.phrase) {
      const m = mnemonic ?? (await loadMnemonic());
      const entropy = hexToBytes(contents.phrase.entropy);
      phrase = {
        entropy,
        nextIndex: contents.phrase.nextIndex,
        wallet: await m.walletNodeOfEntropyAsync(entropy),
      };
    }
    try {
      return openedOf(contents, phrase);
    } catch (e) {
      if (phrase) wipe({ phrase });
      throw e;
    }
  }

  private persist(): void {
    const u = this.requireUnlocked();
    if (this.knownText !== null && this.storage.read() !== this.knownText) {
      this.lock('elsewhere');
      throw new Error('The keystore was changed in another window: unlock again, then retry.');
    }
    const text = JSON.stringify(sealVault(u.key, u.kdf, contentsOf(u)));
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

function accessEntryOf(a: VaultAccessKey): AccessEntry {
  const seed = hexToBytes(a.seed, 32, 'seed');
  if (bytesToHex(publicKeyFromSeed(seed)) !== a.pub)
    throw new Error('A stored access key does not match its public key.');
  return {
    seed,
    pub: a.pub,
    created: a.created,
    ...(a.lease ? { lease: a.lease } : {}),
  };
}

function importedEntryOf(a: Extract<VaultAccount, { kind: 'imported' }>): Entry {
  const seed = hexToBytes(a.seed, 32, 'seed');
  return {
    address: addressFromPublicKey(publicKeyFromSeed(seed)),
    seed,
    label: a.label,
    created: a.created,
    kind: 'imported',
    hidden: a.hidden === true,
  };
}

function derivedEntryOf(wallet: Slip10Node, a: Extract<VaultAccount, { kind: 'derived' }>): Entry {
  const seed = accountSeedFromWalletNode(wallet, a.index);
  return {
    address: addressFromPublicKey(publicKeyFromSeed(seed)),
    seed,
    label: a.label,
    created: a.created,
    kind: 'derived',
    index: a.index,
    hidden: a.hidden === true,
  };
}

/** The unlocked accounts of stored contents, the phrase's derived below its wallet node. */
function openedOf(contents: VaultContents, phrase: PhraseState | undefined): Omit<Unlocked, 'key' | 'kdf'> {
  const entries = contents.accounts.map((a) => {
    if (a.kind === 'imported') return importedEntryOf(a);
    if (!phrase) throw new Error('A phrase account without a phrase.');
    return derivedEntryOf(phrase.wallet, a);
  });
  return {
    ...(phrase ? { phrase } : {}),
    entries,
    access: (contents.accessKeys ?? []).map(accessEntryOf),
  };
}

function sameKdf(a: KdfParams, b: KdfParams): boolean {
  return a.name === b.name && a.N === b.N && a.r === b.r && a.p === b.p && a.salt === b.salt;
}

function infoOf(e: Entry): AccountInfo {
  return {
    address: e.address,
    label: e.label,
    created: e.created,
    kind: e.kind,
    ...(e.index !== undefined ? { index: e.index } : {}),
    hidden: e.hidden,
  };
}

/** What the vault stores of the unlocked state. */
function contentsOf(u: Omit<Unlocked, 'key' | 'kdf'>): VaultContents {
  const accounts: VaultAccount[] = u.entries.map((e) => {
    const common = {
      label: e.label,
      created: e.created,
      ...(e.hidden ? { hidden: true } : {}),
    };
    return e.kind === 'derived'
      ? { kind: 'derived', index: e.index!, ...common }
      : { kind: 'imported', seed: bytesToHex(e.seed), ...common };
  });
  const accessKeys: VaultAccessKey[] = u.access.map((a) => ({
    seed: bytesToHex(a.seed),
    pub: a.pub,
    created: a.created,
    ...(a.lease ? { lease: a.lease } : {}),
  }));
  return {
    ...(u.phrase
      ? {
          phrase: {
            entropy: bytesToHex(u.phrase.entropy),
            nextIndex: u.phrase.nextIndex,
          },
        }
      : {}),
    accounts,
    ...(accessKeys.length > 0 ? { accessKeys } : {}),
  };
}

/** Zeroes every secret of an unlocked state (seeds, phrase, wallet node) and empties it. */
function wipe(u: Partial<Omit<Unlocked, 'key' | 'kdf'>>): void {
  for (const e of u.entries ?? []) e.seed.fill(0);
  for (const a of u.access ?? []) a.seed.fill(0);
  if (u.phrase) {
    u.phrase.entropy.fill(0);
    u.phrase.wallet.key.fill(0);
    u.phrase.wallet.chainCode.fill(0);
  }
  if (u.entries) u.entries.length = 0;
  if (u.access) u.access.length = 0;
}
