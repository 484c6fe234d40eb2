/**
 * Ledger rejections (reference-behavior.md section 3, contract "Node form for rejected blocks").
 * `retryable` is decided where the error is raised, never by matching text: true for transient
 * conditions (a dependency not yet known, a frontier race), false for deterministic faults.
 */
export type LedgerErrorCode =
  | 'unsupported_type'
  | 'hash_missing'
  | 'hash_mismatch'
  | 'pub_key_rule'
  | 'signature_missing'
  | 'invalid_signature'
  | 'invalid_pow'
  | 'timestamp_window'
  | 'timestamp_order'
  | 'unknown_asset'
  | 'wrong_asset'
  | 'unopened_account'
  | 'previous_not_found'
  | 'previous_mismatch'
  | 'fork_finalized'
  | 'fork_unfinalized'
  | 'balance_mismatch'
  | 'insufficient_balance'
  | 'amount_zero'
  | 'overflow'
  | 'self_send'
  | 'source_not_pending'
  | 'source_received'
  | 'faucet_disabled'
  | 'claim_limit'
  | 'not_minter'
  | 'multisig'
  | 'account_exists'
  | 'genesis'
  | 'unresolved_conflict'
  | 'vote_locked'
  // lease family (reference-behavior.md 4.3)
  | 'lease_bounds'
  | 'lease_cost'
  | 'lease_state'
  | 'lease_not_found'
  | 'lease_window'
  | 'lease_epoch'
  | 'certificate'
  | 'attestation';

const RETRYABLE: ReadonlySet<LedgerErrorCode> = new Set([
  // A type this node cannot judge yet (reference-behavior.md 9.1, L-19): a newer node may accept it.
  'unsupported_type',
  'unopened_account',
  'previous_not_found',
  'source_not_pending',
]);

export class LedgerError extends Error {
  readonly code: LedgerErrorCode;
  readonly retryable: boolean;
  /** The reason, without the "block rejected: " prefix the API adds. */
  readonly reason: string;

  constructor(code: LedgerErrorCode, reason: string, retryable = RETRYABLE.has(code)) {
    super(`block rejected: ${reason}`);
    this.name = 'LedgerError';
    this.code = code;
    this.reason = reason;
    this.retryable = retryable;
  }
}
