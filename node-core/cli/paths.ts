import { homedir } from 'node:os';
import { join } from 'node:path';

export const APP_NAME = 'Ledger Node Desktop';

/**
 * The platform's per-user application-data folder, the same one the Electron app uses
 * (`app.getPath('userData')`), so the CLI and the desktop app share one node by default.
 */
export function appDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const home = homedir();
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), APP_NAME);
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', APP_NAME);
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), APP_NAME);
}

/** The node's data directory inside the application-data folder. */
export function defaultDataDir(): string {
  return join(appDataDir(), 'node');
}
