/**
 * Typed errors of the network layer. Whatever the cause, a failure raised here carries a stable
 * machine code that callers branch on (never on message text) and a message written for the peer
 * or operator who reads it: a request refused by this node is answered with that message in the
 * messenger's error form `{type, error}`.
 */
export type NetErrorCode =
  | 'ERR_BAD_REQUEST' // a request whose payload this node cannot act on
  | 'ERR_RATE_LIMITED' // over the messenger's per-peer or global rate (spec 5.7, N-09)
  | 'ERR_TOO_LARGE' // a message over the size cap of its direction
  | 'ERR_DEADLINE' // a request/answer exchange not finished within the deadline
  | 'ERR_NOT_VERIFIED' // a request from a peer that has not passed netcheck
  | 'ERR_NOT_CONNECTED' // a request to a peer this node has no verified connection to
  | 'ERR_PEER_ANSWER' // the peer answered a request with an error
  | 'ERR_STREAM' // a request's stream failed before its answer (reset by the peer, connection lost)
  | 'ERR_BAD_BLOCK' // a peer sent a block this node refuses for good (sync)
  | 'ERR_BAD_OPTION' // a configuration value outside its range
  | 'ERR_REFUSED'; // a request this node does not serve (attest_timestamp on a non-timekeeper)

export class NetError extends Error {
  readonly code: NetErrorCode;

  constructor(code: NetErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NetError';
    this.code = code;
  }
}

export function isNetError(e: unknown, code?: NetErrorCode): e is NetError {
  return e instanceof NetError && (code === undefined || e.code === code);
}
