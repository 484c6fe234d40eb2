import { existsSync, readFileSync } from 'node:fs';

/** The software version, from package.json (one source of truth), found from sources or from dist/. */
function readVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    const url = new URL(rel, import.meta.url);
    if (existsSync(url)) {
      const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'ledger-node-desktop' && pkg.version) return pkg.version;
    }
  }
  return '0.0.0';
}

export const NODE_VERSION: string = readVersion();
