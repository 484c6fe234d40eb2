import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, truncateSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { availableParallelism, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { base64, sshPublicKeyBlob } from '../protocol/ssh-key.ts';
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
  killLaunch,
  nowNsDigits,
  processRuns,
  launchExited,
  sleep,
  sshAnswers,
  tcpConnect,
} from './host-tools.ts';
import { probeKvm } from './kvm-probe.ts';
import { vmArgs } from './qemu-args.ts';
import {
  checkExecOptions,
  checkSpec,
  makeVmDir,
  readHandle,
  removeDir,
  tail,
  writeHandle,
} from './vm-files.ts';
import { defaultImageDir, findVmImage, type VmImage } from './vm-image.ts';

/**
 * The `qemu` driver (decisions D16): one real VM per lease. QEMU boots the project's image (Debian's
 * kernel, an initramfs with busybox, dropbear and the virtio modules; `npm run vm:image`), with KVM
 * when the host can boot a stock kernel under it (kvm-probe.ts) and software emulation (TCG)
 * otherwise. The lease's access key reaches the guest on the kernel command line and is the only
 * login (root, no passwords). The guest's SSH port is forwarded to a loopback port of the host.
 *
 * Enforced by the VM boundary: `vcpus` (`-smp`, capped at the host's CPUs), `memoryMb` (`-m`, capped
 * at the host's memory less a reserve, and at least the 256 MiB the kernel and initramfs need), and
 * `diskGb` (a sparse raw file of exactly that size, the guest's /dev/vda, unformatted). The guest's
 * network is QEMU's user-mode NAT: it reaches the internet and, through 10.0.2.2, the host's
 * loopback services (the provider's firewalling is outside this driver).
 *
 * `exec` cannot log in over SSH (the provider never holds the consumer's key, and no other login
 * key exists): it talks to a guest agent over a virtio-serial port (guest-files.ts), one command at
 * a time per VM.
 */

export interface QemuDriverOptions {
  /** Folder for the VMs' folders (`<data-dir>/vms`): one folder per lease, named by its hash. */
  rootDir: string;
  /** Where `npm run vm:image` put the image (default: its cache folder). */
  imageDir?: string;
  log?: Logger;
  /** Longest wait for the guest's SSH server after launch (default 90 s: emulation on a busy host). */
  launchTimeoutMs?: number;
  /** Test hook: skip the KVM probe and use this accelerator. */
  accel?: 'kvm' | 'tcg';
}

/** The guest's address on QEMU's user network. */
const GUEST_IP = '10.0.2.15';
/** Below this the kernel and the unpacked initramfs do not fit. */
const MIN_MEMORY_MB = 256;
/** Memory left to the host (the node, other VMs' QEMU overhead). */
const HOST_RESERVE_MB = 512;

export class QemuDriver implements VmDriver {
  readonly name = 'qemu' as const;
  private readonly opts: QemuDriverOptions;
  private report: Promise<DriverReport> | undefined;
  /** One agent request at a time per VM folder. */
  private readonly agentQueue = new Map<string, Promise<unknown>>();

  constructor(opts: QemuDriverOptions) {
    this.opts = opts;
  }

  probe(): Promise<DriverReport> {
    this.report ??= this.doProbe();
    return this.report;
  }

  private async doProbe(): Promise<DriverReport> {
    const base = { driver: this.name, vmBoundary: true } as const;
    const qemu = findBinary('qemu-system-x86_64');
    if (!qemu) {
      return {
        ...base,
        available: false,
        detail: 'qemu-system-x86_64 missing (apt-get install qemu-system-x86)',
      };
    }
    const image = findVmImage(this.opts.imageDir);
    if (!image) {
      return { ...base, available: false, detail: 'no VM image built: run `npm run vm:image`' };
    }
    if (this.opts.accel) {
      return {
        ...base,
        available: true,
        accel: this.opts.accel,
        detail: `qemu with ${this.opts.accel} (set by option)`,
      };
    }
    const kvm = await probeKvm(qemu, image, {
      verdictFile: join(this.opts.imageDir ?? defaultImageDir(), 'kvm-probe.json'),
    });
    if (kvm.usable) return { ...base, available: true, accel: 'kvm', detail: `qemu with KVM: ${kvm.reason}` };
    return {
      ...base,
      available: true,
      accel: 'tcg',
      detail: `qemu with software emulation (TCG), KVM unusable: ${kvm.reason}; a VM boots in seconds, runs slower`,
    };
  }

