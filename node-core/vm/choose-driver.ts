import { join } from 'node:path';
import type { Logger } from 'pino';
import type { DriverReport, VmDriver } from './driver.ts';

/**
 * Picks the provider's VM driver (decisions D16, D9): `qemu` when asked, or for 'auto' when its probe
 * finds the image, the binary and an accelerator it can boot with (KVM, or emulation when KVM cannot
 * boot a stock kernel); else the sandbox where allowed (a development network, or told so), which
 * has no VM boundary. Every VM lives under `<dataDir>/vms`.
 */
export type DriverChoice = 'auto' | 'qemu' | 'sandbox';

export interface ChooseDriverOptions {
  dataDir: string;
  imageDir?: string;
  /** Whether the sandbox may run (no VM boundary): a development network, or `--allow-sandbox`. */
  allowSandbox: boolean;
  log?: Logger;
}

export type DriverPick =
  | { driver: VmDriver; report: DriverReport; reason?: undefined }
  | { driver?: undefined; report?: undefined; reason: string };

export async function chooseDriver(choice: DriverChoice, o: ChooseDriverOptions): Promise<DriverPick> {
  const root = join(o.dataDir, 'vms');
  const reasons: string[] = [];
  if (choice === 'qemu' || choice === 'auto') {
    // Loaded on demand: a node that provides nothing never loads a driver.
    const { QemuDriver } = await import('./qemu-driver.ts');
    const qemu = new QemuDriver({ rootDir: root, imageDir: o.imageDir, log: o.log });
    const report = await qemu.probe();
    if (report.available) return { driver: qemu, report };
    reasons.push(`qemu: ${report.detail}`);
    if (choice === 'qemu') return { reason: reasons.join('; ') };
  }
  if (!o.allowSandbox) {
    reasons.push(
      'sandbox: refused on a network that is not a development network (it has no VM boundary; --allow-sandbox permits it)',
    );
    return { reason: reasons.join('; ') };
  }
  const { SandboxDriver } = await import('./sandbox-driver.ts');
  const sandbox = new SandboxDriver({ rootDir: root, log: o.log });
  const report = await sandbox.probe();
  if (report.available) return { driver: sandbox, report };
  reasons.push(`sandbox: ${report.detail}`);
  return { reason: reasons.join('; ') };
}
