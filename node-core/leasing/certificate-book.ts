import { prefixRange } from '../store/key-range.ts';
import type { Store } from '../store/store.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';
import {
  certificateToJson,
  decodeCertificate,
  type PerformanceCertificate,
} from '../protocol/certificate.ts';

/** How many certificates a node keeps per provider, expired ones included (LS-15). */
export const CERTIFICATES_PER_PROVIDER = 256;

/** Marks a store whose certificate index was built, and in which version (older ones are rebuilt). */
const INDEX_META = 'certificate_index';
const INDEX_VERSION = '2';

const issued = (c: PerformanceCertificate) => c.issued_at.toString().padStart(20, '0');
/** A provider's certificates in issue order (addresses are hex: no provider key starts with `t`). */
const indexKey = (c: PerformanceCertificate) => `${c.provider}:${issued(c)}:${c.hash}`;
/** Every certificate in issue order, its expiry as the value: the newest live ones without decoding. */
const timeKey = (c: PerformanceCertificate) => `t:${issued(c)}:${c.hash}`;

/**
 * Performance certificates this node knows, by hash, persisted. Only certificates whose content was
 * verified are put here (the caller's job). Up to 256 per provider are kept, newest issued first, so
 * a lease naming an older certificate still validates after the provider renewed it.
 *
 * A provider's certificates are found through an index by provider (the marketplace asks for its
 * own newest one with every request it sees and every 10 s, and every new certificate trims its
 * provider's): without it each of those decoded every certificate of every provider (issue #18).
 */
export class CertificateBook {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
    if (store.meta.get(INDEX_META) !== INDEX_VERSION) {
      // A store from before the index (or its first version): indexed once, in one transaction.
      store.root.transactionSync(() => {
        store.certificateIndex.clearSync();
        for (const c of this.all()) this.index(c);
        store.meta.putSync(INDEX_META, INDEX_VERSION);
      });
    }
  }

  private index(c: PerformanceCertificate): void {
    this.store.certificateIndex.putSync(indexKey(c), '');
    this.store.certificateIndex.putSync(timeKey(c), c.expires_at.toString());
  }

  private unindex(c: PerformanceCertificate): void {
    this.store.certificateIndex.removeSync(indexKey(c));
    this.store.certificateIndex.removeSync(timeKey(c));
  }

  /**
   * Up to `limit` certificates of every provider, those unexpired at `now` first, each part newest
   * issued first (those issued together in hash order): what a `cert_request` answers. Read from the
   * index by issue time, newest first, stopping once `limit` unexpired ones are found; only those
   * returned are decoded. Every peer asks every 2 minutes, and decoding and sorting every
   * certificate for it took about 15 ms a thousand certificates.
   */
  newest(now: bigint, limit: number): PerformanceCertificate[] {
    const live: string[] = [];
    const expired: string[] = [];
    for (const group of this.newestFirst('t:')) {
      if (live.length >= limit) break;
      for (const { hash, value } of group) {
        if (BigInt(value) >= now) live.push(hash);
        else if (expired.length < limit) expired.push(hash);
      }
    }
    return [...live, ...expired]
      .slice(0, limit)
      .map((h) => this.get(h))
      .filter((c): c is PerformanceCertificate => c !== undefined);
  }

  /**
   * Index entries under `prefix` (`<issue time>:<hash>` after it), newest issue time first, in
   * groups of one issue time, each in hash order (read backwards, so each group is turned round).
   */
  private *newestFirst(prefix: string): Generator<{ hash: string; value: string }[]> {
    let at: string | undefined;
    let group: { hash: string; value: string }[] = [];
    for (const { key, value } of this.store.certificateIndex.getRange(prefixRange(prefix, true))) {
      const [time, hash] = key.slice(prefix.length).split(':') as [string, string];
      if (time !== at) {
        if (group.length > 0) yield group;
        at = time;
        group = [];
      }
      group.unshift({ hash, value });
    }
    if (group.length > 0) yield group;
  }

  get(hash: string): PerformanceCertificate | undefined {
    const text = this.store.certificates.get(hash);
    return text === undefined ? undefined : decodeCertificate(parseJson(text));
  }

  /** Stores a verified certificate; returns false when it was known already. */
  async add(cert: PerformanceCertificate): Promise<boolean> {
    if (this.store.certificates.get(cert.hash) !== undefined) return false;
    await this.store.transaction(() => {
      this.store.certificates.putSync(cert.hash, stringifyJson(certificateToJson(cert)));
      this.index(cert);
      const mine = this.ofProvider(cert.provider);
      for (const old of mine.slice(CERTIFICATES_PER_PROVIDER)) {
        this.store.certificates.removeSync(old.hash);
        this.unindex(old);
      }
    });
    return true;
  }

  /** A provider's certificates, newest issued first (those issued together in hash order). */
  ofProvider(provider: string): PerformanceCertificate[] {
    const out: PerformanceCertificate[] = [];
    for (const key of this.store.certificateIndex.getKeys(prefixRange(`${provider}:`))) {
      const c = this.get(key.slice(key.lastIndexOf(':') + 1));
      if (c) out.push(c);
    }
    // Ascending by issue time, then hash; a stable sort turns it newest first, ties kept in hash order.
    return out.sort((a, b) => (a.issued_at > b.issued_at ? -1 : a.issued_at < b.issued_at ? 1 : 0));
  }

  /**
   * The provider's newest certificate that has not expired at `now`: read newest first from the
   * index, decoding only until one is valid (usually the first), those issued together in hash order.
   */
  newestValid(provider: string, now: bigint): PerformanceCertificate | undefined {
    for (const group of this.newestFirst(`${provider}:`))
      for (const { hash } of group) {
        const c = this.get(hash);
        if (c && c.expires_at >= now) return c;
      }
    return undefined;
  }

  all(): PerformanceCertificate[] {
    const out: PerformanceCertificate[] = [];
    for (const { value } of this.store.certificates.getRange({}))
      out.push(decodeCertificate(parseJson(value)));
    return out;
  }
}