  private async ready(): Promise<{ qemu: string; image: VmImage; accel: 'kvm' | 'tcg' }> {
    const report = await this.probe();
    const qemu = findBinary('qemu-system-x86_64');
    const image = findVmImage(this.opts.imageDir);
    if (!report.available || !qemu || !image) throw new VmError('driver_unavailable', report.detail);
    return { qemu, image, accel: report.accel ?? 'tcg' };
  }

  async create(
    spec: VmSpec,
    opts: { signal?: AbortSignal; onProgress?: (msg: string) => void } = {},
  ): Promise<VmHandle> {
    checkSpec(spec);
    const { qemu, image, accel } = await this.ready();
    const progress = opts.onProgress ?? (() => {});
    const root = this.opts.rootDir;
    const dir = join(root, spec.lease);
    const stale = readHandle(dir);
    if (stale && processRuns(stale.pid, dir)) {
      throw new VmError('launch_failed', `a VM for lease ${spec.lease} already runs (pid ${stale.pid})`);
    }
    removeDir(dir);
    makeVmDir(root, spec.lease);
    let child: ChildProcess | undefined;
    try {
      const vcpus = Math.min(spec.vcpus, availableParallelism());
      const hostMb = Math.floor(totalmem() / 1048576) - HOST_RESERVE_MB;
      const memoryMb = Math.max(MIN_MEMORY_MB, Math.min(spec.memoryMb, hostMb));
      let disk: string | undefined;
      if (spec.diskGb > 0) {
        disk = join(dir, 'data.raw');
        // Sparse: takes host disk only as the guest writes.
        closeSync(openSync(disk, 'w', 0o600));
        truncateSync(disk, spec.diskGb * 1024 ** 3);
      }
      const sshPort = await freeLoopbackPort();
      const args = vmArgs({
        image,
        accel,
        vcpus,
        memoryMb,
        authorizedKey: base64(sshPublicKeyBlob(spec.accessPubKey)),
        dir,
        sshPort,
        disk,
      });
      const log = openSync(join(dir, 'qemu.log'), 'a', 0o600);
      progress(`booting (${accel === 'kvm' ? 'KVM' : 'software emulation'}, ${vcpus} vCPU, ${memoryMb} MiB)`);
      // Detached: its own process group, so the VM outlives a restart of the node.
      child = spawn(qemu, args, { detached: true, stdio: ['ignore', log, log], cwd: dir });
      closeSync(log);
      child.on('error', () => {});
      child.unref();
      const pid = child.pid;
      if (pid === undefined) throw new VmError('launch_failed', 'qemu did not start');
      const handle: VmHandle = {
        lease: spec.lease,
        driver: this.name,
        dir,
        pid,
        sshPort,
        ip: GUEST_IP,
        createdAt: nowNsDigits(),
        vcpus,
        memoryMb,
        diskGb: spec.diskGb,
      };
      writeHandle(handle);
      const deadline = Date.now() + (this.opts.launchTimeoutMs ?? 90_000);
      const spawnedAt = Date.now();
      for (;;) {
        if (opts.signal?.aborted) throw new VmError('launch_failed', 'launch aborted');
        // Right after spawn the child may not have become qemu yet: that is not an exit.
        if (launchExited(pid, dir, spawnedAt)) {
          throw new VmError(
            'launch_failed',
            `qemu exited: ${tail(join(dir, 'qemu.log'))} ${tail(join(dir, 'console.log'))}`,
          );
        }
        if (await sshAnswers(sshPort, 1000)) break;
        if (Date.now() > deadline) {
          throw new VmError(
            'launch_failed',
            `guest SSH server did not answer: ${tail(join(dir, 'console.log'))}`,
          );
        }
        await sleep(50);
      }
      progress('running');
      return handle;
    } catch (e) {
      this.opts.log?.warn({ lease: spec.lease, err: (e as Error).message }, 'qemu VM launch failed');
      if (child) await killLaunch(child, dir);
      removeDir(dir);
      throw e instanceof VmError ? e : new VmError('launch_failed', (e as Error).message);
    }
  }

