import { describe, expect, it } from 'vitest';
import { CERTIFICATES_PER_PROVIDER, CertificateBook } from '../../node-core/leasing/certificate-book.ts';
import type { PerformanceCertificate } from '../../node-core/protocol/certificate.ts';
import { tempStores } from '../helpers/temp-stores.ts';

/**
 * A provider's certificates are read through an index by provider (the marketplace asks for its
 * own newest one with every request it sees): checked, in a real store, against the rule written
 * out over every certificate added (newest issued first, ties in hash order, the 256 newest kept
 * per provider), and for a store written before the index existed.
 */
describe('certificate index', () => {
  const stores = tempStores();
  const open = (dir?: string) => {
    const o = stores.open(dir);
    return { ...o, book: new CertificateBook(o.store) };
  };

  const PROVIDERS = ['a', 'b', 'c'].map((x) => x.repeat(64));
  let n = 0;
  const cert = (provider: string, issued: bigint): PerformanceCertificate => {
    n += 1;
    return {
      provider,
      provider_pub_key: provider,
      seed: '5'.repeat(64),
      workload_version: 1n,
      iterations: 1000n,
      work_proof: '6'.repeat(64),
      score: 1.5,
      start_attestation_root: '7'.repeat(64),
      end_attestation_root: '8'.repeat(64),
      start_median: issued - 10n,
      end_median: issued,
      issued_at: issued,
      expires_at: issued + 1_000n,
      price_multiplier_milli: 1_000n,
      signature: '9'.repeat(128),
      hash: ((n * 2654435761) % 2 ** 32).toString(16).padStart(64, '0'),
    };
  };

  /** The rule: a provider's certificates, newest issued first, ties in hash order, 256 kept. */
  const expected = (added: PerformanceCertificate[], provider: string) => {
    const mine = added
      .filter((c) => c.provider === provider)
      .sort((x, y) =>
        x.issued_at !== y.issued_at ? (x.issued_at > y.issued_at ? -1 : 1) : x.hash < y.hash ? -1 : 1,
      );
    return mine.slice(0, CERTIFICATES_PER_PROVIDER);
  };

  it('gives each provider its certificates newest first, the 256 newest kept, as a pass over all would', async () => {
    const { book, store } = open();
    const added: PerformanceCertificate[] = [];
    // Issue times from a small range, so some coincide; more than 256 for one provider.
    for (let i = 0; i < 700; i++) {
      const provider = PROVIDERS[i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : 0]!;
      const c = cert(provider, 1_000_000n + BigInt((i * 37) % 400));
      expect(await book.add(c)).toBe(true);
      added.push(c);
    }
    expect(await book.add(added.at(-1)!)).toBe(false); // known already
    for (const p of PROVIDERS) {
      const want = expected(added, p);
      expect(book.ofProvider(p)).toEqual(want);
      // The newest one still valid at a time past some expiries.
      const now = 1_000_000n + 1_200n;
      expect(book.newestValid(p, now)).toEqual(want.find((c) => c.expires_at >= now));
      expect(book.newestValid(p, 1_000_000n + 5_000n)).toBeUndefined();
    }
    expect(book.ofProvider(PROVIDERS[0]!)).toHaveLength(CERTIFICATES_PER_PROVIDER);
    // What was trimmed is gone from the table and the index alike.
    const kept = new Set(PROVIDERS.flatMap((p) => expected(added, p).map((c) => c.hash)));
    expect(new Set(book.all().map((c) => c.hash))).toEqual(kept);
    // Two index entries each: by provider and by issue time.
    expect(store.certificateIndex.getCount()).toBe(2 * kept.size);
  });

  it('answers the newest across providers as decoding and sorting every certificate would', async () => {
    const { book } = open();
    const added: PerformanceCertificate[] = [];
    // Expiries not tied to issue times (verification does not tie them), issue times that coincide.
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 300; i++) {
      const issued = 1_000n + BigInt(Math.floor(next() * 120));
      const c = { ...cert(PROVIDERS[i % 3]!, issued), expires_at: issued + BigInt(Math.floor(next() * 400)) };
      await book.add(c);
      added.push(c);
    }
    /** The rule written out: unexpired first, each part newest issued first, ties in hash order. */
    const rule = (now: bigint, limit: number) =>
      [...added]
        .sort((x, y) => (x.hash < y.hash ? -1 : 1))
        .sort((x, y) => {
          const live = Number(y.expires_at >= now) - Number(x.expires_at >= now);
          if (live !== 0) return live;
          return x.issued_at > y.issued_at ? -1 : x.issued_at < y.issued_at ? 1 : 0;
        })
        .slice(0, limit);
    for (const now of [0n, 1_050n, 1_200n, 1_400n, 10_000n])
      for (const limit of [1, 5, 48, 400]) expect(book.newest(now, limit)).toEqual(rule(now, limit));
  });

  it('indexes the certificates of a store written before the index, once, at open', async () => {
    const { dir, store, book } = open();
    const added = PROVIDERS.flatMap((p, i) => [cert(p, 5n + BigInt(i)), cert(p, 3n), cert(p, 9n)]);
    for (const c of added) await book.add(c);
    await store.root.transaction(() => {
      store.certificateIndex.clearSync();
      // The first version of the index marked '1' and had no entries by issue time: rebuilt too.
      store.meta.putSync('certificate_index', '1');
    });
    expect(book.ofProvider(PROVIDERS[0]!)).toEqual([]);
    await stores.close(store);
    const reopened = open(dir);
    for (const p of PROVIDERS) expect(reopened.book.ofProvider(p)).toEqual(expected(added, p));
    expect(reopened.store.meta.get('certificate_index')).toBe('2');
    expect(reopened.book.newest(0n, 100)).toHaveLength(added.length);
  });
});
