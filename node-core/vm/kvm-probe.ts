import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { INIT_MARKER } from './guest-files.ts';
import { bootArgs } from './qemu-args.ts';
import type { VmImage } from './vm-image.ts';

/**
 * Whether KVM can boot our stock Debian kernel on this host (decisions D16). `/dev/kvm` existing is
 * not enough: some hosts expose a paravirtual KVM that accepts a VM and then never gets a stock
 * kernel to init. So the probe really boots the image with `-accel kvm` and waits for the guest's
 * init to print its marker on the serial console; a real KVM gets there in about a second.
 * The answer is cached per process (per qemu binary and image).
 */

export interface KvmProbeResult {
  usable: boolean;
  /** Why not, or how long the guest took to reach init. */
  reason: string;
}

const cache = new Map<string, Promise<KvmProbeResult>>();

export function probeKvm(qemu: string, image: VmImage, timeoutMs = 8000): Promise<KvmProbeResult> {
  const key = `${qemu}\0${image.key}`;
  let p = cache.get(key);
  if (!p) {
    p = bootToInit(qemu, image, timeoutMs);
    cache.set(key, p);
  }
  return p;
}

/** Forgets cached answers (tests). */
export function clearKvmProbeCache(): void {
  cache.clear();
}

function bootToInit(qemu: string, image: VmImage, timeoutMs: number): Promise<KvmProbeResult> {
  try {
    accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch {
    return Promise.resolve({ usable: false, reason: '/dev/kvm missing or not accessible' });
  }
  const args = [
    ...bootArgs({ image, accel: 'kvm', vcpus: 1, memoryMb: 256, probe: true }),
    '-serial',
    'stdio',
  ];
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(qemu, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let settled = false;
    const finish = (r: KvmProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
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
    child.once('error', (e) => finish({ usable: false, reason: `qemu could not start: ${e.message}` }));
    child.once('exit', (code) =>
      finish({
        usable: false,
        reason: `qemu -accel kvm exited (${code}) before init: ${err.trim().split('\n').slice(-2).join(' ') || 'no message'}`,
      }),
    );
  });
}
