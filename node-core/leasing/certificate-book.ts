import type { Store } from '../store/store.ts';
import { parseJson, stringifyJson } from '../protocol/json.ts';
import {
  certificateToJson,
  decodeCertificate,
  type PerformanceCertificate,
} from '../protocol/certificate.ts';

/** How many certificates a node keeps per provider, expired ones included (LS-15). */
export const CERTIFICATES_PER_PROVIDER = 256;

/**
 * Performance certificates this node knows, by hash, persisted. Only certificates whose content was
 * verified are put here (the caller's job). Up to 256 per provider are kept, newest issued first, so
 * a lease naming an older certificate still validates after the provider renewed it.
 */
export class CertificateBook {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
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
      const mine = this.ofProvider(cert.provider);
      for (const old of mine.slice(CERTIFICATES_PER_PROVIDER)) this.store.certificates.removeSync(old.hash);
    });
    return true;
  }

  /** A provider's certificates, newest issued first. */
  ofProvider(provider: string): PerformanceCertificate[] {
    const out: PerformanceCertificate[] = [];
    for (const { value } of this.store.certificates.getRange({})) {
      const c = decodeCertificate(parseJson(value));
      if (c.provider === provider) out.push(c);
    }
    return out.sort((a, b) => (a.issued_at > b.issued_at ? -1 : a.issued_at < b.issued_at ? 1 : 0));
  }

  /** The provider's newest certificate that has not expired at `now`. */
  newestValid(provider: string, now: bigint): PerformanceCertificate | undefined {
    return this.ofProvider(provider).find((c) => c.expires_at >= now);
  }

  all(): PerformanceCertificate[] {
    const out: PerformanceCertificate[] = [];
    for (const { value } of this.store.certificates.getRange({}))
      out.push(decodeCertificate(parseJson(value)));
    return out;
  }
}
