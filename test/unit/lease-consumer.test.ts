import { describe, expect, it } from 'vitest';
import { ConsumerError, LeaseRenewals } from '../../node-core/leasing/consumer/renewals.ts';
import type { LeaseRecord } from '../../node-core/leasing/records.ts';
import type { Attestation } from '../../node-core/protocol/block.ts';

/** LeaseRenewals.attestations: the threshold, the lower median, unknown leases (fakes, no node). */

const LEASE = { lease_hash: 'aa'.repeat(32), state: 'accepted' } as LeaseRecord;
const att = (key: string, timestamp: bigint): Attestation => ({
  public_key: key,
  timestamp,
  signature: '00',
});

function renewals(got: Attestation[], threshold = 2) {
  return new LeaseRenewals({
    lease: (h) => (h === LEASE.lease_hash ? LEASE : undefined),
    certificate: () => undefined,
    gather: async () => got,
    timekeepers: () => ({ keys: ['k1', 'k2', 'k3'], threshold }),
    lockedAt: () => ({ locked_r: 2000n, locked_payout_cap: 0n, locked_twap_milli: 0n }),
    minDurationSecs: () => 60n,
    wallet: { address: 'bb'.repeat(32), balance: () => 0n, write: () => Promise.reject(new Error('no')) },
    now: () => 0n,
  });
}

describe('LeaseRenewals.attestations', () => {
  it('returns the attestations and their lower median once the threshold is met', async () => {
    const got = [att('k1', 30n), att('k2', 10n), att('k3', 20n), att('k4', 40n)];
    const r = await renewals(got).attestations(LEASE.lease_hash);
    expect(r.attestations).toEqual(got);
    expect(r.median).toBe(20n);
    expect((await renewals(got.slice(0, 2)).attestations(LEASE.lease_hash)).median).toBe(10n);
  });

  it('too few timekeepers answered: retryable; an unknown lease: not found', async () => {
    const err = await renewals([att('k1', 1n)])
      .attestations(LEASE.lease_hash)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConsumerError);
    expect(err).toMatchObject({ code: 'too_few_attestations', retryable: true });
    expect((err as Error).message).toBe('too few timekeeper attestations: 1 answered, need 2; retry later');
    await expect(renewals([]).attestations('cc'.repeat(32))).rejects.toMatchObject({
      code: 'lease_not_found',
      retryable: false,
    });
  });
});
