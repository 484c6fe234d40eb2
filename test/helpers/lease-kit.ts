import type { Block } from '../../node-core/protocol/block.ts';
import type { PerformanceCertificate } from '../../node-core/protocol/certificate.ts';
import { hexToBytes } from '../../node-core/protocol/hex.ts';
import { signAttestation } from '../../node-core/protocol/payloads.ts';
import { leaseCost } from '../../node-core/leasing/pricing.ts';
import { Account, type Kit, XE } from './ledger-kit.ts';
import { seedOf, type TestNode } from './node.ts';
import { type CertificateTerms, testCertificate } from './certificates.ts';

/**
 * Building blocks for lease tests against a real node: a signed performance certificate for a
 * provider the test controls, timekeeper attestations signed with the devnet timekeeper's key (the
 * node's own), and the lease-family blocks built as a client would.
 */

export const MINUTE_NS = 60_000_000_000n;

/**
 * Lease windows short enough for tests (genesisSet of a test node): settle grace 1 min, force-settle
 * gap 21 min (more than twice the default 10 min attestation skew), escrow expiry 30 min.
 */
export const SHORT_WINDOWS = {
  lease_settle_grace_ns: MINUTE_NS,
  lease_force_settle_gap_ns: 21n * MINUTE_NS,
  lease_escrow_expiry_ns: 30n * MINUTE_NS,
};

/** The cost of SMALL at x1000 (reference-behavior.md 4.5): 31,000/h for one started minute. */
export const SMALL_COST = 517n;
/** Its emission at R = 2000 (the devnet's epoch.0). */
export const SMALL_EMISSION = 1034n;

/** A test certificate for `provider`, stored in the node's book. */
export async function certify(
  t: TestNode,
  kit: Kit,
  provider: Account,
  terms: CertificateTerms = {},
): Promise<PerformanceCertificate> {
  const cert = testCertificate(provider.key, provider.seed, kit.networkId, terms);
  await t.node.certificates.add(cert);
  return cert;
}

/** An attestation by the devnet's timekeeper (the node's key) of `subject` at `at`. */
export function attest(t: TestNode, subject: string, at: bigint) {
  const tk = t.keys.timekeepers[0]!;
  return signAttestation(subject, at, seedOf(tk.seed_hex), tk.pub_key);
}

export interface LeaseTerms {
  vcpus: bigint;
  memory_mb: bigint;
  disk_gb: bigint;
  duration: bigint;
}

export const SMALL: LeaseTerms = { vcpus: 1n, memory_mb: 1024n, disk_gb: 1n, duration: 60n };

export function leaseBlock(
  consumer: Account,
  provider: Account,
  cert: PerformanceCertificate,
  terms: LeaseTerms = SMALL,
  over: Partial<Block> = {},
): Block {
  const cost = leaseCost(terms, cert.price_multiplier_milli);
  return consumer.build({
    type: 'lease',
    asset: 'XUSD',
    destination: provider.address,
    amount: cost,
    ...terms,
    access_pub_key: 'ef'.repeat(32),
    certificate_hash: cert.hash,
    balance: consumer.bal('XUSD') - cost,
    ...over,
  });
}

export function acceptBlock(
  t: TestNode,
  provider: Account,
  lease: Block,
  attestedAt: bigint,
  over: Partial<Block> = {},
): Block {
  return provider.build({
    type: 'lease_accept',
    asset: 'XUSD',
    source: lease.hash!,
    amount: 0n,
    balance: provider.bal('XUSD'),
    attestations: [attest(t, lease.hash!, attestedAt)],
    certificate_hash: lease.certificate_hash!,
    locked_r: 2000n,
    locked_payout_cap: 0n,
    locked_twap_milli: 0n,
    ...over,
  });
}

/** The provider's settle of `lease`, attested at `at`, paying `amount` XE. */
export function settleBlock(
  t: TestNode,
  provider: Account,
  lease: Block,
  at: bigint,
  amount = SMALL_EMISSION,
  over: Partial<Block> = {},
): Block {
  return provider.build({
    type: 'lease_settle',
    asset: 'XE',
    source: lease.hash!,
    amount,
    balance: provider.bal('XE') + amount,
    attestations: [attest(t, lease.hash!, at)],
    ...over,
  });
}

/** The consumer's cancel of `lease`, refunding `cost`. */
export function cancelBlock(consumer: Account, lease: Block, cost = SMALL_COST): Block {
  return consumer.build({
    type: 'lease_cancel',
    asset: 'XUSD',
    source: lease.hash!,
    balance: consumer.bal('XUSD') + cost,
  });
}

/** An opened account holding `xusd` micro-XUSD: minted by `minter` (the devnet's), sent and received. */
export async function fundedAccount(kit: Kit, minter: Account, xusd = 10n * XE): Promise<Account> {
  const c = new Account(kit);
  await c.claim(XE);
  await minter.commit(
    minter.build({ type: 'mint', asset: 'XUSD', amount: xusd, balance: minter.bal('XUSD') + xusd }),
  );
  await c.receive(await minter.send(c.address, xusd, 'XUSD'));
  return c;
}

export { hexToBytes };
