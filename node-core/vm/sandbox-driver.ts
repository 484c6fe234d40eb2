import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { authorizedKeyLine } from '../protocol/ssh-key.ts';
import {
  VmError,
  type DriverReport,
  type ExecOptions,
  type ExecResult,
  type VmDriver,
  type VmHandle,
  type VmSpec,
} from './driver.ts';
import {
  findBinary,
  freeLoopbackPort,
  killGroup,
  killGroupNow,
  killLaunch,
  nowNsDigits,
  processesInPidNs,
  processRuns,
  launchExited,
  run,
  sleep,
  sshAnswers,
  tcpConnect,
} from './host-tools.ts';
import {
  CappedBuffer,
  checkExecOptions,
  checkSpec,
  makeVmDir,
  readHandle,
  removeDir,
  tail,
  writeHandle,
} from './vm-files.ts';

/**
 * The `sandbox` driver (decisions D16): bubblewrap namespaces running dropbear on a loopback port of
 * the host, for development and tests. It has NO VM boundary, and says so in every report.
 *
 * What it isolates: its own pid, mount, IPC, UTS and cgroup namespaces; a root file system made of the
 * host's /usr, /bin, /lib read-only, a private /etc (passwd, group, shells; no shadow), /root and /data
 * from the lease's folder, fresh /tmp, /run, /var; capabilities cut to setuid, setgid, chown, fowner,
 * kill and dac_override (bounding set, so no exec regains more). What it does NOT isolate: the network
 * (it shares the host's: the SSH server must listen on the host's loopback, and the guest reaches
 * every loopback service of the host; dropbear's port forwarding is off, which does not stop a
 * program in the sandbox from connecting), the kernel (one bug away from the host), and resources:
 * `vcpus` is a CPU-affinity mask (the sandbox runs on that many of the host's CPUs; sched_setaffinity
 * inside could widen it), `memoryMb` is NOT enforced (recorded only), and `/data` is a folder whose
 * size `diskGb` is NOT enforced. Use the qemu driver for anything a stranger pays for.
 */

export interface SandboxDriverOptions {
  /** Folder for the VMs' folders (`<data-dir>/vms`): one folder per lease, named by its hash. */
  rootDir: string;
  /** Launch failures and kills are logged here when given. */
  log?: Logger;
  /** Longest wait for the SSH server after launch (default 5 s; it answers in tens of ms). */
  launchTimeoutMs?: number;
}

const CAPS = ['setuid', 'setgid', 'chown', 'fowner', 'kill', 'dac_override'];
const GUEST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

interface Tools {
  bwrap: string;
  dropbear: string;
  dropbearkey: string;
  nsenter: string;
  setpriv: string;
  taskset: string | undefined;
}

export class SandboxDriver implements VmDriver {
  readonly name = 'sandbox' as const;
  private readonly baseDir: string;
  private readonly launchTimeoutMs: number;
  private readonly log: Logger | undefined;
  private report: Promise<DriverReport> | undefined;

  constructor(opts: SandboxDriverOptions) {
    this.baseDir = opts.rootDir;
    this.log = opts.log;
    this.launchTimeoutMs = opts.launchTimeoutMs ?? 5000;
  }

  private tools(): Tools | string {
    const t = {
      bwrap: findBinary('bwrap'),
      dropbear: findBinary('dropbear'),
      dropbearkey: findBinary('dropbearkey'),
      nsenter: findBinary('nsenter'),
      setpriv: findBinary('setpriv'),
      taskset: findBinary('taskset'),
    };
    const missing = Object.entries(t)
      .filter(([k, v]) => v === undefined && k !== 'taskset')
      .map(([k]) => k);
    if (missing.length > 0) {
      return `missing ${missing.join(', ')} (apt-get install bubblewrap dropbear-bin util-linux)`;
    }
    return t as Tools;
  }

  probe(): Promise<DriverReport> {
    this.report ??= this.doProbe();
    return this.report;
  }

