import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import type { Readable } from 'node:stream';
import { INIT_MARKER } from './guest-files.ts';
import { findBinary } from './host-tools.ts';
import { bootArgs } from './qemu-args.ts';
import type { VmImage } from './vm-image.ts';

/**
 * Whether KVM can boot our stock Debian kernel on this host (decisions D16). `/dev/kvm` existing is
 * not enough: some hosts expose a paravirtual KVM that accepts a VM and then never gets a stock
 * kernel to init. So the probe really boots the image with `-accel kvm` and waits for the guest's
 * init to print its marker on the serial console; a real KVM gets there in about a second.
 *
 * On such a host the probe is a core busy for the whole timeout (8 s) at every start, beside a node
 * that is catching up or taking blocks. So the verdict is kept in a file (beside the image) for as
 * long as what decides it stays the same: this boot of the host, its kernel, the qemu binary and the
 * image. It is also cached per process.
 */

export interface KvmProbeResult {
  usable: boolean;
  /** Why not, or how long the guest took to reach init. */
  reason: string;
}

export interface KvmProbeOptions {
  /** How long a guest may take to reach init (default 8 s). */
  timeoutMs?: number;
  /** Where the verdict is kept between starts; none: probe at every start. */
  verdictFile?: string;
  /** The KVM device (tests). */
  device?: string;
}

interface StoredVerdict extends KvmProbeResult {
  key: string;
  /** Unix milliseconds of the probe. */
  probedAt: number;
}

const cache = new Map<string, Promise<KvmProbeResult>>();

export function probeKvm(qemu: string, image: VmImage, opts: KvmProbeOptions = {}): Promise<KvmProbeResult> {
  const device = opts.device ?? '/dev/kvm';
  const key = verdictKey(qemu, image, device);
  let p = cache.get(key);
  if (!p) {
    p = probeOnce(qemu, image, device, key, opts);
    cache.set(key, p);
  }
  return p;
}

/** Forgets the answers cached in this process (tests); the verdict file stays. */
export function clearKvmProbeCache(): void {
  cache.clear();
}

async function probeOnce(
  qemu: string,
  image: VmImage,
  device: string,
  key: string,
  opts: KvmProbeOptions,
): Promise<KvmProbeResult> {
  try {
    accessSync(device, constants.R_OK | constants.W_OK);
  } catch {
    return { usable: false, reason: `${device} missing or not accessible` };
  }
  const kept = opts.verdictFile ? readVerdict(opts.verdictFile, key) : undefined;
  if (kept) {
    const when = new Date(kept.probedAt).toISOString().slice(0, 16).replace('T', ' ');
    return {
      usable: kept.usable,
      reason: `${kept.reason} (probed ${when} UTC, kept while host, qemu and image stay the same)`,
    };
  }
  const { transient, ...r } = await bootToInit(qemu, image, opts.timeoutMs ?? 8000);
  // A timeout is kept: a real KVM reaches init in about a second, far inside it even on a busy host.
  if (opts.verdictFile && !transient) writeVerdict(opts.verdictFile, { ...r, key, probedAt: Date.now() });
  return r;
}

/**
 * What the verdict depends on: the host's boot (KVM's module and its parameters can change only
 * across one) and kernel, the KVM device, the qemu binary (by path, size and change time) and the
 * image's own key.
 */
function verdictKey(qemu: string, image: VmImage, device: string): string {
  const file = (p: string): string => {
    try {
      const s = statSync(p);
      return `${s.size}:${s.mtimeMs}:${s.rdev}`;
    } catch {
      return 'missing';
    }
  };
  const proc = (p: string): string => {
    try {
      return readFileSync(p, 'utf8').trim();
    } catch {
      return '';
    }
  };
  return [
    proc('/proc/sys/kernel/random/boot_id'),
    release(),
    `${device}:${file(device)}`,
    `${qemu}:${file(qemu)}`,
    image.key,
  ].join('|');
}

function readVerdict(path: string, key: string): StoredVerdict | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoredVerdict>;
    if (
      v.key === key &&
      typeof v.usable === 'boolean' &&
      typeof v.reason === 'string' &&
      typeof v.probedAt === 'number'
    ) {
      return v as StoredVerdict;
    }
  } catch {
    /* none kept, or unreadable: probe */
  }
  return undefined;
}

/**
 * Written whole and renamed into place: a reader sees the old verdict or the new one. A folder that
 * cannot be written only costs the next start a probe.
 */
function writeVerdict(path: string, v: StoredVerdict): void {
  try {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(v)}\n`);
    renameSync(tmp, path);
  } catch {
    /* see above */
  }
}

/** `transient`: qemu could not be started at all, which says nothing about the host (not kept). */
type BootOutcome = KvmProbeResult & { transient?: true };

function bootToInit(qemu: string, image: VmImage, timeoutMs: number): Promise<BootOutcome> {
  const args = [
    ...bootArgs({ image, accel: 'kvm', vcpus: 1, memoryMb: 256, probe: true }),
    '-serial',
    'stdio',
  ];
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawnBoundToThisProcess(qemu, args);
    let out = '';
    let err = '';
    let settled = false;
    const finish = (r: BootOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      untrack(child);
      resolve(r);
    };
    const timer = setTimeout(
      () =>
        finish({
          usable: false,
          reason: `a stock kernel under KVM did not reach init within ${timeoutMs} ms`,
        }),
      timeoutMs,
    );
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('latin1');
      if (out.includes(INIT_MARKER)) {
        finish({
          usable: true,
          reason: `guest reached init under KVM in ${Math.round(performance.now() - started)} ms`,
        });
      }
      if (out.length > 1 << 20) out = out.slice(-4096);
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (e) =>
      finish({ usable: false, reason: `qemu could not start: ${e.message}`, transient: true }),
    );
    child.once('exit', (code) =>
      finish({
        usable: false,
        reason: `qemu -accel kvm exited (${code}) before init: ${err.trim().split('\n').slice(-2).join(' ') || 'no message'}`,
      }),
    );
  });
}

type Probe = ChildProcessByStdio<null, Readable, Readable>;

/** Probe guests still booting, killed when this process exits (see spawnBoundToThisProcess). */
const booting = new Set<Probe>();

/**
 * qemu for the probe, never outliving this process: on a host whose KVM cannot boot the kernel, a
 * guest left behind spins forever (6 % of a core each, here). A node stopped or a process ended
 * inside the probe's 8 s left one each (a test run left five). The child is killed when this process
 * exits, and, through setpriv's parent-death signal (util-linux, which the sandbox driver needs too),
 * when it dies without exiting (kill -9, a crash). Without setpriv, or with a qemu that is not there
 * (spawn's own error says so, and is not kept as a verdict), qemu is started as it is.
 */
function spawnBoundToThisProcess(qemu: string, args: string[]): Probe {
  const setpriv = findBinary('setpriv');
  let runnable = false;
  try {
    accessSync(qemu, constants.X_OK);
    runnable = true;
  } catch {
    /* spawn reports it */
  }
  const child =
    setpriv && runnable
      ? spawn(setpriv, ['--pdeathsig', 'KILL', '--', qemu, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(qemu, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (booting.size === 0) process.on('exit', killBooting);
  booting.add(child);
  return child;
}

function untrack(child: Probe): void {
  if (booting.delete(child) && booting.size === 0) process.off('exit', killBooting);
}

function killBooting(): void {
  for (const child of booting) child.kill('SIGKILL');
}
