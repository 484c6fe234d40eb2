import type { Attestation } from '../protocol/block.ts';
import { NetError } from '../net/errors.ts';
import { type AttestationSlots } from './attestation-slots.ts';
import { attestationSubject, type SubjectView } from './attestation-subject.ts';
import { LeasingError } from './errors.ts';

/** The messenger request a provider sends every peer for an attested time (reference-behavior.md 4.6). */
export const ATTEST_REQUEST = 'attest_timestamp';

export interface AttestationResponderDeps {
  subjects: SubjectView;
  /** Whether this node's key is listed in `sys.timekeepers` (only then does its signature count). */
  isTimekeeper(): boolean;
  /** This node's attestation of `id` at the present time. */
  attest(id: string): Attestation;
  slots: AttestationSlots;
}

/**
 * Answers `attest_timestamp {lease_hash}` from peers with `{public_key, timestamp, signature}`: only
 * as a listed timekeeper, only for what POST /attestation/request would attest, and at most once per
 * peer per identifier per 30 s. The order is the point (LS-10): the slot is taken only after the
 * request validated, so invalid requests cannot use up a peer's attestations.
 */
export class AttestationResponder {
  private readonly d: AttestationResponderDeps;
  readonly stats = { served: 0, rate_limited: 0 };

  constructor(deps: AttestationResponderDeps) {
    this.d = deps;
  }

  /** The answer to a messenger request, or undefined for another type; refusals throw a NetError. */
  answer(type: string, payload: unknown, from: string): Attestation | undefined {
    if (type !== ATTEST_REQUEST) return undefined;
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
      throw new NetError('ERR_BAD_REQUEST', `${ATTEST_REQUEST}: payload must be {lease_hash}`);
    let id: string;
    try {
      id = attestationSubject((payload as { lease_hash?: unknown }).lease_hash, this.d.subjects);
    } catch (e) {
      if (e instanceof LeasingError) throw new NetError('ERR_BAD_REQUEST', `${ATTEST_REQUEST}: ${e.message}`);
      throw e;
    }
    if (!this.d.isTimekeeper())
      throw new NetError('ERR_REFUSED', `${ATTEST_REQUEST}: this node is not a listed timekeeper`);
    if (!this.d.slots.take(from, id)) {
      this.stats.rate_limited += 1;
      throw new NetError(
        'ERR_RATE_LIMITED',
        `${ATTEST_REQUEST}: rate limited: one attestation per peer per identifier per 30 s`,
      );
    }
    this.stats.served += 1;
    return this.d.attest(id);
  }
}
