import { isHex } from '../protocol/hex.ts';
import { toBigIntField } from '../protocol/int.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';
import { addressFromPublicKey, type Verifier } from '../protocol/keys.ts';
import { type Registration, verifyRegistration } from '../protocol/registration.ts';

/**
 * The directory (reference-behavior.md 7.2): which libp2p node serves an account, learned from
 * signed registrations gossiped on `xe/directory`. In memory only, newest timestamp wins, entries
 * expire 30 minutes after their own timestamp. Unlike the reference (9.5 H-08), a registration
 * dated more than 5 minutes ahead of this node's clock is refused: it would never expire and could
 * never be replaced.
 */
export const DIRECTORY_TTL_NS = 30n * 60n * 1_000_000_000n;
export const MAX_FUTURE_NS = 5n * 60n * 1_000_000_000n;
const MAX_REGISTRATION_BYTES = 1024;

export type RegistrationVerdict = 'accept' | 'reject' | 'ignore';

/** What became of a registration submitted over HTTP. */
export type RegistrationOutcome = 'stored' | 'stale' | 'expired' | 'future' | 'bad_signature' | 'full';

export interface DirectoryOptions {
  now: () => bigint;
  verify?: Verifier;
  /** Entries kept at most (default 100,000); the oldest timestamps go first when full. */
  maxEntries?: number;
  /** How often expired entries are pruned (default 60 s). */
  pruneMs?: number;
}

export interface DirectoryEntry extends Registration {
  /** The account's address, derived from its key. */
  address: string;
}

const KEYS = ['account', 'pub_key', 'node_peer', 'timestamp', 'signature'];

/** A libp2p peer id as text: base58btc, as long as the key types in use make it. */
export const PEER_ID_PATTERN = /^[1-9A-HJ-NP-Za-km-z]{16,128}$/;

/** The wire form (gossip and HTTP): the reference writes the key twice, as account and pub_key. */
export function registrationJson(r: Registration): Record<string, unknown> {
  return {
    account: r.account,
    pub_key: r.account,
    node_peer: r.node_peer,
    timestamp: r.timestamp,
    signature: r.signature,
  };
}

/** A registration from JSON (the raw gossip payload); undefined when malformed (strict). */
export function registrationFromJson(o: unknown): Registration | undefined {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  const r = o as Record<string, unknown>;
  if (Object.keys(r).some((k) => !KEYS.includes(k))) return undefined;
  if (!isHex(r.account, 32) || !isHex(r.signature, 64)) return undefined;
  // The reference writes the key twice; when both are present they must agree.
  if (r.pub_key !== undefined && r.pub_key !== r.account) return undefined;
  if (typeof r.node_peer !== 'string' || !PEER_ID_PATTERN.test(r.node_peer)) return undefined;
  try {
    return {
      account: r.account,
      node_peer: r.node_peer,
      timestamp: toBigIntField(r.timestamp, 'i64', 'timestamp'),
      signature: r.signature,
    };
  } catch {
    return undefined;
  }
}

export function encodeRegistration(r: Registration): Uint8Array {
  return new TextEncoder().encode(stringifyJson(registrationJson(r)));
}

export function decodeRegistration(bytes: Uint8Array): Registration | undefined {
  if (bytes.length > MAX_REGISTRATION_BYTES) return undefined;
  try {
    return registrationFromJson(parseJson(new TextDecoder('utf-8', { fatal: true }).decode(bytes)));
  } catch {
    return undefined;
  }
}

