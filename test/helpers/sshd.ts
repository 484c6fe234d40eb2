import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSshPublicKey } from '../../node-core/vm/ssh-console.ts';

/**
 * A real OpenSSH server for tests: Debian's `sshd` on a free loopback port with its own config, host
 * key and authorized keys in a temp folder, run in the foreground (`-D -e`) as root, which sshd needs
 * to log anyone in. Tests that need it skip where it cannot run (`sshdUnavailable` says why).
 */

export const SSHD_PATH = '/usr/sbin/sshd';

/** Why a real sshd cannot run here, or undefined when it can. */
export function sshdUnavailable(): string | undefined {
  try {
    accessSync(SSHD_PATH, constants.X_OK);
  } catch {
    return `${SSHD_PATH} is missing (Debian package openssh-server)`;
  }
  if (process.getuid?.() !== 0) return 'sshd must run as root to log a user in';
  return undefined;
}

export interface TestSshd {
  port: number;
  /** The listening sshd's process id. */
  pid: number;
  /** `SHA256:...` of its host key, as `ssh-keygen -l` prints it. */
  hostKeyFingerprint: string;
  /**
   * Connections sshd logged so far ("Connection from", LogLevel VERBOSE), readiness probes included;
   * compare two readings, a little apart (the log arrives after the connection).
   */
  connectionsSeen(): number;
  /** Process ids of sshd's children: one per open connection (privilege-separated sessions). */
  children(): number[];
  /** A TCP connection to it, as a tunnel would give. */
  dial(): Promise<Socket>;
  /** What sshd logged (stderr). */
  log(): string;
  stop(): Promise<void>;
}

export interface SshdOptions {
  /** Raw Ed25519 public keys (64 hex) allowed to log in as root. */
  authorizedKeys: readonly string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Waits until something on the port says `SSH-2.0-`. */
async function waitForBanner(port: number, deadlineMs: number, proc: ChildProcess): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`sshd exited with ${proc.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, '127.0.0.1');
      sock.once('data', (d: Buffer) => {
        sock.destroy();
        resolve(d.toString('latin1').startsWith('SSH-2.0-'));
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`sshd did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The process ids whose parent is `pid` (read from /proc: no procps needed). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      // Field 4 is the parent id; the command name (field 2) may hold spaces, so read after ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // The process ended while being read.
    }
  }
  return out;
}

export async function startSshd(opts: SshdOptions): Promise<TestSshd> {
  const dir = mkdtempSync(join(tmpdir(), 'test-sshd-'));
  const hostKey = join(dir, 'host_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test-host', '-f', hostKey]);
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${hostKey}.pub`], { encoding: 'utf8' }).split(
    ' ',
  )[1]!;
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(authorized, opts.authorizedKeys.map((k) => `${openSshPublicKey(k)} test\n`).join(''));
  const port = await freePort();
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      // The temp folder belongs to whoever runs the tests; sshd would refuse it otherwise.
      'StrictModes no',
      'UsePAM no',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  // sshd's privilege separation needs this folder (a package install creates it at boot).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  const proc = spawn(SSHD_PATH, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  try {
    await waitForBanner(port, 10_000, proc);
  } catch (e) {
    proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(e as Error).message}; sshd said: ${stderr}`, { cause: e });
  }
  const pid = proc.pid!;

  return {
    port,
    pid,
    hostKeyFingerprint: fingerprint,
    connectionsSeen: () => (stderr.match(/Connection from /g) ?? []).length,
    children: () => childrenOf(pid),
    dial: () =>
      new Promise<Socket>((resolve, reject) => {
        const sock = connect(port, '127.0.0.1');
        sock.once('connect', () => resolve(sock));
        sock.once('error', reject);
      }),
    log: () => stderr,
    async stop() {
      for (const child of childrenOf(pid)) {
        try {
          process.kill(child, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
