/**
 * The VM console's errors and limits, apart from its SSH client (ssh-console.ts): the console route
 * needs these from the start, ssh2 only once a console opens (loading it cost ~40 ms of a node's
 * start-up and ~6 MB resident).
 */

export type SshConsoleErrorCode =
  /** The server refused the key, or no valid signature came back from `sign`. */
  | 'auth_failed'
  /** Handshake, channel or transport failure (the tunnel broke, the shell was refused...). */
  | 'ssh_failed';

export class SshConsoleError extends Error {
  readonly code: SshConsoleErrorCode;
  constructor(code: SshConsoleErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SshConsoleError';
    this.code = code;
  }
}

/** A PTY larger than this is a client bug, not a screen. */
export const MAX_PTY_CELLS = 1000;