export class Directory {
  private readonly now: () => bigint;
  private readonly verify: Verifier | undefined;
  private readonly maxEntries: number;
  private readonly pruneMs: number;
  /** By address. */
  private readonly entries = new Map<string, DirectoryEntry>();
  /**
   * No entry's timestamp is older than this (a lower bound: exact after a prune). While it is within
   * the TTL nothing can have expired, so a registration offered to a directory full of live entries
   * is refused without walking all of them (100,000 entries: a few ms of the node's thread for each
   * registration of a flood, issue #18).
   */
  private oldest: bigint | undefined;
  /**
   * The entries' addresses in account order and in address order, built when first asked for. An
   * account that comes later waits in `added` and is merged in when they are next read (one walk,
   * not a sort); a prune walks them to drop what it removed; a rollback drops them. `GET /directory`
   * sorted every entry for each page (100,000 entries: 74-84 ms a page), and an attestation
   * request for a subject not known walked that sort (117-147 ms), both open to anyone (issue #18).
   * Kept sorted by insertion instead, a new account cost 275 µs at 90,000.
   */
  private sorted: { byAccount: string[]; byAddress: string[] } | undefined;
  private added: string[] = [];
  /** Full walks of the entries (tests). */
  prunes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: DirectoryOptions) {
    this.now = opts.now;
    this.verify = opts.verify;
    this.maxEntries = opts.maxEntries ?? 100_000;
    this.pruneMs = opts.pruneMs ?? 60_000;
  }

  start(): void {
    this.timer = setInterval(() => this.prune(), this.pruneMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Offers a registration from gossip: 'reject' when its signature fails (the sender is penalised),
   * 'ignore' when it is expired, too far ahead, not newer than the stored one, or finds the
   * directory full; 'accept' when stored. Cheap checks come before the signature.
   */
  offer(r: Registration): RegistrationVerdict {
    if (this.timing(r) !== undefined || this.isStale(r)) return 'ignore';
    if (!verifyRegistration(r, this.verify)) return 'reject';
    return this.store(r) === 'stored' ? 'accept' : 'ignore';
  }

  /**
   * Registers an entry submitted over HTTP (`POST /directory/register`), saying what became of it.
   * The signature is checked before the staleness, so a client learns that its signature is wrong
   * even when the directory would have ignored the registration anyway.
   */
  register(r: Registration): RegistrationOutcome {
    const timing = this.timing(r);
    if (timing !== undefined) return timing;
    if (!verifyRegistration(r, this.verify)) return 'bad_signature';
    if (this.isStale(r)) return 'stale';
    return this.store(r);
  }

  /** 'future' or 'expired' when the timestamp is outside what the directory keeps. */
  private timing(r: Registration): 'future' | 'expired' | undefined {
    const now = this.now();
    if (r.timestamp > now + MAX_FUTURE_NS) return 'future';
    if (r.timestamp <= now - DIRECTORY_TTL_NS) return 'expired';
    return undefined;
  }

  /** Not newer than the entry held for the same account. */
  private isStale(r: Registration): boolean {
    const held = this.entries.get(addressFromPublicKey(r.account));
    return held !== undefined && held.timestamp >= r.timestamp;
  }

  /** Stores a checked registration, unless the directory is full of live entries. */
  private store(r: Registration): 'stored' | 'full' {
    const address = addressFromPublicKey(r.account);
    if (!this.entries.has(address) && this.entries.size >= this.maxEntries) {
      this.prune();
      if (this.entries.size >= this.maxEntries) return 'full';
    }
    const added = !this.entries.has(address);
    this.entries.set(address, { ...r, address });
    this.noteTimestamp(r.timestamp);
    if (added && this.sorted !== undefined) this.added.push(address);
    return 'stored';
  }

  /** The live entry of an account, by address or public key. */
  lookup(accountOrKey: string): DirectoryEntry | undefined {
    const e = this.entries.get(accountOrKey) ?? this.entries.get(safeAddress(accountOrKey));
    if (!e || e.timestamp <= this.now() - DIRECTORY_TTL_NS) return undefined;
    return e;
  }

  /** Live entries, sorted by account key. */
  list(): DirectoryEntry[] {
    return this.page(0, Number.MAX_SAFE_INTEGER);
  }

  /** Live entries sorted by account key, `limit` from the `offset`th: what `GET /directory` pages. */
  page(offset: number, limit: number): DirectoryEntry[] {
    const cutoff = this.now() - DIRECTORY_TTL_NS;
    const out: DirectoryEntry[] = [];
    let live = 0;
    for (const address of this.sortedIndex().byAccount) {
      if (out.length >= limit) break;
      const e = this.entries.get(address)!;
      if (e.timestamp > cutoff && live++ >= offset) out.push(e);
    }
    return out;
  }

  /** Addresses of live entries that start with `prefix`, in order (a whole address: that one, if live). */
  *addressesFrom(prefix: string): Generator<string> {
    const { byAddress } = this.sortedIndex();
    const cutoff = this.now() - DIRECTORY_TTL_NS;
    for (let i = lowerBound(byAddress, prefix, compare); i < byAddress.length; i++) {
      const address = byAddress[i]!;
      if (!address.startsWith(prefix)) return;
      if (this.entries.get(address)!.timestamp > cutoff) yield address;
    }
  }

  private sortedIndex(): { byAccount: string[]; byAddress: string[] } {
    if (this.sorted === undefined) {
      // The default sort (UTF-16 code units: the order of `<` on these hex strings) is the fastest.
      const addressOf = new Map<string, string>();
      for (const e of this.entries.values()) addressOf.set(e.account, e.address);
      this.sorted = {
        byAccount: [...addressOf.keys()].sort().map((account) => addressOf.get(account)!),
        byAddress: [...this.entries.keys()].sort(),
      };
      this.added = [];
    } else if (this.added.length > 0) {
      const added = this.added.filter((a) => this.entries.has(a));
      this.added = [];
      const accountOf = (address: string) => this.entries.get(address)!.account;
      const byAccount = (a: string, b: string) => compare(accountOf(a), accountOf(b));
      this.sorted = {
        byAccount: mergeSorted(this.sorted.byAccount, added.sort(byAccount), byAccount),
        byAddress: mergeSorted(this.sorted.byAddress, added.slice().sort(), compare),
      };
    }
    return this.sorted;
  }

  /** Live registrations naming `peer` as the accounts' node (the accounts a node serves). */
  servedBy(peer: string): Registration[] {
    const cutoff = this.now() - DIRECTORY_TTL_NS;
    const out: Registration[] = [];
    for (const e of this.entries.values()) {
      if (e.node_peer === peer && e.timestamp > cutoff)
        out.push({
          account: e.account,
          node_peer: e.node_peer,
          timestamp: e.timestamp,
          signature: e.signature,
        });
    }
    return out;
  }

  /**
   * Replaces every entry with `registrations` at once (an agent rollback, agent/checkpoints.ts): they
   * were checked when first stored, so they are not verified again; expired ones are left out, and
   * when there are more than the directory keeps, the newest are kept.
   */
  replaceAll(registrations: readonly Registration[]): void {
    const cutoff = this.now() - DIRECTORY_TTL_NS;
    const live = registrations
      .filter((r) => r.timestamp > cutoff)
      .sort((a, b) => (a.timestamp > b.timestamp ? -1 : a.timestamp < b.timestamp ? 1 : 0))
      .slice(0, this.maxEntries);
    this.entries.clear();
    this.sorted = undefined;
    this.added = [];
    this.oldest = undefined;
    for (const r of live) {
      const address = addressFromPublicKey(r.account);
      const held = this.entries.get(address);
      if (!held || held.timestamp < r.timestamp)
        this.entries.set(address, {
          account: r.account,
          node_peer: r.node_peer,
          timestamp: r.timestamp,
          signature: r.signature,
          address,
        });
      this.noteTimestamp(r.timestamp);
    }
  }

  /** Keeps `oldest` a lower bound of the entries' timestamps. */
  private noteTimestamp(timestamp: bigint): void {
    if (this.oldest === undefined || timestamp < this.oldest) this.oldest = timestamp;
  }

  /** Drops expired entries (none can be while the oldest timestamp is within the TTL). */
  prune(): void {
    const cutoff = this.now() - DIRECTORY_TTL_NS;
    if (this.oldest === undefined || this.oldest > cutoff) return;
    this.prunes += 1;
    let oldest: bigint | undefined;
    let removed = false;
    for (const [k, e] of this.entries) {
      if (e.timestamp <= cutoff) {
        this.entries.delete(k);
        removed = true;
      } else if (oldest === undefined || e.timestamp < oldest) oldest = e.timestamp;
    }
    this.oldest = oldest;
    // In step without sorting again (a walk, not a sort of 100,000).
    if (removed && this.sorted !== undefined) {
      const held = (a: string) => this.entries.has(a);
      this.added = this.added.filter(held);
      this.sorted = {
        byAccount: this.sorted.byAccount.filter(held),
        byAddress: this.sorted.byAddress.filter(held),
      };
    }
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The first index of sorted `list`, at or after `from`, whose item is not below `item`. */
function lowerBound(
  list: readonly string[],
  item: string,
  cmp: (a: string, b: string) => number,
  from = 0,
): number {
  let lo = from;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(list[mid]!, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Two sorted lists as one, in order, `b` the short one: each of its items is placed by a binary
 * search of `a` and the runs of `a` between are copied (comparing along all of `a` cost 40 ms at
 * 100,000 for 10 new items: the comparison reads each item's account).
 */
function mergeSorted(
  a: readonly string[],
  b: readonly string[],
  cmp: (x: string, y: string) => number,
): string[] {
  const out: string[] = [];
  let from = 0;
  for (const item of b) {
    const at = lowerBound(a, item, cmp, from);
    for (let i = from; i < at; i++) out.push(a[i]!);
    out.push(item);
    from = at;
  }
  for (let i = from; i < a.length; i++) out.push(a[i]!);
  return out;
}

function safeAddress(key: string): string {
  return isHex(key, 32) ? addressFromPublicKey(key) : '';
}
