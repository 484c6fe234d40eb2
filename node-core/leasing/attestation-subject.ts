import { benchmarkEndSubject } from '../protocol/certificate.ts';
import { isHex } from '../protocol/hex.ts';
import { LeasingError } from './errors.ts';
import type { LeaseRecord } from './records.ts';
import { TERMINAL_STATES } from './records.ts';

/**
 * What a timekeeper agrees to attest (reference-behavior.md 1.8, 4.6), over HTTP
 * (`POST /attestation/request`) and the messenger (`attest_timestamp`) alike: a lease this node
 * knows that still has attestation-gated transitions ahead (created or accepted), the address of a
 * provider registered in the directory, or that address as a certificate's end attestation names it
 * (benchmarkEndSubject). This node's own address counts too: it attests its own benchmark.
 */
export interface SubjectView {
  leases: { get(hash: string): LeaseRecord | undefined };
  /** Addresses of live registrations starting with a prefix (net/directory.ts). */
  directory: { addressesFrom(prefix: string): Iterable<string> };
  ownAddress: string;
}

/** The identifier to attest, lower-cased; a LeasingError with a `subject_*` code when refused. */
export function attestationSubject(raw: unknown, view: SubjectView): string {
  if (raw === undefined || raw === '') throw new LeasingError('subject_invalid', 'lease_hash required');
  if (typeof raw !== 'string') throw new LeasingError('subject_invalid', 'lease_hash must be a string');
  if (raw.length !== 64)
    throw new LeasingError('subject_invalid', `invalid attestation identifier length: ${raw.length}`);
  if (!isHex(raw, 32)) throw new LeasingError('subject_invalid', 'lease_hash must be 64 hex characters');
  const id = raw.toLowerCase();
  const lease = view.leases.get(id);
  if (lease !== undefined) {
    if (TERMINAL_STATES.has(lease.state))
      throw new LeasingError(
        'subject_closed',
        `lease ${id} is ${lease.state}: no attestation-gated transitions remain`,
      );
    return id;
  }
  if (!isProvider(view, id)) throw new LeasingError('subject_unknown', 'lease not found');
  return id;
}

function isProvider(view: SubjectView, id: string): boolean {
  const named = (address: string) => address === id || benchmarkEndSubject(address) === id;
  if (named(view.ownAddress)) return true;
  // A registered address is the id itself, or (as a certificate's end attestation names it) shares
  // its first 32 characters: looked up, not walked (a directory of 100,000 took 117-147 ms).
  for (const address of view.directory.addressesFrom(id.slice(0, 32))) if (named(address)) return true;
  return false;
}
