import { describe, expect, it } from 'vitest';
import { archivedLease } from '../../node-core/leasing/archive.ts';
import type { LeaseRecord } from '../../node-core/leasing/records.ts';
import { reputationEvents, reputationJson } from '../../node-core/leasing/reputation.ts';
import { DEFAULT_LEASE_TIMING } from '../../node-core/leasing/timing.ts';
import type { SignedBlock } from '../../node-core/ledger/rules/types.ts';

/** The archive outcome of one lease (reference-behavior.md 4.3, LS-04) and the reputation each lease block records. */
const S = 1_000_000_000n;
const lease: LeaseRecord = {
  lease_hash: 'aa'.repeat(32),
  state: 'accepted',
  consumer: 'cc'.repeat(32),
  provider: 'pp'.repeat(32),
  vcpus: 1n,
  memory_mb: 1024n,
  disk_gb: 1n,
  duration: 7200n,
  cost: 500n,
  stake: 100n,
  start_time: 1_000n * S,
  settled: false,
  renewal_count: 0,
  renewed_cost: 0n,
  renewal_emission: 0n,
  created_at: 900n * S,
};
const T = DEFAULT_LEASE_TIMING;
const archiveAt = lease.start_time + 7200n * S + T.escrow_expiry_ns + T.archive_gap_ns;

describe('archivedLease', () => {
  it('strictly after expiry + escrow expiry + archive gap: expired, settled, escrow burned, stake forfeited', () => {
    expect(archivedLease(lease, archiveAt, T, 500n)).toBeUndefined();
    expect(archivedLease(lease, archiveAt + 1n, T, 500n)).toEqual({
      lease: { ...lease, state: 'expired', settled: true },
      supply: [
        { asset: 'XUSD', term: 'escrow_burned', amount: 500n },
        { asset: 'XUSD', term: 'stake_forfeited', amount: 100n },
      ],
    });
  });

  it('burns only the escrow still held; leaves other states and settled leases alone', () => {
    expect(archivedLease({ ...lease, stake: 0n }, archiveAt + 1n, T, undefined)?.supply).toEqual([]);
    for (const state of ['created', 'settled', 'cancelled', 'unfulfilled', 'expired'] as const)
      expect(archivedLease({ ...lease, state }, archiveAt + 1n, T, 500n)).toBeUndefined();
    expect(archivedLease({ ...lease, settled: true }, archiveAt + 1n, T, 500n)).toBeUndefined();
  });
});

describe('reputationEvents', () => {
  const block = (type: string, timestamp = 5_000n * S) => ({ type, timestamp }) as SignedBlock;

  it('per block type, for both parties', () => {
    const [p, c] = reputationEvents(block('lease_accept'), lease);
    expect(p).toEqual({
      address: lease.provider,
      at: lease.start_time,
      counts: { leases_accepted_as_provider: 1n },
    });
    expect(c).toEqual({
      address: lease.consumer,
      at: lease.start_time,
      counts: { leases_accepted_as_consumer: 1n },
    });
    expect(reputationEvents(block('lease_settle'), lease)[1]!.counts).toEqual({
      leases_settled_as_consumer: 1n,
      lease_secs_settled_as_consumer: 7200n,
    });
    expect(reputationEvents(block('lease_force_settle'), lease)[0]!.counts).toEqual({
      leases_unfulfilled_as_provider: 1n,
    });
    expect(reputationEvents(block('lease_cancel'), lease).map((e) => e.counts)).toEqual([
      {},
      { leases_cancelled_as_consumer: 1n },
    ]);
    expect(reputationEvents(block('lease'), lease)).toEqual([]);
  });

  it('reports durations in hours (LS-21: the reference reports seconds under that name)', () => {
    const r = {
      leases_accepted_as_provider: 1n,
      leases_settled_as_provider: 1n,
      lease_secs_settled_as_provider: 7200n,
      leases_unfulfilled_as_provider: 0n,
      leases_accepted_as_consumer: 0n,
      leases_settled_as_consumer: 0n,
      leases_cancelled_as_consumer: 0n,
      lease_secs_settled_as_consumer: 1800n,
      leases_unfulfilled_as_consumer: 0n,
      first_activity_at: 1n,
      last_activity_at: 2n,
    };
    expect(reputationJson(r)).toMatchObject({
      version: 2,
      lease_hours_settled_as_provider: 2,
      lease_hours_settled_as_consumer: 0.5,
    });
    expect(Object.keys(reputationJson(r))).not.toContain('lease_secs_settled_as_provider');
  });
});