  async alive(handle: VmHandle): Promise<boolean> {
    return processRuns(handle.pid, handle.dir) && (await sshAnswers(handle.sshPort));
  }

  async exec(handle: VmHandle, command: string, opts: ExecOptions): Promise<ExecResult> {
    checkExecOptions(opts);
    if (!processRuns(handle.pid, handle.dir))
      throw new VmError('not_running', `VM of ${handle.lease} is not running`);
    // Serialized per VM: the agent answers one request at a time.
    const prev = this.agentQueue.get(handle.dir) ?? Promise.resolve();
    const mine = prev.catch(() => {}).then(() => agentRequest(handle.dir, command, opts));
    this.agentQueue.set(handle.dir, mine);
    try {
      return await mine;
    } finally {
      if (this.agentQueue.get(handle.dir) === mine) this.agentQueue.delete(handle.dir);
    }
  }

  async connect(handle: VmHandle): Promise<Socket> {
    if (!processRuns(handle.pid, handle.dir))
      throw new VmError('not_running', `VM of ${handle.lease} is not running`);
    try {
      return await tcpConnect(handle.sshPort);
    } catch (e) {
      throw new VmError('not_running', `guest SSH port unreachable: ${(e as Error).message}`);
    }
  }

  async destroy(handle: VmHandle): Promise<void> {
    await killGroup(handle.pid, handle.dir);
    this.agentQueue.delete(handle.dir);
    removeDir(handle.dir);
  }
}

/**
 * The agent socket's path as this process can connect to it: a socket path may have at most 107
 * bytes, and `<data-dir>/vms/<64 hex>/agent.sock` can be longer; through the folder's descriptor
 * (`/proc/self/fd/N/...`) it is always short.
 */
function withAgentPath<T>(dir: string, f: (path: string) => Promise<T>): Promise<T> {
  const direct = join(dir, 'agent.sock');
  if (Buffer.byteLength(direct) < 100) return f(direct);
  const fd = openSync(dir, 'r');
  return f(`/proc/self/fd/${fd}/agent.sock`).finally(() => closeSync(fd));
}

/** One request to the guest agent (protocol in guest-files.ts). */
function agentRequest(dir: string, command: string, opts: ExecOptions): Promise<ExecResult> {
  const id = Math.random().toString(16).slice(2, 10).padEnd(8, '0');
  // The guest kills the command a little after the host gives up, so its late answer (ignored by
  // id) never mixes with the next request's.
  const secs = Math.ceil(opts.timeoutMs / 1000) + 1;
  const line = `${id} ${secs} ${opts.maxOutputBytes} ${Buffer.from(command, 'utf8').toString('base64')}\n`;
  return withAgentPath(
    dir,
    (path) =>
      new Promise<ExecResult>((resolve, reject) => {
        const sock = connect({ path });
        let buf = '';
        let done = false;
        const finish = (err: VmError | undefined, r?: ExecResult): void => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          sock.destroy();
          if (err) reject(err);
          else resolve(r!);
        };
        const timer = setTimeout(
          () => finish(new VmError('exec_timeout', `command ran past ${opts.timeoutMs} ms`)),
          opts.timeoutMs,
        );
        sock.once('connect', () => sock.write(line));
        sock.on('data', (d: Buffer) => {
          buf += d.toString('latin1');
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const answer = buf.slice(0, nl).trim().split(' ');
            buf = buf.slice(nl + 1);
            if (answer[0] !== id || answer.length !== 6) continue; // a late answer to an abandoned request
            const [, rc, outBytes, errBytes, out, err] = answer;
            const decode = (b: string | undefined): string =>
              b === '-' || !b ? '' : Buffer.from(b, 'base64').toString('utf8');
            finish(undefined, {
              exit_code: Number(rc),
              stdout: decode(out),
              stderr: decode(err),
              truncated: Number(outBytes) > opts.maxOutputBytes || Number(errBytes) > opts.maxOutputBytes,
            });
          }
        });
        sock.on('error', (e) => finish(new VmError('exec_failed', `guest agent unreachable: ${e.message}`)));
        sock.on('close', () => finish(new VmError('exec_failed', 'guest agent closed the channel')));
      }),
  );
}
