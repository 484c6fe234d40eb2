import { ApiRequestError, NodeUnreachable } from '../../client/errors.ts';
import { KeystoreFileError } from '../../client/keystore-file.ts';
import { ProtocolError } from '../../protocol/errors.ts';

/**
 * The wallet commands' failures, each with a code a script can match (`--json` prints it) and an
 * exit status: 2 for a command line that cannot run, 1 for everything else (the node's refusal, a
 * wrong passphrase, a missing account, a node that does not answer).
 */
export type WalletErrorCode =
  | 'usage'
  | 'no_keystore'
  | 'keystore_exists'
  | 'unknown_account'
  | 'insufficient_funds'
  | 'no_passphrase'
  | 'nothing_pending'
  | 'timeout'
  | 'unknown_lease'
  | 'no_offer'
  | 'ssh_failed';

export class WalletError extends Error {
  readonly code: WalletErrorCode;
  constructor(code: WalletErrorCode, message: string) {
    super(message);
    this.name = 'WalletError';
    this.code = code;
  }
}

export class WalletUsageError extends WalletError {
  constructor(message: string) {
    super('usage', message);
    this.name = 'WalletUsageError';
  }
}

/** What a failed command prints and returns: one line for people, a JSON object for scripts. */
export interface Failure {
  exitCode: number;
  message: string;
  json: { error: string; code: string; status?: number; retryable?: boolean };
}

export function failureOf(e: unknown, nodeUrl: string): Failure {
  if (e instanceof WalletUsageError)
    return { exitCode: 2, message: e.message, json: { error: e.message, code: 'usage' } };
  if (e instanceof WalletError)
    return { exitCode: 1, message: e.message, json: { error: e.message, code: e.code } };
  if (e instanceof NodeUnreachable) {
    const cause = causeCode(e.cause);
    const message = `cannot reach the node at ${nodeUrl}${cause ? ` (${cause})` : ''}: is it running? Start it with 'ledger-node', or pass --node URL`;
    return { exitCode: 1, message, json: { error: message, code: e.code } };
  }
  if (e instanceof ApiRequestError) {
    const message = `the node refused: ${e.message} (HTTP ${e.status})`;
    return {
      exitCode: 1,
      message,
      json: {
        error: e.message,
        code: e.code,
        status: e.status,
        ...(e.code === 'block_rejected' ? { retryable: e.retryable } : {}),
      },
    };
  }
  if (e instanceof KeystoreFileError)
    return { exitCode: 1, message: e.message, json: { error: e.message, code: e.code } };
  if (e instanceof ProtocolError)
    return { exitCode: 1, message: e.message, json: { error: e.message, code: e.code } };
  const message = e instanceof Error ? e.message : String(e);
  return { exitCode: 1, message, json: { error: message, code: 'error' } };
}

/** ECONNREFUSED and the like, from fetch's nested causes (an AggregateError when it tried several addresses). */
function causeCode(e: unknown, depth = 0): string | undefined {
  if (typeof e !== 'object' || e === null || depth > 4) return undefined;
  const o = e as { code?: unknown; cause?: unknown; errors?: unknown[] };
  if (typeof o.code === 'string' && /^E[A-Z]+$/.test(o.code)) return o.code;
  const deeper =
    causeCode(o.cause, depth + 1) ??
    (Array.isArray(o.errors) ? causeCode(o.errors[0], depth + 1) : undefined);
  // fetch's own refusals (a blocked port) carry only a message.
  return deeper ?? (depth > 0 && e instanceof Error && e.message !== '' ? e.message : undefined);
}
