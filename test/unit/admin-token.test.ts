import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AdminTokenError,
  adminTokenFromEnv,
  ensureAdminTokenFile,
  readAdminTokenFile,
} from '../../node-core/admin-token.ts';
import { HELP, parseArgs } from '../../node-core/cli/args.ts';
import { tempDir } from '../helpers/node.ts';

const TOKEN = 'a-token-of-24-characters';

/** A token file in a fresh folder with the given mode. */
function tokenFile(mode: number, text = `${TOKEN}\n`): string {
  const path = join(tempDir('admin-token-'), 'token');
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

describe('admin token file', () => {
  it('is created private (0600) with a random token, and read back the same', () => {
    const path = join(tempDir('admin-token-'), 'admin-token');
    const token = ensureAdminTokenFile(path);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(ensureAdminTokenFile(path)).toBe(token);
  });

  it('is read when private to its owner, trimmed', () => {
    expect(readAdminTokenFile(tokenFile(0o600))).toBe(TOKEN);
    expect(readAdminTokenFile(tokenFile(0o400))).toBe(TOKEN);
  });

  for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602]) {
    it(`is refused when other users may open it (mode ${mode.toString(8)}), saying how to fix it`, () => {
      const path = tokenFile(mode);
      expect(() => readAdminTokenFile(path)).toThrow(AdminTokenError);
      expect(() => readAdminTokenFile(path)).toThrow(
        new RegExp(`${path} is open to other users \\(mode 0${mode.toString(8)}\\): run chmod 600`),
      );
      // An existing default file is checked the same way: never tightened silently.
      expect(() => ensureAdminTokenFile(path)).toThrow(/open to other users/);
      expect(statSync(path).mode & 0o777).toBe(mode);
    });
  }

  it('has no mode check on Windows, where mode bits mean nothing', () => {
    expect(readAdminTokenFile(tokenFile(0o644), 'win32')).toBe(TOKEN);
  });

  it('refuses a short token, a missing file, naming the file', () => {
    const short = tokenFile(0o600, 'short\n');
    expect(() => readAdminTokenFile(short)).toThrow(
      `${short}: the admin token must be at least 16 characters`,
    );
    expect(() => readAdminTokenFile('/nonexistent/token')).toThrow(
      'cannot read the admin token file /nonexistent/token: ENOENT',
    );
  });
});

describe('admin token from the environment', () => {
  it('prefers LEDGER_NODE_ADMIN_TOKEN, ignores empty variables, refuses a short token', () => {
    expect(adminTokenFromEnv({})).toBeUndefined();
    expect(adminTokenFromEnv({ LEDGER_NODE_ADMIN_TOKEN: '' })).toBeUndefined();
    expect(adminTokenFromEnv({ XE_API_ADMIN_TOKEN: TOKEN })).toBe(TOKEN);
    expect(
      adminTokenFromEnv({ LEDGER_NODE_ADMIN_TOKEN: TOKEN, XE_API_ADMIN_TOKEN: 'other-long-token-x' }),
    ).toBe(TOKEN);
    expect(() => adminTokenFromEnv({ LEDGER_NODE_ADMIN_TOKEN: 'short' })).toThrow(
      /LEDGER_NODE_ADMIN_TOKEN: the admin token must be at least 16/,
    );
  });
});

describe('--admin-token-file', () => {
  it('takes a path, excludes --admin-token, and is documented', () => {
    expect(parseArgs(['--admin-token-file', '/run/secrets/token']).adminTokenFile).toBe('/run/secrets/token');
    expect(parseArgs(['--admin-token-file=/t']).adminTokenFile).toBe('/t');
    expect(() => parseArgs(['--admin-token-file', ''])).toThrow(/must not be empty/);
    expect(() => parseArgs(['--admin-token-file'])).toThrow(/needs a value/);
    expect(() => parseArgs(['--admin-token', TOKEN, '--admin-token-file', '/t'])).toThrow(
      /exclude each other/,
    );
    expect(HELP).toContain('--admin-token-file FILE');
    expect(HELP).toMatch(/--admin-token TOKEN[^]*process\s+list/);
  });
});
