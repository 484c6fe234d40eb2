import { describe, expect, it } from 'vitest';
import { CertificateBook } from '../../node-core/leasing/certificate-book.ts';
import {
  CertificateExchange,
  MAX_CERTIFICATES_PER_ANSWER,
} from '../../node-core/net/certificate-exchange.ts';
import { decodeCertificateMessage, encodeCertificateMessage } from '../../node-core/net/gossip.ts';
import {
  CertificateError,
  EMPTY_ATTESTATION_ROOT,
  type PerformanceCertificate,
  signCertificate,
  verifyCertificateContent,
} from '../../node-core/protocol/certificate.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { parseJson, stringifyJson } from '../../node-core/protocol/json.ts';
import { generateKeyPair } from '../../node-core/protocol/keys.ts';
import { tempStores } from '../helpers/temp-stores.ts';

/** The certificate exchange over a book in a real store and a fake host (reference-behavior.md 4.7, 5.3). */
const NET = 'devnet-x';
const WORKLOAD = { workload_version: 3n, iterations: 1000n };
const NOW = 2_000_000_000_000_000_000n;
const DAY = 86_400_000_000_000n;

function cert(issued: bigint, key = generateKeyPair()): PerformanceCertificate {
  return signCertificate(
    {
      provider: key.address,
      provider_pub_key: key.pub_key,
      seed: 'ab'.repeat(32),
      ...WORKLOAD,
      work_proof: 'cd'.repeat(32),
      score: 0.5,
      start_attestation_root: EMPTY_ATTESTATION_ROOT,
      end_attestation_root: EMPTY_ATTESTATION_ROOT,
      start_median: issued,
      end_median: issued,
      issued_at: issued,
      expires_at: issued + 7n * DAY,
      price_multiplier_milli: 1000n,
    },
    NET,
    hexToBytes(key.seed_hex),
  );
}

const stores = tempStores();

function setup(answer: unknown = { certificates: [] }) {
  const book = new CertificateBook(stores.open().store);
  const published: PerformanceCertificate[] = [];
  const ex = new CertificateExchange({
    book,
    verify: (c) => verifyCertificateContent(c, NET, { workload: WORKLOAD }),
    host: {
      peers: () => [],
      request: async () => answer as never,
      publishCertificate: async (c) => void published.push(c),
    },
    ownAddress: 'ee'.repeat(32),
    now: () => NOW,
  });
  return { ex, book, published };
}

describe('certificate exchange', () => {
  it('keeps a valid certificate once, refuses forged ones', async () => {
    const { ex, book } = setup();
    const c = cert(NOW - DAY);
    expect(await ex.offer(c)).toBe('accept');
    expect(await ex.offer(c)).toBe('ignore');
    expect(await ex.offer({ ...cert(NOW), price_multiplier_milli: 900n })).toBe('reject');
    expect(await ex.offer({ ...cert(NOW), iterations: 999n })).toBe('reject');
    // Expired certificates are kept too: a lease may name one (LS-15).
    expect(await ex.offer(cert(NOW - 30n * DAY))).toBe('accept');
    expect(book.all()).toHaveLength(2);
    expect(() => verifyCertificateContent({ ...c, score: 0 }, NET, { workload: WORKLOAD })).toThrow(
      CertificateError,
    );
  });

  it('answers cert_request with at most 48, unexpired first, newest first, optionally one provider', async () => {
    const { ex } = setup();
    const old = cert(NOW - 30n * DAY);
    await ex.offer(old);
    for (let i = 0; i < 60; i++) await ex.offer(cert(NOW - BigInt(i) * 1000n));
    const a = ex.answer('cert_request', {})!;
    expect(a.certificates).toHaveLength(MAX_CERTIFICATES_PER_ANSWER);
    const issued = (a.certificates as { issued_at: bigint }[]).map((c) => c.issued_at);
    expect(issued).toEqual([...issued].sort((x, y) => (x > y ? -1 : 1)));
    expect(issued).not.toContain(old.issued_at);
    expect(new TextEncoder().encode(stringifyJson(a)).length).toBeLessThan(64 * 1024);
    const only = ex.answer('cert_request', { provider: old.provider })!;
    expect((only.certificates as { hash: string }[]).map((c) => c.hash)).toEqual([old.hash]);
    expect(ex.answer('vote_request', {})).toBeUndefined();
  });

  it('pulls a peer’s answer through the same checks, skipping what does not decode or verify', async () => {
    const good = cert(NOW);
    const forged = { ...cert(NOW), score: 2 };
    const { ex, book } = setup({
      certificates: [good, forged, { hash: 'x' }, 'junk'].map((c) =>
        typeof c === 'object' && 'provider' in c ? parseJson(stringifyJson(c)) : c,
      ),
    });
    expect(await ex.pull('peer')).toBe(1);
    expect(book.all().map((c) => c.hash)).toEqual([good.hash]);
  });

  it('re-broadcasts only this node’s own unexpired certificate', () => {
    const { ex, published } = setup();
    ex.publishOwn();
    expect(published).toEqual([]);
  });

  it('gossip decodes exactly the specification’s fields', () => {
    const c = cert(NOW);
    expect(decodeCertificateMessage(encodeCertificateMessage(c))).toEqual(c);
    const enc = (o: unknown) => new TextEncoder().encode(stringifyJson(o));
    expect(decodeCertificateMessage(enc({ ...c, extra: 1 }))).toBeUndefined();
    expect(decodeCertificateMessage(enc({ certificate: c }))).toBeUndefined();
    const { hash: _h, ...noHash } = c;
    expect(decodeCertificateMessage(enc(noHash))).toBeUndefined();
    expect(decodeCertificateMessage(new Uint8Array(5000))).toBeUndefined();
  });
});