  private async doProbe(): Promise<DriverReport> {
    const base = { driver: this.name, vmBoundary: false } as const;
    const tools = this.tools();
    if (typeof tools === 'string')
      return { ...base, available: false, detail: `sandbox unavailable: ${tools}` };
    // Namespaces may be forbidden (a container without CAP_SYS_ADMIN, user namespaces off): try one.
    const r = await run(tools.bwrap, [
      '--unshare-pid',
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--',
      '/bin/true',
    ]);
    if (r.code !== 0) {
      return {
        ...base,
        available: false,
        detail: `sandbox unavailable: bwrap cannot make namespaces: ${r.stderr.trim()}`,
      };
    }
    return {
      ...base,
      available: true,
      detail:
        'sandbox: bubblewrap namespaces with dropbear, NO VM boundary (shares the host kernel and network; ' +
        'vcpus as CPU affinity, memory and disk size not enforced); for development only',
    };
  }

  async create(
    spec: VmSpec,
    opts: { signal?: AbortSignal; onProgress?: (msg: string) => void } = {},
  ): Promise<VmHandle> {
    checkSpec(spec);
    const tools = this.tools();
    if (typeof tools === 'string') throw new VmError('driver_unavailable', tools);
    const progress = opts.onProgress ?? (() => {});
    const dir = join(this.baseDir, spec.lease);
    const stale = readHandle(dir);
    if (stale && processRuns(stale.pid, dir)) {
      throw new VmError('launch_failed', `a sandbox for lease ${spec.lease} already runs (pid ${stale.pid})`);
    }
    removeDir(dir);
    makeVmDir(this.baseDir, spec.lease);
    let child: ChildProcess | undefined;
    try {
      const cores = availableParallelism();
      const vcpus = Math.min(spec.vcpus, cores);
      progress('preparing the sandbox');
      for (const d of ['root/.ssh', 'etc', 'hostkey', 'data'])
        mkdirSync(join(dir, d), { recursive: true, mode: 0o700 });
      writeFileSync(
        join(dir, 'root/.ssh/authorized_keys'),
        authorizedKeyLine(spec.accessPubKey, `lease-${spec.lease.slice(0, 16)}`) + '\n',
        {
          mode: 0o600,
        },
      );
      writeFileSync(join(dir, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
      writeFileSync(join(dir, 'etc/group'), 'root:x:0:\n');
      writeFileSync(join(dir, 'etc/shells'), '/bin/sh\n/usr/bin/sh\n/bin/bash\n/usr/bin/bash\n');
      writeFileSync(join(dir, 'etc/hostname'), 'ledger-sandbox\n');
      const keyFile = join(dir, 'hostkey/dropbear_ed25519_host_key');
      const kg = await run(tools.dropbearkey, ['-t', 'ed25519', '-f', keyFile]);
      if (kg.code !== 0) throw new VmError('launch_failed', `dropbearkey failed: ${kg.stderr.trim()}`);

      const port = await freeLoopbackPort();
      const bwrapArgs = [
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--unshare-cgroup-try',
        // No --die-with-parent: that ties the sandbox to the node process, and a provider restart
        // must keep it. destroy() kills the whole pid namespace instead.
        '--hostname',
        'ledger-sandbox',
        '--ro-bind',
        '/usr',
        '/usr',
        '--ro-bind-try',
        '/bin',
        '/bin',
        '--ro-bind-try',
        '/sbin',
        '/sbin',
        '--ro-bind-try',
        '/lib',
        '/lib',
        '--ro-bind-try',
        '/lib64',
        '/lib64',
        '--tmpfs',
        '/etc',
        ...['passwd', 'group', 'shells', 'hostname'].flatMap((f) => [
          '--ro-bind',
          join(dir, 'etc', f),
          `/etc/${f}`,
        ]),
        ...['resolv.conf', 'ld.so.cache', 'alternatives', 'ssl', 'profile'].flatMap((f) => [
          '--ro-bind-try',
          `/etc/${f}`,
          `/etc/${f}`,
        ]),
        '--ro-bind',
        join(dir, 'hostkey'),
        '/etc/dropbear',
        '--bind',
        join(dir, 'root'),
        '/root',
        '--bind',
        join(dir, 'data'),
        '/data',
        '--tmpfs',
        '/tmp',
        '--tmpfs',
        '/run',
        '--tmpfs',
        '/var',
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--chdir',
        '/root',
        '--setenv',
        'PATH',
        GUEST_PATH,
        '--setenv',
        'HOME',
        '/root',
        '--info-fd',
        '3',
        '--',
        tools.setpriv,
        '--bounding-set',
        ['-all', ...CAPS.map((c) => `+${c}`)].join(','),
        '--inh-caps',
        '-all',
        '--',
        tools.dropbear,
        '-F', // foreground: the namespace lives as long as dropbear
        '-E', // log to stderr (the VM's log file)
        '-s', // no password logins at all: the lease's key is the only way in
        '-j', // no local port forwarding (the sandbox shares the host's network)
        '-k', // no remote port forwarding
        '-p',
        `127.0.0.1:${port}`,
        '-r',
        '/etc/dropbear/dropbear_ed25519_host_key',
      ];
      // vcpus: the sandbox runs on the first `vcpus` CPUs (affinity is inherited by every process).
      const [cmd, args] =
        tools.taskset && vcpus < cores
          ? [tools.taskset, ['-c', `0-${vcpus - 1}`, tools.bwrap, ...bwrapArgs]]
          : [tools.bwrap, bwrapArgs];
      const log = openSync(join(dir, 'sandbox.log'), 'a', 0o600);
      const info = openSync(join(dir, 'info.json'), 'w', 0o600);
      progress('starting bubblewrap');
      // Detached: its own process group, not a child the node waits for, so it outlives a node restart.
      child = spawn(cmd, args, { detached: true, stdio: ['ignore', log, log, info], cwd: dir });
      closeSync(log);
      closeSync(info);
      const pid = child.pid;
      child.on('error', () => {});
      child.unref();
      if (pid === undefined) throw new VmError('launch_failed', `could not start ${cmd}`);
      const handle: VmHandle = {
        lease: spec.lease,
        driver: this.name,
        dir,
        pid,
        sshPort: port,
        ip: '127.0.0.1', // the sandbox shares the host's network namespace
        createdAt: nowNsDigits(),
        vcpus,
        memoryMb: spec.memoryMb,
        diskGb: spec.diskGb,
      };
      writeHandle(handle);
      progress('waiting for the SSH server');
      const deadline = Date.now() + this.launchTimeoutMs;
      const spawnedAt = Date.now();
      for (;;) {
        if (opts.signal?.aborted) throw new VmError('launch_failed', 'launch aborted');
        // Right after spawn the child may not have become bubblewrap yet: that is not an exit.
        if (launchExited(pid, dir, spawnedAt))
          throw new VmError('launch_failed', `sandbox exited: ${tail(join(dir, 'sandbox.log'))}`);
        if (await sshAnswers(port, 500)) break;
        if (Date.now() > deadline)
          throw new VmError('launch_failed', `SSH server did not answer: ${tail(join(dir, 'sandbox.log'))}`);
        await sleep(20);
      }
      progress('running');
      return handle;
    } catch (e) {
      this.log?.warn({ lease: spec.lease, err: (e as Error).message }, 'sandbox launch failed');
      if (child) await killLaunch(child, dir);
      removeDir(dir);
      throw e instanceof VmError ? e : new VmError('launch_failed', (e as Error).message);
    }
  }

  async alive(handle: VmHandle): Promise<boolean> {
    return processRuns(handle.pid, handle.dir) && (await sshAnswers(handle.sshPort));
  }

  /** The pid of the namespace's init (bwrap's child), from bwrap's --info-fd output. */
  private nsPid(handle: VmHandle): number {
    if (!processRuns(handle.pid, handle.dir))
      throw new VmError('not_running', `sandbox of ${handle.lease} is not running`);
    const pid = readInfoPid(handle.dir);
    if (pid !== undefined) return pid;
    throw new VmError('not_running', `sandbox of ${handle.lease} has no namespace pid`);
  }

  async exec(handle: VmHandle, command: string, opts: ExecOptions): Promise<ExecResult> {
    checkExecOptions(opts);
    const tools = this.tools();
    if (typeof tools === 'string') throw new VmError('driver_unavailable', tools);
    const nsPid = this.nsPid(handle);
    const args = [
      '-t',
      String(nsPid),
      '-p',
      '-m',
      '-u',
      '-i',
      '-C',
      '-r',
      '-w', // the sandbox's root and working folder (bwrap pivoted into its own root)
      '--',
      // nsenter runs with the host's full capabilities: cut them to the sandbox's before the command.
      tools.setpriv,
      '--bounding-set',
      ['-all', ...CAPS.map((c) => `+${c}`)].join(','),
      '--inh-caps',
      '-all',
      '--',
      '/bin/sh',
      '-c',
      command,
    ];
    const stdout = new CappedBuffer(opts.maxOutputBytes);
    const stderr = new CappedBuffer(opts.maxOutputBytes);
    return new Promise<ExecResult>((resolve, reject) => {
      const child = spawn(tools.nsenter, args, {
        detached: true, // its own group: a time-out kills the command and what it started
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: GUEST_PATH, HOME: '/root', LANG: 'C.UTF-8' },
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        if (child.pid) killGroupNow(child.pid);
      }, opts.timeoutMs);
      child.stdout.on('data', (d: Buffer) => stdout.push(d));
      child.stderr.on('data', (d: Buffer) => stderr.push(d));
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(new VmError('exec_failed', e.message));
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) {
          reject(new VmError('exec_timeout', `command ran past ${opts.timeoutMs} ms`));
          return;
        }
        resolve({
          exit_code: code ?? 128 + (signal === 'SIGKILL' ? 9 : 15),
          stdout: stdout.text(),
          stderr: stderr.text(),
          truncated: stdout.truncated || stderr.truncated,
        });
      });
    });
  }

  async connect(handle: VmHandle): Promise<Socket> {
    if (!processRuns(handle.pid, handle.dir))
      throw new VmError('not_running', `sandbox of ${handle.lease} is not running`);
    try {
      return await tcpConnect(handle.sshPort);
    } catch (e) {
      throw new VmError('not_running', `sandbox SSH server unreachable: ${(e as Error).message}`);
    }
  }

  async destroy(handle: VmHandle): Promise<void> {
    // SSH sessions run in sessions of their own (setsid), outside bwrap's process group: they die
    // with the namespace's init, but asynchronously. Kill and wait for every process of the namespace
    // so that nothing of the lease is left when destroy resolves.
    // The namespace's init is looked up on its own: it outlives a monitor that died alone.
    let pidNs: string | undefined;
    const init = readInfoPid(handle.dir);
    if (init !== undefined && processRuns(init, handle.dir)) {
      try {
        pidNs = readlinkSync(`/proc/${init}/ns/pid`);
      } catch {
        /* exited meanwhile */
      }
    }
    await killGroup(handle.pid, handle.dir);
    if (pidNs) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const left = processesInPidNs(pidNs);
        if (left.length === 0 || Date.now() > deadline) break;
        for (const p of left) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
        await sleep(20);
      }
    }
    removeDir(handle.dir);
  }
}

/** The namespace init's pid that bwrap wrote on --info-fd. */
function readInfoPid(dir: string): number | undefined {
  try {
    const info = JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')) as { 'child-pid'?: unknown };
    const pid = info['child-pid'];
    return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}
