import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnNode, type SpawnedNode } from '../../bench/spawn-node.ts';
import type { DevnetKeys } from '../../node-core/genesis/genesis.ts';
import { tempDir } from '../helpers/node.ts';

/**
 * For the wallet command line's end-to-end tests and the examples' test: a fresh development node run
 * as `ledger-node` (a real process, tiny proof-of-work difficulty, no peers), and the command run as
 * a real process against it.
 */
export const BIN = new URL('../../bin/ledger-node.js', import.meta.url).pathname;

export interface CliNode {
  url: string;
  dataDir: string;
  keys: DevnetKeys;
  node: SpawnedNode;
  stop(): Promise<void>;
}

export async function startCliNode(extra: readonly string[] = []): Promise<CliNode> {
  const root = tempDir('cli-wallet-');
  const dataDir = join(root, 'node');
  const node = await spawnNode([
    ...['--data-dir', dataDir, '--api-port', '0', '--no-p2p', '--pow-difficulty', '2', '--rate-limit', 'off'],
    ...['--genesis-set', 'certificate_iterations=5000', '--no-ui', ...extra],
  ]);
  const keys = JSON.parse(readFileSync(join(dataDir, 'devnet-keys.json'), 'utf8')) as DevnetKeys;
  return {
    url: node.url,
    dataDir,
    keys,
    node,
    async stop() {
      await node.stop();
      killLeftoverVms(dataDir);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * A provider keeps its VMs running across its own restarts (they run detached), so a test node's
 * sandboxes outlive it: each one's process group is led by the process working in `<data>/vms/<lease>`.
 */
function killLeftoverVms(dataDir: string): void {
  const vms = join(dataDir, 'vms') + '/';
  for (const pid of readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    if (!cwd.startsWith(vms)) continue;
    try {
      process.kill(-Number(pid), 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd,
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdin.end(opts.input ?? '');
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`ledger-node ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}
