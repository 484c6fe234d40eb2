/**
 * Rejections raised by the lease rules' building blocks (pricing, bounds, attestations). The ledger
 * turns them into its own rejections; `code` is what callers branch on, never the message text.
 * None of these conditions goes away by retrying the same block, so none is retryable. The
 * `subject_*` codes refuse a request for a timekeeper attestation (attestation-subject.ts).
 */
export type LeasingErrorCode =
  | 'overflow' // an amount step would pass 2^64-1
  | 'out_of_range' // an input that is not a u64 (a negative bigint: a caller's bug)
  | 'lease_bounds' // dimensions or duration outside reference-behavior.md 3.3
  | 'timekeepers_not_configured' // no sys.timekeepers, or threshold 0
  | 'too_many_attestations' // more than MAX_ATTESTATIONS on the block
  | 'too_few_attestations' // fewer raw entries than the threshold
  | 'insufficient_attestations' // fewer than the threshold survived the checks
  | 'subject_invalid' // an attestation request without a 64-hex identifier
  | 'subject_closed' // a lease in a terminal state: nothing of it needs attested time any more
  | 'subject_unknown'; // neither a lease this node knows nor a registered provider

export class LeasingError extends Error {
  readonly code: LeasingErrorCode;
  /** The field at fault, when one is. */
  readonly field: string | undefined;

  constructor(code: LeasingErrorCode, message: string, field?: string) {
    super(message);
    this.name = 'LeasingError';
    this.code = code;
    this.field = field;
  }
}
