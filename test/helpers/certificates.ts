import {
  EMPTY_ATTESTATION_ROOT,
  type PerformanceCertificate,
  signCertificate,
} from '../../node-core/protocol/certificate.ts';

const MINUTE_NS = 60_000_000_000n;

export interface CertificateTerms {
  issuedAt?: bigint;
  expiresAt?: bigint;
  multiplier?: bigint;
}

/**
 * A signed performance certificate for a provider key, with made-up benchmark results (the node
 * never re-runs the benchmark): valid from `issuedAt` (an hour ago) for 7 days, at x1 by default.
 */
export function testCertificate(
  provider: { address: string; pub_key: string },
  seed: Uint8Array,
  networkId: string,
  terms: CertificateTerms = {},
): PerformanceCertificate {
  const issued = terms.issuedAt ?? BigInt(Date.now()) * 1_000_000n - 60n * MINUTE_NS;
  return signCertificate(
    {
      provider: provider.address,
      provider_pub_key: provider.pub_key,
      seed: 'ab'.repeat(32),
      workload_version: 3n,
      iterations: 375_000_000n,
      work_proof: 'cd'.repeat(32),
      score: 0.25,
      start_attestation_root: EMPTY_ATTESTATION_ROOT,
      end_attestation_root: EMPTY_ATTESTATION_ROOT,
      start_median: issued,
      end_median: issued,
      issued_at: issued,
      expires_at: terms.expiresAt ?? issued + 7n * 24n * 60n * MINUTE_NS,
      price_multiplier_milli: terms.multiplier ?? 1000n,
    },
    networkId,
    seed,
  );
}
