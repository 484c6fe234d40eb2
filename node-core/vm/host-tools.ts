import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { delimiter, join } from 'node:path';

/** Host-side helpers shared by the VM drivers: binaries, detached processes, ports, SSH banners. */

/** The absolute path of `name` on PATH (plus the sbin folders a non-login root shell may lack). */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const d of dirs) {
    if (!d) continue;
    const p = join(d, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/**
 * Whether `pid` runs and is the process we started for `marker` (a path on its command line): after
 * a host reboot the pid may belong to something else entirely.
 */
export function processRuns(pid: number, marker: string): boolean {
  return launchPhase(pid, marker) === 'running';
}

/** A zombie (state Z) has exited: only its parent has not reaped it yet. */
function exited(stat: string): boolean {
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state === 'Z' || state === 'X';
}

/** How long a just-spawned process may take to become the program it runs (exec). */
const EXEC_GRACE_MS = 5000;

/**
 * Where a process just spawned for `marker` stands, from one reading of /proc: 'running' once it is
 * the program (its command line names the marker), 'starting' while alive with the parent's command
 * line (between fork and exec; on a loaded machine that lasts a while), 'gone' once it has exited.
 * One reading, not processRuns then a second look: an exec landing between two readings made a
 * starting process look neither starting nor running, so a launch that was fine was called failed.
 */
export function launchPhase(pid: number, marker: string): 'running' | 'starting' | 'gone' {
  if (!Number.isInteger(pid) || pid <= 1) return 'gone';
  try {
    if (exited(readFileSync(`/proc/${pid}/stat`, 'latin1'))) return 'gone';
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    return cmdline.split('\0').some((a) => a.includes(marker)) ? 'running' : 'starting';
  } catch {
    return 'gone';
  }
}

/** Whether a launch spawned at `spawnedAt` has failed: its process is gone, or never became the program. */
export function launchExited(pid: number, marker: string, spawnedAt: number): boolean {
  const phase = launchPhase(pid, marker);
  return phase === 'gone' || (phase === 'starting' && Date.now() >= spawnedAt + EXEC_GRACE_MS);
}

function isZombie(pid: number): boolean {
  try {
    return exited(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return true;
  }
}

/** Pids of every process whose command line mentions `marker` (leak checks, cleanup). */
export function processesMentioning(marker: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    if (processRuns(Number(e), marker)) out.push(Number(e));
  }
  return out;
}

/**
 * SIGKILLs the process group `pid` leads (what it started goes too), or `pid` alone while it leads
 * none yet (between fork and setsid); nothing when it is gone.
 */
export function killGroupNow(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** SIGKILLs a detached process group, then waits (bounded) until its leader is gone. */
export async function killGroup(pid: number, marker: string, waitMs = 5000): Promise<void> {
  if (!processRuns(pid, marker)) return;
  killGroupNow(pid);
  const deadline = Date.now() + waitMs;
  while (processRuns(pid, marker) && Date.now() < deadline) await sleep(20);
}

/**
 * Kills a launch of ours that failed or was aborted, whatever its phase, and waits (bounded) until
 * nothing of it runs. Right after spawn the child may not have become the program yet: processRuns
 * does not know it then, so killGroup would leave it to exec and run on (an aborted sandbox lived).
 * While the ChildProcess has not exited, its pid is not reaped, so it is still ours to kill.
 */
export async function killLaunch(child: ChildProcess, marker: string, waitMs = 5000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const deadline = Date.now() + waitMs;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    killGroupNow(pid);
    await Promise.race([exited, sleep(waitMs)]);
  }
  // Members of its group die on their own schedule after the signal.
  while (processesMentioning(marker).length > 0 && Date.now() < deadline) await sleep(20);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A loopback TCP port free right now. Another process could take it before the VM binds it: the
 * drivers then fail the launch (launch_failed) rather than reach someone else's server.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Opens a TCP connection to 127.0.0.1:port, or rejects. */
export function tcpConnect(port: number, timeoutMs = 2000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`connect to port ${port} timed out`));
    }, timeoutMs);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.removeAllListeners('error');
      resolve(sock);
    });
    sock.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/**
 * Whether an SSH server answers on the port: its identification line starts with `SSH-`. A bare TCP
 * accept is not enough: QEMU's user network accepts on a forwarded port even while nothing listens
 * in the guest, and closes the connection right after.
 */
export async function sshAnswers(port: number, timeoutMs = 1500): Promise<boolean> {
  let sock: Socket;
  try {
    sock = await tcpConnect(port, timeoutMs);
  } catch {
    return false;
  }
  return new Promise((resolve) => {
    let got = '';
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.length >= 4) done(got.startsWith('SSH-'));
    });
    sock.on('error', () => done(false));
    sock.on('close', () => done(false));
  });
}

/** Runs a short host command to completion (image build, key generation); never a shell. */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; input?: Buffer | string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: 'pipe' });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 128 : 1), stdout: Buffer.concat(out), stderr: err }),
    );
    // A reader may stop before the end of its input (xz --single-stream does): not an error here.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/** The nanosecond Unix time as digits (never a `number`: it does not fit a double exactly). */
export function nowNsDigits(): string {
  return (BigInt(Date.now()) * 1_000_000n).toString();
}

/** Pids of the live processes in the pid namespace `pidNs` (a `pid:[N]` link of /proc/PID/ns/pid). */
export function processesInPidNs(pidNs: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readlinkSync(`/proc/${e}/ns/pid`) === pidNs && !isZombie(Number(e))) out.push(Number(e));
    } catch {
      /* exited meanwhile, or a zombie */
    }
  }
  return out;
}
