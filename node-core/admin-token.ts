import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { writeFileAtomic } from './genesis/genesis.ts';

/**
 * The operator (admin) token (decisions D10): where it comes from, and the checks that keep it
 * private. A token on the command line is visible to every local user in the process list, so the
 * node also takes it from an environment variable or a file; a token file that other users can open
 * is refused rather than silently tightened, since its token may already have been read and should
 * be replaced, not just hidden again.
 */

/** Environment variables holding the token, in order of preference (the second is the reference's). */
export const ADMIN_TOKEN_ENV = ['LEDGER_NODE_ADMIN_TOKEN', 'XE_API_ADMIN_TOKEN'] as const;

/** A shorter token would be guessable within the rate limits' reach. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** A token source that cannot be used; the message says which and what to do. */
export class AdminTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminTokenError';
  }
}

/** Checks a token's length; `source` names where it came from, for the message. */
export function checkAdminToken(token: string, source: string): string {
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new AdminTokenError(
      `${source}: the admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`,
    );
  }
  return token;
}

/** The token from the environment, if one is set (an empty variable counts as unset). */
export function adminTokenFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of ADMIN_TOKEN_ENV) {
    const v = env[name];
    if (v) return checkAdminToken(v, name);
  }
  return undefined;
}

/**
 * Reads a token file, refusing one that users other than its owner may read or write (mode bits
 * beyond 0600). Windows has no such mode bits: there the folder's ACL is what protects it.
 */
export function readAdminTokenFile(path: string, platform: NodeJS.Platform = process.platform): string {
  let mode: number;
  let text: string;
  try {
    mode = statSync(path).mode & 0o777;
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new AdminTokenError(`cannot read the admin token file ${path}: ${errText(e)}`);
  }
  if (platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new AdminTokenError(
      `the admin token file ${path} is open to other users (mode ${mode.toString(8).padStart(4, '0')}): ` +
        `run chmod 600 ${path}, and replace the token if someone may have read it`,
    );
  }
  return checkAdminToken(text.trim(), path);
}

/** The token in `path`, written there first (random, mode 0600) if the file does not exist. */
export function ensureAdminTokenFile(path: string): string {
  if (!existsSync(path)) {
    try {
      writeFileAtomic(path, `${randomBytes(32).toString('hex')}\n`, 0o600);
    } catch (e) {
      throw new AdminTokenError(`cannot create the admin token file ${path}: ${errText(e)}`);
    }
  }
  return readAdminTokenFile(path);
}

function errText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC') return 'no space left on the device';
  return code ?? (e as Error).message;
}
