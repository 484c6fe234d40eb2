/**
 * The VM console's WebSocket protocol (isomorphic: the renderer and the node both import it).
 *
 * `GET /vms/{lease}/console?ts=<ns>&sig=<hex>&cols=<n>&rows=<n>` upgrades to a WebSocket on the
 * consumer's OWN node. `sig` is the replay-proof lease signature of decisions D12: Ed25519 by the
 * lease's access key over the 32 raw bytes of the lease hash followed by `ts` (8 bytes big-endian),
 * valid for 60 s. The node then opens the tunnel to the VM's SSH server (directly when it is the
 * provider, else over `/xe/tunnel/2.0.0` to the provider) and runs an SSH client over it, logging
 * in as `root`. The SSH user-auth signature is asked of the browser (`sign` below) and answered
 * with the access key held in the renderer: the private key never reaches the node.
 *
 * Frames: binary frames carry terminal bytes both ways (client -> server: keystrokes and pastes;
 * server -> client: the shell's output). Text frames carry one JSON message of the types below.
 */

export type ConsoleState = 'connecting' | 'authenticating' | 'ready' | 'closed';

/** Server -> client. */
export type ConsoleServerMessage =
  | { type: 'status'; state: ConsoleState; message?: string }
  /** Sign `data` (hex) with the access key (plain Ed25519, 64-byte signature) and answer `signature`. */
  | { type: 'sign'; id: number; data: string }
  /** The shell ended with this exit code (the socket closes next). */
  | { type: 'exit'; code: number | null }
  | { type: 'error'; code: ConsoleErrorCode; message: string };

/** Client -> server. */
export type ConsoleClientMessage =
  { type: 'signature'; id: number; signature: string } | { type: 'resize'; cols: number; rows: number };

export type ConsoleErrorCode =
  | 'bad_request' // malformed query or message
  | 'forbidden' // the lease signature is wrong or stale
  | 'lease_not_found'
  | 'lease_not_active' // not accepted, or settled
  | 'tunnel_failed' // the provider or the VM could not be reached
  | 'auth_failed' // the VM refused the key
  | 'ssh_failed'; // the SSH session broke

/** WebSocket close codes the server uses (4000-4999 are the application's). */
export const CONSOLE_CLOSE = {
  normal: 1000,
  error: 4000,
  forbidden: 4003,
  notFound: 4004,
} as const;

export const CONSOLE_DEFAULT_SIZE = { cols: 80, rows: 24 } as const;
