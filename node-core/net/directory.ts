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

/** A registration from JSON (the raw gossip payload); undefined when malformed (strict). */
export function registrationFromJson(o: unknown): Registration | undefined {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  const r = o as Record<string, unknown>;
  if (Object.keys(r).some((k) => !KEYS.includes(k))) return undefined;
  if (!isHex(r.account, 32) || !isHex(r.signature, 64)) return undefined;
  // The reference writes the key twice; when both are present they must agree.
  if (r.pub_key !== undefined && r.pub_key !== r.account) return undefined;
  if (typeof r.node_peer !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{16,128}$/.test(r.node_peer))
    return undefined;
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
  return new TextEncoder().encode(stringifyJson({ ...r, pub_key: r.account }));
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
   * Offers a registration: 'reject' when its signature fails (the sender is penalised), 'ignore'
   * when it is expired, too far ahead, or not newer than the stored one, 'accept' when stored.
   * Cheap checks come before the signature.
   */
  offer(r: Registration): RegistrationVerdict {
    const now = this.now();
    if (r.timestamp > now + MAX_FUTURE_NS || r.timestamp <= now - DIRECTORY_TTL_NS) return 'ignore';
    const address = addressFromPublicKey(r.account);
    const held = this.entries.get(address);
    if (held && held.timestamp >= r.timestamp) return 'ignore';
    if (!verifyRegistration(r, this.verify)) return 'reject';
    if (!held && this.entries.size >= this.maxEntries) {
      this.prune();
      if (this.entries.size >= this.maxEntries) return 'ignore';
    }
    this.entries.set(address, { ...r, address });
    return 'accept';
  }

  /** The live entry of an account, by address or public key. */
  lookup(accountOrKey: string): DirectoryEntry | undefined {
    const e = this.entries.get(accountOrKey) ?? this.entries.get(safeAddress(accountOrKey));
    if (!e || e.timestamp <= this.now() - DIRECTORY_TTL_NS) return undefined;
    return e;
  }

  /** Live entries, sorted by account key. */
  list(): DirectoryEntry[] {
    const cutoff = this.now() - DIRECTORY_TTL_NS;
    return [...this.entries.values()]
      .filter((e) => e.timestamp > cutoff)
      .sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
  }

  /** Drops expired entries. */
  prune(): void {
    const cutoff = this.now() - DIRECTORY_TTL_NS;
    for (const [k, e] of this.entries) if (e.timestamp <= cutoff) this.entries.delete(k);
  }
}

function safeAddress(key: string): string {
  return isHex(key, 32) ? addressFromPublicKey(key) : '';
}
